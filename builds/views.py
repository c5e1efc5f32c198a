"""Bench pages (/bench/): an assembly partner's builds, scanned into connectors from a phone.

Views stay thin: reads come from builds.selectors, every change is one POST that calls one service and
redirects (POST/redirect/GET). A domain error re-renders the page with the error next to its form, with the
API's status (400 bad input, 404 unknown serial, 409 rule violated), and nothing written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views import View
from django.views.generic import ListView

from builds import gates, selectors, services
from builds.choices import BENCH_OPEN, BuildStepKind, ServerStatus
from builds.drawing import connector_map_svg
from builds.forms import BlacklistForm, MoveForm, RemoveForm, ScanForm, StepForm
from builds.models import Connector, Installation, Server
from builds.panels import server_panels
from builds.proposals import bench_proposals
from builds.steps import data_lines
from inventory.receiving_page import deliveries_to_receive
from werkbank.access import is_pm
from werkbank.errors import DomainError, InvalidInput, RuleViolation, UnknownObject


class BenchMixin(LoginRequiredMixin):
    """Anonymous users log in first; whoever has no bench (customers, outsiders) gets a 404."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        self.check_bench(request, **kwargs)
        return super().dispatch(request, *args, **kwargs)

    def check_bench(self, request: HttpRequest, **kwargs: Any) -> None:
        if not selectors.has_bench(request.user):
            raise Http404("No such page.")


class BenchListView(BenchMixin, ListView):
    """The builds on the user's bench with their progress: searched (`q`), filtered by status, 50 a page.

    One query for the page's rows and one count, whatever the number of servers. A scanned or typed asset
    tag or hostname that names exactly one server on the bench opens it (302).
    """

    template_name = "bench/list.html"
    context_object_name = "servers"
    paginate_by = 50

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        exact = selectors.bench_exact_server(request.user, self.query)
        if exact is not None:
            return HttpResponseRedirect(reverse("bench:server", args=[exact.pk]))
        return super().get(request, *args, **kwargs)

    @property
    def query(self) -> str:
        return self.request.GET.get("q", "").strip()[:100]

    @property
    def status(self) -> str:
        status = self.request.GET.get("status", "")
        return status if status in ServerStatus.values else ""

    def get_queryset(self) -> Any:
        return selectors.bench_servers(self.request.user, q=self.query, status=self.status)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        query = {key: value for key, value in (("q", self.query), ("status", self.status)) if value}
        return super().get_context_data(
            # A PM sees every partner's builds, so the list says whose bench each one is on.
            show_partner=is_pm(self.request.user),
            q=self.query,
            status=self.status,
            statuses=ServerStatus.choices,
            filtered=bool(query),
            page_query=urlencode(query),
            deliveries=deliveries_to_receive(self.request.user),  # one query: POs with lines open
            **kwargs,
        )


class ServerPageMixin(BenchMixin):
    """Renders the server page, optionally with one form bound and its error (used after a failed POST)."""

    server: Server

    def check_bench(self, request: HttpRequest, **kwargs: Any) -> None:
        # The server must be on the user's bench; a customer's or another partner's server is a 404.
        server = selectors.bench_server(request.user, kwargs["pk"])
        if server is None:
            raise Http404(_("No such server on your bench."))
        self.server = server

    def step_forms(self, failed: StepForm | None) -> list[dict[str, Any]]:
        """One form per step kind: the configuration's checklist items first (with whether each is logged),
        then the other kinds; the form that failed is the bound one, shown open."""
        checklist = selectors.checklist_kinds(self.server)
        logged = selectors.logged_step_kinds(self.server)
        kinds = [kind for kind in BuildStepKind.values if kind in checklist] + [
            kind for kind in BuildStepKind.values if kind not in checklist
        ]
        forms_ = []
        for kind in kinds:
            form = failed if failed is not None and failed.kind == kind else StepForm(kind=kind)
            forms_.append(
                {
                    "kind": kind,
                    "form": form,
                    "on_checklist": kind in checklist,
                    "logged": kind in logged,
                    "open": form is failed,
                }
            )
        return forms_

    def page_url(self, **query: str) -> str:
        url = reverse("bench:server", args=[self.server.pk])
        query = {key: value for key, value in query.items() if value}
        return f"{url}?{urlencode(query)}" if query else url

    def render_page(
        self,
        *,
        status: int = 200,
        focus: str = "scan",
        scan_form: ScanForm | None = None,
        keep_serial: bool = False,
        step_form: StepForm | None = None,
        blacklist_form: BlacklistForm | None = None,
        failed_installation: int | None = None,
        remove_form: RemoveForm | None = None,
        move_form: MoveForm | None = None,
        refusal: RuleViolation | None = None,
    ) -> HttpResponse:
        server = self.server
        cells = selectors.connector_map(server)
        free = [cell.name for cell in selectors.free_connectors(cells)]
        if scan_form is None:
            preselect = self.request.GET.get("connector", "")
            scan_form = ScanForm(
                initial={"connector": preselect if preselect in free else ""}, free=free, auto_id="scan_%s"
            )
        step_forms = self.step_forms(step_form)
        if blacklist_form is None:
            blacklist_form = BlacklistForm(
                connectors=[cell.name for cell in cells if cell.state != "blacklisted"],
                free=free,
                auto_id="blacklist_%s",
            )
        installed, installed_error = [], None
        failed_form = remove_form or move_form
        shown = {cell.installation_id for cell in cells if cell.installation_id}
        if failed_form is not None and failed_installation not in shown:
            # The component is no longer installed (or the form was tampered with): say so above the list.
            installed_error = " ".join(" ".join(errors) for errors in failed_form.errors.values())
        for cell in cells:
            if not cell.installation_id:
                continue
            pk = cell.installation_id
            failed = pk == failed_installation
            if failed and failed_form is not None:
                failed_form.fields["reason"].widget.attrs["autofocus"] = True
            installed.append(
                {
                    "cell": cell,
                    "open": failed,
                    "remove_form": remove_form
                    if failed and remove_form is not None
                    else RemoveForm(initial={"installation": pk}, auto_id=f"remove{pk}_%s"),
                    "move_form": move_form
                    if failed and move_form is not None
                    else MoveForm(initial={"installation": pk}, free=free, auto_id=f"move{pk}_%s"),
                }
            )
        # The form that failed takes the focus (and the browser scrolls to it); otherwise the serial does.
        focus_form = {"step": step_form, "blacklist": blacklist_form}.get(focus)
        if focus_form is not None:
            first = next(iter(focus_form.errors), None)
            visible = [field.name for field in focus_form.visible_fields()]
            name = first if first in visible else visible[0]
            focus_form.fields[name].widget.attrs["autofocus"] = True
        scan_value = scan_form["serial"].value() if keep_serial else ""
        # The manufacturer is asked for only when the serial alone was ambiguous (or one was given).
        ask_manufacturer = "manufacturer" in scan_form.errors or bool(scan_form["manufacturer"].value())
        open_bench = selectors.bench_is_open(server)
        context = {
            "server": server,
            "order": server.order,
            "cells": cells,
            "map_svg": mark_safe(  # built with escape() from our own data (builds.drawing)
                connector_map_svg(
                    cells=cells,
                    columns=selectors.layout_columns(server),
                    label=_("Connector map of %(hostname)s") % {"hostname": server.hostname},
                )
            ),
            "counts": {
                state: sum(1 for cell in cells if cell.state == state)
                for state in ("free", "occupied", "blacklisted")
            },
            "free": free,
            "bench_open": open_bench,
            "scan_form": scan_form,
            "scan_serial_value": scan_value or "",
            "scan_focus_connector": focus == "scan-connector",
            "scan_ask_manufacturer": ask_manufacturer,
            "installed": installed,
            "installed_error": installed_error,
            "step_forms": step_forms,
            "blacklist_form": blacklist_form,
            "blacklist": [
                {
                    "entry": entry,
                    "measurements": _measurement_lines(entry.measurements),
                    "photo_url": selectors.photo_download_url(entry.photo_id) if entry.photo_id else "",
                }
                for entry in selectors.blacklist_entries(server)
            ],
            # Flagged connector positions of the layout (issue #29), registered by the apps above.
            "blacklist_proposals": bench_proposals(server, cells),
            "steps": [
                {
                    "step": step,
                    "data": data_lines(step.kind, step.data),
                    "photos": [
                        {"id": photo.pk, "url": selectors.photo_download_url(photo.pk)}
                        for photo in step.photos.all()
                    ],
                }
                for step in selectors.step_entries(server)
            ],
            **_assembly_context(server),
            "refusal": refusal,
            "focus": focus,
            # A PM reaches the order's page (the pipeline's, in the portal app) from here; partners have none.
            "order_page": is_pm(self.request.user),
            # Sections of the apps above builds (burnin's health history), which builds may not import.
            "panels": server_panels(user=self.request.user, server=server),
        }
        return TemplateResponse(self.request, "bench/server.html", context, status=status)


def _measurement_lines(measurements: dict[str, Any]) -> list[str]:
    """Seed 003's figures read as a sentence: "H2D 13.9 GB/s, expected 27.7 GB/s"; other keys as they are."""
    rest = dict(measurements or {})
    lines = []
    if "h2d_gbps" in rest:
        measured = rest.pop("h2d_gbps")
        expected = rest.pop("expected_gbps", None)
        line = _("H2D %(measured)s GB/s") % {"measured": measured}
        if expected is not None:
            line += ", " + _("expected %(expected)s GB/s") % {"expected": expected}
        lines.append(line)
    if "link" in rest:
        lines.append(_("Link trained at %(link)s") % {"link": rest.pop("link")})
    lines += [f"{key}: {value}" for key, value in rest.items()]
    return lines


def _assembly_context(server: Server) -> dict[str, Any]:
    """The server's next step as the PM's pages show it (`builds.gates.next_step`), its buttons, and what
    still stands before "assembled": the blockers of "mark assembled", asked ahead while the build has not
    started (planned, or a failed burn-in back for rework), and the next step's own once it has."""
    step = gates.next_step(server)
    name = step.name if step is not None else None
    if step is not None and name == gates.MARK_ASSEMBLED:
        gaps = step.missing
    elif server.status in BENCH_OPEN:
        gaps = gates.step_missing(name=gates.MARK_ASSEMBLED, servers=[server])[server.pk]
    else:
        gaps = []
    return {
        "next_step": step,
        "gaps": gaps,
        "can_start_assembly": name in (gates.START_ASSEMBLY, gates.START_REWORK),
        "can_mark_assembled": name == gates.MARK_ASSEMBLED,
    }


class BenchServerView(ServerPageMixin, View):
    """The server page: the connector map, the scan form, the step log, the blacklist, the gaps."""

    def get(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self.render_page()


def _show(form: forms.Form, error: DomainError) -> None:
    """Put a service's error next to the field it names, or above the form."""
    field = getattr(error, "field", None)
    if isinstance(error, InvalidInput | UnknownObject) and field in form.fields:
        form.add_error(field, error.field_message)
    else:
        form.add_error(None, error.message)


class _Refused(Exception):
    """Leaves the atomic block (so everything written rolls back), then the page is rendered with these."""

    def __init__(self, **page: Any) -> None:
        super().__init__()
        self.page = page


class BenchActionView(ServerPageMixin, View):
    """One POST per change: validate the form, call the service, redirect, or re-render with the error."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest, pk: int) -> HttpResponse:
        try:
            with transaction.atomic():
                return self.act()
        except _Refused as refused:
            return self.render_page(**refused.page)

    def act(self) -> HttpResponse:
        raise NotImplementedError


def _free(cells: Sequence[selectors.ConnectorCell]) -> list[str]:
    return [cell.name for cell in selectors.free_connectors(cells)]


class InstallView(BenchActionView):
    """POST a scanned serial and a connector: `find_component` then `install`."""

    def act(self) -> HttpResponse:
        cells = selectors.connector_map(self.server)
        form = ScanForm(self.request.POST, free=_free(cells), auto_id="scan_%s")
        # A connector picked on a stale page may be taken by now: accept any name, the service says why not.
        form.fields["connector"].choices = [("", ""), *((cell.name, cell.name) for cell in cells)]
        if not form.is_valid():
            only_connector = "connector" in form.errors and "serial" not in form.errors
            raise _Refused(
                status=400,
                scan_form=form,
                keep_serial=only_connector,
                focus="scan-connector" if only_connector else "scan",
            )
        target = form.cleaned_data["target"]
        try:
            component = services.find_component(
                serial=form.cleaned_data["serial"],
                user=self.request.user,
                manufacturer=form.cleaned_data["manufacturer"],
                connector_kind=next((c.kind for c in cells if c.name.lower() == target.lower()), ""),
            )
            installation = services.server_install(
                server=self.server, actor=self.request.user, component=component, connector_name=target
            )
        except DomainError as error:
            _show(form, error)
            if getattr(error, "field", None) == "manufacturer":
                # The serial alone names several components: keep it, and ask which manufacturer's.
                raise _Refused(
                    status=error.status_code, scan_form=form, keep_serial=True, focus="scan-manufacturer"
                ) from error
            raise _Refused(status=error.status_code, scan_form=form) from error
        name = installation.connector.name
        messages.success(
            self.request,
            _("Installed %(serial)s (%(mpn)s) in %(connector)s.")
            % {"serial": component.serial, "mpn": component.part.mpn, "connector": name},
        )
        after = selectors.next_free_connector(selectors.connector_map(self.server), name)
        return HttpResponseRedirect(self.page_url(connector=after))


class _InstallationActionView(BenchActionView):
    """Remove or move: the form names one of the server's current installations."""

    form_key: str

    def make_form(self) -> forms.Form:
        raise NotImplementedError

    def change(self, form: forms.Form, installation: Installation) -> str:
        raise NotImplementedError

    def act(self) -> HttpResponse:
        form = self.make_form()
        if not form.is_valid():
            raise self.refused(form, 400)
        try:
            message = self.change(form, self.installation(form))
        except DomainError as error:
            _show(form, error)
            raise self.refused(form, error.status_code) from error
        messages.success(self.request, message)
        return HttpResponseRedirect(self.page_url())

    def installation(self, form: forms.Form) -> Installation:
        installation = (
            Installation.objects.visible_to(self.request.user)
            .select_related("component__part", "connector")
            .active()
            .filter(server=self.server, pk=form.cleaned_data["installation"])
            .first()
        )
        if installation is None:
            raise UnknownObject("installation", _("that component is no longer installed in this server."))
        return installation

    def refused(self, form: forms.Form, status: int) -> _Refused:
        failed = form.cleaned_data.get("installation")
        return _Refused(status=status, focus="installed", failed_installation=failed, **{self.form_key: form})


class RemoveView(_InstallationActionView):
    """POST: take a component out of its connector, with a reason."""

    form_key = "remove_form"

    def make_form(self) -> forms.Form:
        pk = self.request.POST.get("installation", "")
        return RemoveForm(self.request.POST, auto_id=f"remove{pk}_%s")

    def change(self, form: forms.Form, installation: Installation) -> str:
        services.server_remove(
            installation=installation,
            actor=self.request.user,
            reason=form.cleaned_data["reason"],
            failed=form.cleaned_data["failed"],
        )
        return _("Removed %(serial)s from %(connector)s.") % {
            "serial": installation.component.serial,
            "connector": installation.connector.name,
        }


class MoveView(_InstallationActionView):
    """POST: move a component to a free connector, with a reason."""

    form_key = "move_form"

    def make_form(self) -> forms.Form:
        pk = self.request.POST.get("installation", "")
        free = _free(selectors.connector_map(self.server))
        return MoveForm(self.request.POST, free=free, auto_id=f"move{pk}_%s")

    def change(self, form: forms.Form, installation: Installation) -> str:
        moved = services.server_move(
            server=self.server,
            actor=self.request.user,
            component=installation.component,
            to_connector_name=form.cleaned_data["to_connector"],
            reason=form.cleaned_data["reason"],
        )
        return _("Moved %(serial)s from %(source)s to %(target)s.") % {
            "serial": installation.component.serial,
            "source": installation.connector.name,
            "target": moved.connector.name,
        }


class StepLogView(BenchActionView):
    """POST: log a build step of one kind with its fields (builds.steps), notes and photos."""

    def act(self) -> HttpResponse:
        kind = self.request.POST.get("kind", "")
        if kind not in BuildStepKind.values:
            form = StepForm(self.request.POST, kind=BuildStepKind.NOTE)
            form.add_error(None, _("Unknown step: choose one of the forms below."))
            raise _Refused(status=400, focus="step", step_form=form)
        form = StepForm(self.request.POST, self.request.FILES, kind=kind)
        if not form.is_valid():
            raise _Refused(status=400, focus="step", step_form=form)
        photos = form.cleaned_data["photos"]
        try:
            step = services.step_log(
                server=self.server,
                actor=self.request.user,
                kind=form.cleaned_data["kind"],
                notes=form.cleaned_data["notes"],
                data=form.step_data(),
                photos=[photo.read() for photo in photos],
            )
        except DomainError as error:
            field = getattr(error, "field", "")
            if isinstance(error, InvalidInput) and field.startswith("data.") and field[5:] in form.fields:
                form.add_error(field[5:], error.field_message)
            else:
                _show(form, error)
            raise _Refused(status=error.status_code, focus="step", step_form=form) from error
        if photos:
            message = ngettext(
                "Logged %(step)s with %(count)d photo.", "Logged %(step)s with %(count)d photos.", len(photos)
            ) % {"step": step.get_kind_display(), "count": len(photos)}
        else:
            message = _("Logged %(step)s.") % {"step": step.get_kind_display()}
        messages.success(self.request, message)
        return HttpResponseRedirect(self.page_url() + "#steps")


class BlacklistView(BenchActionView):
    """POST: blacklist a connector for good (seed 003), moving its component to a target when occupied."""

    def act(self) -> HttpResponse:
        cells = selectors.connector_map(self.server)
        names = [cell.name for cell in cells if cell.state != "blacklisted"]
        form = BlacklistForm(
            self.request.POST, self.request.FILES, connectors=names, free=_free(cells), auto_id="blacklist_%s"
        )
        if not form.is_valid():
            raise _Refused(status=400, focus="blacklist", blacklist_form=form)
        data = form.cleaned_data
        connector = (
            Connector.objects.visible_to(self.request.user)
            .select_related("server")
            .get(server=self.server, name=data["connector"])
        )
        # Only for the message: the service decides under its row lock whether a move is needed.
        occupant = next((cell.serial for cell in cells if cell.name == connector.name), "")
        photo = None
        try:
            if data["photo"]:
                photo = services.photo_upload(
                    server=self.server, actor=self.request.user, data=data["photo"].read()
                )
            services.connector_blacklist(
                connector=connector,
                actor=self.request.user,
                reason=data["reason"],
                evidence=data["evidence"],
                measurements=data["all_measurements"],
                photo=photo,
                target_connector_name=data["target_connector"],
            )
        except DomainError as error:
            # The photo's row rolls back with the page's transaction, and its file is never written.
            if isinstance(error, InvalidInput) and error.field == "to_connector":
                form.add_error("target_connector", error.field_message)
            else:
                _show(form, error)
            raise _Refused(status=error.status_code, focus="blacklist", blacklist_form=form) from error
        message = _("Blacklisted %(connector)s: “%(reason)s”.") % {
            "connector": connector.name,
            "reason": data["reason"],
        }
        if occupant:
            message += " " + _("%(serial)s moved to %(target)s.") % {
                "serial": occupant,
                "target": data["target_connector"],
            }
        messages.success(self.request, message)
        return HttpResponseRedirect(self.page_url() + "#blacklist")


class StartAssemblyView(BenchActionView):
    """POST: planned (or burn-in failed, for rework) → assembling."""

    def act(self) -> HttpResponse:
        self.transition(services.server_start_assembly)
        messages.success(
            self.request, _("Assembly of %(hostname)s started.") % {"hostname": self.server.hostname}
        )
        return HttpResponseRedirect(self.page_url())

    def transition(self, service: Any) -> None:
        try:
            service(server=self.server, actor=self.request.user)
        except DomainError as error:
            refusal = error if isinstance(error, RuleViolation) else RuleViolation(error.message)
            raise _Refused(status=error.status_code, focus="assembled", refusal=refusal) from error


class MarkAssembledView(StartAssemblyView):
    """POST: assembling → assembled; a refusal lists what is missing."""

    def act(self) -> HttpResponse:
        self.transition(services.server_mark_assembled)
        messages.success(self.request, _("%(hostname)s is assembled.") % {"hostname": self.server.hostname})
        return HttpResponseRedirect(self.page_url())
