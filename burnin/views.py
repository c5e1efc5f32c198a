"""Burn-in pages (/burnin/): a server's burn-in, or one run of it, with its stages, findings, the per-GPU
table and the telemetry charts.

Whoever may see the server may see its burn-in: PMs, the server's partner and the order's customer
(`visible_to(user, VIEW)`); anyone else gets a 404. Views stay thin: reads come from burnin.selectors, the
SVG from burnin.charts.

The gate's buttons (pass, fail with a reason, waive a finding with a reason) are POSTs for PMs only: anyone
else gets a 404, as for a page they may not see. Before the click the page lists the pass step's blockers
from the server step registry (`builds.gates`, the step `burnin.gates` registers), the sentences the
service refuses with; a refusal re-renders the page with the service's message and `missing` (409) or the
form's error (400), nothing written; a success redirects (303) with a message.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from builds.choices import ServerStatus
from builds.gates import step_missing
from builds.models import Server
from builds.selectors import has_bench
from burnin import charts, selectors
from burnin.forms import GateNoteForm, GateReasonForm
from burnin.gates import PASS_BURN_IN, RunStanding, run_standings
from burnin.health import health_history, health_panel
from burnin.models import BurnInRun, Finding
from burnin.services.gate import finding_waive, server_fail_burnin, server_pass_burnin
from werkbank.access import is_pm
from werkbank.errors import DomainError, InvalidInput, RuleViolation

#: Points per GPU on the page's charts: about one per pixel column of the 600 px plot area.
PAGE_POINTS = 600


@login_required
def server_burnin(request: HttpRequest, server_id: int) -> HttpResponse:
    """The server's judged burn-in run (the newest on today's hardware), and every run listed. Where no
    run counts, the newest is shown, as stale."""
    server = selectors.visible_server(request.user, server_id)
    if server is None:
        raise Http404("No such server.")
    return _render_server(request, server)


def _render_server(request: HttpRequest, server: Server, **gate: Any) -> HttpResponse:
    runs = selectors.server_runs(server)
    standings = run_standings(server, runs)
    judged = next((each.run for each in standings if each.judged), runs[0] if runs else None)
    return _render(request, server=server, run=judged, runs=runs, standings=standings, **gate)


@login_required
def run_burnin(request: HttpRequest, run_id: int) -> HttpResponse:
    """One run of a server's burn-in, the latest or an earlier one."""
    run = selectors.visible_run(request.user, run_id)
    if run is None:
        raise Http404("No such burn-in run.")
    runs = selectors.server_runs(run.server)
    return _render(request, server=run.server, run=run, runs=runs, standings=run_standings(run.server, runs))


def _render(
    request: HttpRequest,
    *,
    server: Server,
    run: BurnInRun | None,
    runs: list[BurnInRun],
    standings: list[RunStanding],
    status: int = 200,
    **gate: Any,
) -> HttpResponse:
    standing = next((each for each in standings if run is not None and each.run.pk == run.pk), None)
    context: dict[str, Any] = {
        "server": server,
        "order": server.order,
        "run": run,
        "runs": runs,
        "standings": standings,
        "standing": standing,
        "judged": next((each.run for each in standings if each.judged), None),
        "is_pm": is_pm(request.user),
        "show_bench_link": has_bench(request.user),
        # After the handover: every run on a time line, and each GPU against its baseline.
        "health": health_panel(health_history(server)),
        "gate": _gate(request, server, judged=standing is not None and standing.judged, **gate),
    }
    if run is not None:
        detail = selectors.run_detail(run)
        telemetry = selectors.telemetry_series(run=run, max_points=PAGE_POINTS)
        context.update(
            detail=detail,
            telemetry=telemetry,
            throttle_spans=charts.throttle_spans(telemetry),
            # Built with escape() from our own data (burnin.charts).
            temperature_svg=mark_safe(charts.temperature_svg(telemetry)),
            power_svg=mark_safe(charts.power_svg(telemetry, power_limits_w=detail.power_limits_w)),
            clock_svg=mark_safe(charts.clock_svg(telemetry)),
        )
    return TemplateResponse(request, "burnin/server.html", context, status=status)


def _gate(
    request: HttpRequest,
    server: Server,
    *,
    judged: bool,
    refusal: dict[str, Any] | None = None,
    fail_form: forms.Form | None = None,
    waive_form: forms.Form | None = None,
    waive_finding: int | None = None,
) -> dict[str, Any] | None:
    """The gate for a PM (else None): while the server is in burn-in (`open`), the pass step's blockers from
    the registry and the forms (bound after a refusal); and a refusal, whatever the status."""
    in_burn_in = server.status == ServerStatus.BURN_IN
    if not is_pm(request.user) or not (in_burn_in or refusal):
        return None
    return {
        "open": in_burn_in,
        "missing": step_missing(name=PASS_BURN_IN, servers=[server])[server.pk] if in_burn_in else [],
        # Waive buttons only on the run the gate judges: waiving a finding elsewhere changes nothing.
        "waive": in_burn_in and judged,
        "refusal": refusal or {},
        "fail_form": fail_form or GateReasonForm(),
        "waive_form": waive_form,
        "waive_finding": waive_finding,
    }


def _pm_server(request: HttpRequest, server_id: int) -> Server:
    """The server for a PM's gate action; anyone else gets a 404, as for a page they may not see."""
    server = selectors.visible_server(request.user, server_id) if is_pm(request.user) else None
    if server is None:
        raise Http404("No such server.")
    return server


def _refused(
    request: HttpRequest, server: Server, action: str, error: DomainError, **gate: Any
) -> HttpResponse:
    """The page again, nothing written, with the service's refusal beside the button that was clicked."""
    missing = error.missing if isinstance(error, RuleViolation) else []
    refusal = {"action": action, "message": error.message, "missing": missing}
    server.refresh_from_db()
    return _render_server(request, server, status=error.status_code, refusal=refusal, **gate)


def _done(request: HttpRequest, server: Server, message: str) -> HttpResponse:
    messages.success(request, message)
    return HttpResponseRedirect(reverse("burnin:server", args=[server.pk]), status=303)


def _invalid(form: forms.Form) -> InvalidInput:
    field, errors = next(iter(form.errors.items()))
    return InvalidInput(field, " ".join(str(error) for error in errors))


@require_POST
@login_required
def server_pass_view(request: HttpRequest, server_id: int) -> HttpResponse:
    """POST (PMs): burn-in → burn-in passed; a refusal lists every finding that still blocks (409)."""
    server = _pm_server(request, server_id)
    form = GateNoteForm(request.POST)
    try:
        if not form.is_valid():
            raise _invalid(form)
        server_pass_burnin(server=server, actor=request.user, note=form.cleaned_data["note"])
    except DomainError as error:
        return _refused(request, server, "pass", error)
    return _done(request, server, _("%(hostname)s passed burn-in.") % {"hostname": server.hostname})


@require_POST
@login_required
def server_fail_view(request: HttpRequest, server_id: int) -> HttpResponse:
    """POST (PMs): burn-in → burn-in failed with a written reason; the server goes back to its partner."""
    server = _pm_server(request, server_id)
    form = GateReasonForm(request.POST)
    try:
        if not form.is_valid():
            raise _invalid(form)
        server_fail_burnin(server=server, actor=request.user, reason=form.cleaned_data["reason"])
    except DomainError as error:
        return _refused(request, server, "fail", error, fail_form=form)
    return _done(
        request,
        server,
        _("%(hostname)s failed burn-in and goes back to its partner for rework.")
        % {"hostname": server.hostname},
    )


@require_POST
@login_required
def finding_waive_view(request: HttpRequest, finding_id: int) -> HttpResponse:
    """POST (PMs): waive a warn or fail finding with a written reason; a refusal says why not."""
    finding = (
        Finding.objects.visible_to(request.user).select_related("run__server").filter(pk=finding_id).first()
        if is_pm(request.user)
        else None
    )
    if finding is None:
        raise Http404("No such finding.")
    server = finding.run.server
    form = GateReasonForm(request.POST, auto_id=f"waive{finding.pk}_%s")
    try:
        if not form.is_valid():
            raise _invalid(form)
        finding_waive(finding=finding, actor=request.user, reason=form.cleaned_data["reason"])
    except DomainError as error:
        return _refused(request, server, "waive", error, waive_form=form, waive_finding=finding.pk)
    return _done(
        request,
        server,
        _("Finding on %(subject)s waived: “%(reason)s”.")
        % {"subject": finding.subject_text, "reason": form.cleaned_data["reason"]},
    )
