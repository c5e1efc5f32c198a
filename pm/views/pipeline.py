"""The PM's pages under /pm/: the pipeline board with its queues, and one order with its transitions.

PMs only: anonymous visitors go to the login page; partners, customers and anyone else get a 404, as for
an object outside their view. Views are thin: reads come from pm.selectors, and each transition is one POST
that calls the same service as the API and the admin (`orders.services.TRANSITION_SERVICES`). A refused
transition re-renders the order page with the service's sentences and its status (400 bad input, 409 a
rule not met), and nothing is written; a transition that went through redirects back with a message.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from builds.choices import BENCH_OPEN, ServerStatus
from orders.choices import TRANSITION_ACTIONS, OrderStatus
from orders.selectors import approval_checks, latest_assessment
from orders.services import TRANSITION_SERVICES
from pm import selectors as pm
from pm.forms import AssignPartnerForm, transition_form
from pm.views.income import income_context
from werkbank.access import is_pm
from werkbank.choices import label_of
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.services import organization_recipients

#: Server statuses from which the burn-in page has something to show, and the deployment page.
BURNIN_SHOWN = frozenset({"burn_in", "burn_in_failed", "burn_in_passed", "deployed", "handed_over"})
DEPLOYMENT_SHOWN = frozenset({"burn_in_passed", "deployed", "handed_over"})


def pm_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous: the login page. Signed in but not a PM: 404."""

    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_pm(request.user):
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    return wrapped


@pm_required
@require_GET
def pipeline_page(request: HttpRequest) -> HttpResponse:
    """Orders and servers by stage with their counts and what blocks each one's next step, the queues
    of work waiting for a PM, and the servers' health after the handover (open drift, field checks due)."""
    context = {
        "orders": pm.order_board(),
        "servers": pm.server_board(),
        "queues": pm.queues(),
        "field_health": pm.field_health(),
        "column_limit": pm.COLUMN_LIMIT,
    }
    return TemplateResponse(request, "pm/pipeline.html", context)


def order_context(request: HttpRequest, order: Any, *, bound: Any = None) -> dict[str, Any]:
    """Everything the order page shows; `bound` is the (action, form) of a transition that was refused."""
    transitions = []
    for step in pm.order_steps(order):
        action = step.check.action
        form = bound[1] if bound and bound[0] == action else transition_form(action)
        transitions.append({"step": step, "form": form})
    assessment = latest_assessment(order=order)
    servers = pm.order_servers(order)
    packs = pm.server_pack_statuses(servers)
    for server in servers:
        server.newest_pack = packs.get(server.pk)
        server.status_label = label_of(ServerStatus, server.status, server.status)
        server.pm_links = {
            "burnin": server.status in BURNIN_SHOWN,
            "deployment": server.status in DEPLOYMENT_SHOWN,
        }
    events = pm.order_timeline(order)
    for event in events:
        status = event.after.get("status") if isinstance(event.after, dict) else None
        event.status_label = label_of(OrderStatus, status)
    return {
        "order": order,
        "status_label": label_of(OrderStatus, order.status, order.status),
        "transitions": transitions,
        "assessment": assessment,
        "approval": approval_checks(order=order),
        "servers": servers,
        "purchase_orders": pm.order_purchase_orders(order),
        "lots": pm.order_lots(order),
        "income": income_context(order, assessment=assessment, servers=servers),
        "events": events,
        # Status e-mails go to the contact address and the members; nobody at all is worth a warning.
        "customer_recipients": organization_recipients(order.customer),
        # Only while a build can still move: planned, assembling or back for rework.
        "assign_form": AssignPartnerForm(order=order)
        if any(server.status in BENCH_OPEN for server in servers)
        else None,
    }


@pm_required
@require_GET
def order_page(request: HttpRequest, pk: int) -> HttpResponse:
    """One order: its status and next transitions with their checks, the ROI summary, its servers,
    purchase orders, lots and audit timeline."""
    order = pm.pm_order(pk)
    if order is None:
        raise Http404("No such order.")
    return TemplateResponse(request, "pm/order.html", order_context(request, order))


@pm_required
@require_POST
def order_transition(request: HttpRequest, pk: int, action: str) -> HttpResponse:
    """POST: move the order by one transition through its service; a refusal re-renders the page."""
    order = pm.pm_order(pk)
    if order is None or action not in TRANSITION_ACTIONS:
        raise Http404("No such order or transition.")
    form = transition_form(action, request.POST)
    refusal: dict[str, Any] | None = None
    status = 400
    if form.is_valid():
        try:
            TRANSITION_SERVICES[action](order=order, actor=request.user, **form.cleaned_data)
        except RuleViolation as error:
            refusal = {"action": action, "message": error.message, "missing": error.missing}
            status = 409
        except InvalidInput as error:
            form.add_error(error.field if error.field in form.fields else None, error.field_message)
        else:
            label = pm.ACTION_LABELS[action]
            messages.success(
                request,
                _("%(action)s: order %(reference)s is now %(status)s.")
                % {
                    "action": label,
                    "reference": order.reference,
                    "status": label_of(OrderStatus, TRANSITION_ACTIONS[action]),
                },
            )
            return HttpResponseRedirect(reverse("pm:order", args=[order.pk]), status=303)
    # Nothing was written (every service is atomic): the page as it is, with the refusal beside its button.
    order = pm.pm_order(pk)
    context = order_context(request, order, bound=(action, form))
    context["refusal"] = refusal
    context["refused_action"] = action
    return TemplateResponse(request, "pm/order.html", context, status=status)
