"""Portal reads that span the apps below, for a customer member (portal/customer.py has the rule).

Every read starts from `visible_to(user, purpose="view")` of the app that owns the rows, narrowed to the
customer organizations the user belongs to. Rows a customer never receives through `visible_to` (the bench's
installations and blacklist) are read only for a server that came through it, and only the fields the rule
allows leave this module. Each function runs a fixed number of queries, however many rows there are.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Count, QuerySet

from builds.models import ConnectorBlacklist, Installation, Server
from burnin import charts as burnin_charts
from burnin import selectors as burnin_selectors
from burnin.gates import burn_in_runs, counting_runs, run_verdict
from burnin.hardware import last_gpu_change
from deployment.models import RackPlacement
from orders import charts as order_charts
from orders import selectors as order_selectors
from orders.models import Order, Workload
from werkbank.access import Purpose, is_pm
from werkbank.audiences import Audience
from werkbank.choices import OrganizationKind
from werkbank.models import AuditEvent, member_organizations
from werkbank.types import Actor

#: Points per GPU of the server page's temperature chart (about one per pixel of its plot area).
CHART_POINTS = 600


def customer_organizations(user: Actor) -> QuerySet:
    """The ids of the customer organizations the user belongs to (a lazy subquery)."""
    return member_organizations(user, kind=OrganizationKind.CUSTOMER)


def is_customer_member(user: Actor) -> bool:
    """Whether the portal is the user's: a member of a customer organization who is not a PM (one query)."""
    if not getattr(user, "is_authenticated", False) or is_pm(user):
        return False
    return customer_organizations(user).exists()


def customer_orders(user: Actor) -> QuerySet[Order]:
    """The user's customers' orders, newest first (by primary key, an index of the table's own)."""
    return (
        Order.objects.visible_to(user, purpose=Purpose.VIEW)
        .filter(customer__in=customer_organizations(user))
        .select_related("configuration")
        .order_by("-pk")
    )


def customer_order(user: Actor, pk: int) -> Order | None:
    """One of the user's customers' orders, or None (a 404)."""
    return customer_orders(user).filter(pk=pk).first()


def customer_servers(user: Actor) -> QuerySet[Server]:
    """The servers of the user's customers' orders."""
    return (
        Server.objects.visible_to(user, purpose=Purpose.VIEW)
        .filter(order__customer__in=customer_organizations(user))
        .select_related("order")
    )


def customer_server(user: Actor, pk: int) -> Server | None:
    """One server of the user's customers' orders, or None (a 404)."""
    return customer_servers(user).filter(pk=pk).first()


def servers_by_stage(order_ids: list[int]) -> dict[int, dict[str, int]]:
    """For each order, how many of its servers are at each stage (one query for a whole page of orders)."""
    counts: dict[int, dict[str, int]] = defaultdict(dict)
    rows = (
        Server.objects.filter(order_id__in=order_ids)
        .order_by()
        .values_list("order_id", "status")
        .annotate(n=Count("pk"))
    )
    for order_id, status, n in rows:
        counts[order_id][status] = n
    return counts


def last_changes(order_ids: list[int]) -> dict[int, Any]:
    """For each order, when its customer-facing timeline last moved, from the audit events (one query)."""
    if not order_ids:
        return {}
    from django.contrib.contenttypes.models import ContentType
    from django.db.models import Max

    rows = (
        AuditEvent.objects.filter(
            content_type=ContentType.objects.get_for_model(Order),
            object_id__in=[str(pk) for pk in order_ids],
        )
        .order_by()
        .values_list("object_id")
        .annotate(last=Max("created_at"))
    )
    return {int(object_id): last for object_id, last in rows}


def order_timeline(order: Order) -> list[AuditEvent]:
    """The order's events a customer receives (werkbank.audiences.CUSTOMER_ORDER_VERBS), oldest first."""
    return list(
        order_selectors.order_events(order=order, audiences=frozenset({Audience.CUSTOMER})).order_by(
            "created_at", "pk"
        )
    )


def business_case(order: Order) -> dict[str, Any] | None:
    """The ROI assessment that counts (the latest version) with the numbers a customer reads, and the
    cumulative cash-flow chart of the orders app; None without an assessment."""
    assessment = order_selectors.latest_assessment(order=order)
    if assessment is None:
        return None
    result = order_selectors.assessment_result(assessment=assessment)
    chart = order_charts.cashflow_svg(
        cashflows=result.cashflows, breakeven_month=result.breakeven_month, currency=assessment.currency
    )
    return {"assessment": assessment, "breakeven_month": result.breakeven_month, "chart": chart}


def workload_sizing(order: Order) -> dict[str, Any] | None:
    """The order's workload and its VRAM sizing on the configuration's GPUs; None without a workload."""
    workload = Workload.objects.filter(order=order).first()
    if workload is None:
        return None
    sizing = order_selectors.order_sizing(order=order)
    _, vram_gb = order_selectors.configuration_gpus(order=order)
    return {"workload": workload, "sizing": sizing, "gpu_vram_gb": vram_gb}


def power_budget(order: Order) -> Any:
    """The power budget of one server of the order (orders.formulas.PowerResult)."""
    return order_selectors.order_power_budget(order=order)


def installed_slots(server: Server) -> list[Installation]:
    """What is installed in the server now, slot by slot in the chassis' order (one query)."""
    return list(
        Installation.objects.active()
        .filter(server=server)
        .select_related("connector", "component__part")
        .order_by("connector__position", "pk")
    )


def blacklisted_connectors(server: Server) -> list[ConnectorBlacklist]:
    """The server's blacklisted connectors, in the chassis' order (one query)."""
    return list(
        ConnectorBlacklist.objects.filter(connector__server=server)
        .select_related("connector")
        .order_by("connector__position")
    )


def latest_burnin(server: Server) -> dict[str, Any] | None:
    """The server's judged burn-in run (`burnin.services.gate.judged_run`, as the gate and the pack name
    it): its verdict, findings (worst first), unfinished stages and the temperature chart of the burnin
    app; None before any run. Where every run is stale (a GPU was replaced since, as under warranty), the
    newest is returned as `stale`, with the change: never as the machine's result."""
    change = last_gpu_change(server)
    run = counting_runs(server, change).first()
    stale = run is None
    if stale:
        run = burn_in_runs().filter(server=server).order_by("-id").first()
    if run is None:
        return None
    detail = burnin_selectors.run_detail(run)
    telemetry = burnin_selectors.telemetry_series(run=run, max_points=CHART_POINTS)
    return {
        "run": run,
        "verdict": "stale" if stale else run_verdict(server, run),
        "stale_because": change.sentence() if stale and change is not None else "",
        # Worst first, as the burn-in page lists them.
        "findings": [finding for _, _, group in detail.findings_by_severity for finding in group],
        "incomplete_stages": detail.incomplete_stages,
        "chart": burnin_charts.temperature_svg(telemetry),
    }


def server_placement(server: Server) -> RackPlacement | None:
    """Where the server stands: its rack placement with rack and site (one query), or None."""
    return RackPlacement.objects.select_related("rack__site").filter(server=server).first()
