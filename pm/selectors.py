"""Reads of the PM's pages (/pm/): the pipeline board, its queues, and the order page.

The pages span every app, so they read here, in the top layer, through each app's own selectors and the two
registries the apps fill: what blocks an order is `orders.selectors.transition_checks_many` (the orders
app's own checks and every gate the apps registered), what blocks a server is `builds.gates.next_steps` (the
step each app registered for a server's status, with its bulk "what is missing"). No rule is written twice.
Every function runs a fixed number of queries, however many orders and servers there are: the board shows
at most `COLUMN_LIMIT` items per column and asks the bulk forms about all of them at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Count, Exists, F, Max, OuterRef, Q, QuerySet, Subquery, Sum
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from builds.choices import ServerStatus
from builds.gates import next_steps
from builds.models import Server
from burnin.analysis.drift import DRIFT_PREFIX
from burnin.choices import COMPARED_PURPOSES, ReportPurpose, Severity
from burnin.gates import STAGE_INCOMPLETE, judged_runs
from burnin.health import max_age_days
from burnin.models import BurnInRun, Finding
from inventory.models import BatchLot, PurchaseOrder
from orders.choices import OrderStatus
from orders.models import Order
from orders.selectors import TransitionCheck, order_events, transition_checks_many
from warranty.choices import CLAIM_OPEN
from warranty.models import HandoverPack, WarrantyClaim, WarrantyRecord
from werkbank.audiences import Audience
from werkbank.choices import label_of
from werkbank.models import AuditEvent

#: Items shown per column of the board; the column says how many more there are.
COLUMN_LIMIT = 12
#: Items listed per queue; the queue's count says how many there are in all.
QUEUE_LIMIT = 10
#: Warranties ending within this many days are a queue of their own (the 90-day expiry notice).
EXPIRY_DAYS = 90

#: The order columns of the board, in the lifecycle's order; closed, rejected and cancelled orders are
#: counted below the board only.
ORDER_COLUMNS: tuple[str, ...] = (
    OrderStatus.DRAFT,
    OrderStatus.ROI_REVIEW,
    OrderStatus.APPROVED,
    OrderStatus.PROCUREMENT,
    OrderStatus.ASSEMBLY,
    OrderStatus.BURN_IN,
    OrderStatus.DEPLOYMENT,
    OrderStatus.HANDED_OVER,
)
ORDER_DONE: tuple[str, ...] = (OrderStatus.CLOSED, OrderStatus.REJECTED, OrderStatus.CANCELLED)

#: The server columns of the board; handed-over servers are counted below the board only.
SERVER_COLUMNS: tuple[str, ...] = (
    ServerStatus.PLANNED,
    ServerStatus.ASSEMBLING,
    ServerStatus.ASSEMBLED,
    ServerStatus.BURN_IN,
    ServerStatus.BURN_IN_FAILED,
    ServerStatus.BURN_IN_PASSED,
    ServerStatus.DEPLOYED,
)

#: The transitions of an order as buttons say them.
ACTION_LABELS: dict[str, Any] = {
    "submit": _("Submit for ROI review"),
    "approve": _("Approve"),
    "reject": _("Reject"),
    "procure": _("Start procurement"),
    "start_assembly": _("Start assembly"),
    "start_burn_in": _("Start burn-in"),
    "start_deployment": _("Start deployment"),
    "hand_over": _("Hand over"),
    "close": _("Close"),
    "cancel": _("Cancel order"),
}
#: Transitions that leave the main line; the board leaves them out (the order page offers them).
SIDE_ACTIONS = frozenset({"reject", "cancel"})


@dataclass
class Column:
    """One stage of the board: its status, how many items it holds in all, and the first of them."""

    status: str
    label: Any
    count: int
    items: list[Any]

    @property
    def more(self) -> int:
        return max(self.count - len(self.items), 0)


@dataclass(frozen=True)
class Step:
    """One transition of an order as the board and the order page show it: its label and its check."""

    label: Any
    check: TransitionCheck


def _counts(queryset: QuerySet) -> dict[str, int]:
    return dict(queryset.order_by().values_list("status").annotate(n=Count("pk")))


def order_board() -> dict[str, Any]:
    """The orders by stage: a column per open status with its count and its first orders, each with its
    transitions and what blocks them; the closed, rejected and cancelled orders as counts."""
    counts = _counts(Order.objects.all())
    columns = []
    shown: list[Order] = []
    for status in ORDER_COLUMNS:
        items = []
        if counts.get(status):
            items = list(
                Order.objects.filter(status=status)
                .select_related("customer", "configuration")
                .order_by("pk")[:COLUMN_LIMIT]
            )
        shown += items
        columns.append(
            Column(
                status=status, label=label_of(OrderStatus, status), count=counts.get(status, 0), items=items
            )
        )
    checks = transition_checks_many(orders=shown)
    for order in shown:
        order.pm_steps = [  # type: ignore[attr-defined]  # read by the board's template
            Step(label=ACTION_LABELS[check.action], check=check)
            for check in checks[order.pk]
            if check.action not in SIDE_ACTIONS
        ]
    return {
        "columns": columns,
        "done": [(label_of(OrderStatus, status), counts.get(status, 0)) for status in ORDER_DONE],
        "total": sum(counts.values()),
    }


def server_board() -> dict[str, Any]:
    """The servers by stage: a column per status before the handover, each with its first servers, their
    order and partner, and their next step with what blocks it."""
    counts = _counts(Server.objects.all())
    columns = []
    shown: list[Server] = []
    for status in SERVER_COLUMNS:
        items = []
        if counts.get(status):
            items = list(
                Server.objects.filter(status=status)
                .select_related("order", "partner")
                .order_by("order_id", "sequence")[:COLUMN_LIMIT]
            )
        shown += items
        columns.append(
            Column(
                status=status, label=label_of(ServerStatus, status), count=counts.get(status, 0), items=items
            )
        )
    steps = next_steps(shown)
    for server in shown:
        server.pm_step = steps.get(server.pk)  # type: ignore[attr-defined]  # read by the templates
    return {
        "columns": columns,
        "handed_over": counts.get(ServerStatus.HANDED_OVER, 0),
        "total": sum(counts.values()),
    }


@dataclass
class Queue:
    """Work waiting for a PM: how many items, and the first of them."""

    key: str
    count: int
    items: list[Any]

    @property
    def more(self) -> int:
        return max(self.count - len(self.items), 0)


def _queue(key: str, queryset: QuerySet) -> Queue | None:
    items = list(queryset[:QUEUE_LIMIT])
    if not items:
        return None
    # Counted whether or not the page is full: the page's queries must not depend on how many rows wait.
    return Queue(key=key, count=queryset.count(), items=items)


def queues(*, today: date | None = None) -> list[Queue]:
    """The PM's queues that hold something: ROI reviews, `fail` findings awaiting a waiver, interrupted
    burn-in stages awaiting a decision (on servers in burn-in), open warranty claims, and warranties that
    end within `EXPIRY_DAYS` days."""
    today = today or timezone.localdate()
    # Only the judged runs' findings wait for a decision: an earlier or a stale run's are history.
    in_burn_in = list(Server.objects.filter(status=ServerStatus.BURN_IN).only("pk"))
    judged = [run.pk for run in judged_runs(in_burn_in).values()]
    undecided = Finding.objects.filter(waived_at__isnull=True, run_id__in=judged).select_related(
        "run__server"
    )
    found = [
        _queue(
            "roi_review",
            Order.objects.filter(status=OrderStatus.ROI_REVIEW).select_related("customer").order_by("pk"),
        ),
        _queue(
            "findings",
            undecided.filter(severity=Severity.FAIL)
            .exclude(code=STAGE_INCOMPLETE)
            .order_by("run__server", "pk"),
        ),
        _queue("stages", undecided.filter(code=STAGE_INCOMPLETE).order_by("run__server", "pk")),
        _queue(
            "claims",
            WarrantyClaim.objects.filter(status__in=CLAIM_OPEN)
            .select_related("record", "customer")
            .order_by("created_at", "pk"),
        ),
        _queue(
            "expiring",
            WarrantyRecord.objects.filter(
                end_date__gte=today,
                end_date__lte=today + timedelta(days=EXPIRY_DAYS),
                replaced_at__isnull=True,
            )
            .select_related("server", "customer")
            .order_by("end_date", "pk"),
        ),
    ]
    return [queue for queue in found if queue is not None]


# --- health after the handover ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DriftServer:
    """A server whose newest field check or post-repair run has unwaived drift faults, with them."""

    server: Server
    run: BurnInRun
    findings: list[Finding]


@dataclass(frozen=True)
class DueServer:
    """A handed-over server whose last field check is older than the schedule, or that never had one."""

    server: Server
    last_field_check_at: datetime | None
    days_since: int | None


@dataclass(frozen=True)
class FieldHealth:
    """The pipeline's "Health after handover": open drift and field checks due, each with its full count
    and its first `QUEUE_LIMIT` servers."""

    drift: list[DriftServer]
    drift_count: int
    due: list[DueServer]
    due_count: int
    max_age_days: int

    @property
    def drift_more(self) -> int:
        return max(self.drift_count - len(self.drift), 0)

    @property
    def due_more(self) -> int:
        return max(self.due_count - len(self.due), 0)


#: A drift fault no PM has waived: what keeps a server on the "open drift" list.
OPEN_DRIFT = Q(code__startswith=DRIFT_PREFIX, severity=Severity.FAIL, waived_at__isnull=True)


def _open_drift(run: Any) -> Exists:
    return Exists(Finding.objects.filter(OPEN_DRIFT, run=run))


def field_health(*, now: datetime | None = None) -> FieldHealth:
    """Servers with open drift (the newest field check or post-repair run of the server has an unwaived
    drift `fail`: a later healthy run closes it) and handed-over servers whose last field check started more
    than `WERKBANK_FIELD_CHECK_MAX_AGE_DAYS` ago, or that never had one, the oldest first. Five queries,
    however many servers there are."""
    now = now or timezone.now()
    days = max_age_days()
    newest = (
        BurnInRun.objects.filter(server=OuterRef("server"), purpose__in=COMPARED_PURPOSES)
        .order_by("-started_at", "-id")
        .values("id")[:1]
    )
    drifting = (
        BurnInRun.objects.filter(purpose__in=COMPARED_PURPOSES, id=Subquery(newest))
        .filter(_open_drift(OuterRef("pk")))
        .select_related("server__order")
        .defer("report")
        .order_by("-started_at", "-id")
    )
    runs = list(drifting[:QUEUE_LIMIT])
    by_run: dict[int, list[Finding]] = {run.pk: [] for run in runs}
    if runs:
        for finding in Finding.objects.filter(OPEN_DRIFT, run_id__in=list(by_run)).order_by(
            "run_id", "gpu_index", "pk"
        ):
            by_run[finding.run_id].append(finding)
    cutoff = now - timedelta(days=days)
    due = (
        Server.objects.filter(status=ServerStatus.HANDED_OVER)
        .annotate(
            last_field=Max(
                "burnin_runs__started_at", filter=Q(burnin_runs__purpose=ReportPurpose.FIELD_CHECK)
            )
        )
        .filter(Q(last_field__isnull=True) | Q(last_field__lt=cutoff))
        .select_related("order")
        .order_by(F("last_field").asc(nulls_first=True), "pk")
    )
    due_servers = list(due[:QUEUE_LIMIT])
    return FieldHealth(
        drift=[DriftServer(server=run.server, run=run, findings=by_run[run.pk]) for run in runs],
        # Counted whether or not the list is full, as the queues are: the queries do not depend on the rows.
        drift_count=drifting.count(),
        due=[
            DueServer(
                server=server,
                last_field_check_at=server.last_field,  # the annotation
                days_since=None if server.last_field is None else (now - server.last_field).days,
            )
            for server in due_servers
        ],
        due_count=due.count(),
        max_age_days=days,
    )


# --- the order page --------------------------------------------------------------------------------------


def pm_order(pk: int) -> Order | None:
    """One order with its customer and configuration, or None (a 404). PMs see every order."""
    return Order.objects.select_related("customer", "configuration").filter(pk=pk).first()


def order_steps(order: Order) -> list[Step]:
    """The transitions the order's status allows, each with what blocks it (the checks the services apply)."""
    return [
        Step(label=ACTION_LABELS[check.action], check=check)
        for check in transition_checks_many(orders=[order])[order.pk]
    ]


def order_servers(order: Order) -> list[Server]:
    """The order's servers in their sequence, with partner and next step (`pm_step`)."""
    servers = list(Server.objects.filter(order=order).select_related("order", "partner").order_by("sequence"))
    steps = next_steps(servers)
    for server in servers:
        server.pm_step = steps.get(server.pk)  # type: ignore[attr-defined]  # read by the templates
    return servers


def server_pack_statuses(servers: list[Server]) -> dict[int, HandoverPack]:
    """Each server's newest handover pack (any language, any status), in one query: the order page shows
    whether the handover's pack is ready, and whether the dated revision after it is."""
    newest: dict[int, HandoverPack] = {}
    packs = HandoverPack.objects.filter(server_id__in=[server.pk for server in servers]).order_by(
        "server_id", "-revision"
    )
    for pack in packs.only("pk", "server_id", "revision", "status", "language"):
        newest.setdefault(pack.server_id, pack)
    return newest


def order_purchase_orders(order: Order) -> list[PurchaseOrder]:
    """The purchase orders that serve the order, with their supplier and how much of them was received."""
    return list(
        PurchaseOrder.objects.filter(order_link__order=order)
        .select_related("supplier")
        .annotate(ordered=Sum("lines__quantity"), received=Sum("lines__quantity_received"))
        .order_by("pk")
    )


def order_lots(order: Order) -> list[BatchLot]:
    """The batch lots of the components set aside for the order's servers, with how many of each."""
    return list(
        BatchLot.objects.filter(components__allocations__server__order=order)
        .select_related("part", "supplier")
        # Counted over the join the filter made: only this order's allocations.
        .annotate(used=Count("components__allocations"))
        .order_by("part__category", "lot_code")
    )


def order_timeline(order: Order) -> list[AuditEvent]:
    """Every event of the order, newest first (a PM receives them all, notes included)."""
    return list(order_events(order=order, audiences=frozenset({Audience.PM})).order_by("-created_at", "-pk"))
