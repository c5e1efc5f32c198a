"""The PM's server steps on the order page (issue #24): give the builds to a partner, ask for a server's
handover pack, hand a server over. Each is one POST through the same service as the API and the admin;
a refusal re-renders the order page with the service's sentences (400 bad input, 409 a rule not met) and
nothing written, success redirects back (to the order page, or to the server page it came from).
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from builds.models import Server
from builds.services import order_assign_partner
from pm import selectors as pm
from pm.forms import AssignPartnerForm, ServerNoteForm
from pm.views.pipeline import order_context, pm_required
from warranty.services import pack_request, server_hand_over
from werkbank.errors import InvalidInput, RuleViolation


def _back(request: HttpRequest, order_pk: int) -> HttpResponseRedirect:
    """Back where the form was (a server page of this site), else to the order page; 303 after a POST."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("pm:order", args=[order_pk])
    return HttpResponseRedirect(target, status=303)


def _refused(
    request: HttpRequest, order_pk: int, *, message: str, missing: list[str], status: int
) -> HttpResponse:
    """The order page as it is (every service is atomic: nothing was written), with the refusal on top."""
    context = order_context(request, pm.pm_order(order_pk))
    context["server_refusal"] = {"message": message, "missing": missing}
    return TemplateResponse(request, "pm/order.html", context, status=status)


def _run(request: HttpRequest, order_pk: int, act: Callable[[], str]) -> HttpResponse:
    try:
        done = act()
    except RuleViolation as error:
        return _refused(request, order_pk, message=error.message, missing=list(error.missing), status=409)
    except InvalidInput as error:
        return _refused(
            request, order_pk, message=f"{error.field}: {error.field_message}", missing=[], status=400
        )
    messages.success(request, done)
    return _back(request, order_pk)


def _server(pk: int) -> Server:
    server = Server.objects.select_related("order__customer").filter(pk=pk).first()
    if server is None:
        raise Http404("No such server.")
    return server


@pm_required
@require_POST
def order_assign(request: HttpRequest, pk: int) -> HttpResponse:
    """POST: give the order's open builds (or one server of it) to an assembly partner."""
    order = pm.pm_order(pk)
    if order is None:
        raise Http404("No such order.")
    form = AssignPartnerForm(request.POST, order=order)
    if not form.is_valid():
        errors = [f"{field}: {' '.join(str(text) for text in texts)}" for field, texts in form.errors.items()]
        return _refused(request, pk, message=_("The assignment was not saved."), missing=errors, status=400)

    def act() -> str:
        partner = form.cleaned_data["partner"]
        server = form.cleaned_data.get("server")
        moved = order_assign_partner(
            order=order, actor=request.user, partner=partner, servers=[server] if server else None
        )
        return _("%(partner)s now builds %(servers)s; its members were e-mailed.") % {
            "partner": partner.name,
            "servers": ", ".join(server.hostname for server in moved),
        }

    return _run(request, pk, act)


@pm_required
@require_POST
def server_pack(request: HttpRequest, pk: int) -> HttpResponse:
    """POST: ask for the server's handover pack (a new revision in the customer's language)."""
    server = _server(pk)

    def act() -> str:
        pack, created = pack_request(server=server, actor=request.user)
        if created:
            return _("Handover pack r%(revision)d of %(hostname)s is queued.") % {
                "revision": pack.revision,
                "hostname": server.hostname,
            }
        return _("Handover pack r%(revision)d of %(hostname)s is already being made.") % {
            "revision": pack.revision,
            "hostname": server.hostname,
        }

    return _run(request, server.order_id, act)


@pm_required
@require_POST
def server_hand_over_view(request: HttpRequest, pk: int) -> HttpResponse:
    """POST: deployed → handed over; the warranty records and the dated pack revision follow by task."""
    server = _server(pk)
    form = ServerNoteForm(request.POST)
    form.is_valid()
    note: str = form.cleaned_data.get("note", "")

    def act() -> str:
        server_hand_over(server=server, actor=request.user, note=note)
        return _(
            "%(hostname)s is handed over: its warranty records and the pack revision that prints their dates "
            "are being made."
        ) % {"hostname": server.hostname}

    return _run(request, server.order_id, act)
