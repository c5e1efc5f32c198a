"""The scale dataset (issue #15): a fleet of thousands of servers, written in minutes, the same on every run.

`manage.py seed_scale` calls `seed()`. The rows are shaped as the services write them, without calling
the services (which lock, audit and check one object at a time: hours at this size):

- organizations: customers (one per 40 orders) and five assembly partners, each with one member login,
  and one PM login;
- a small catalogue: three EU suppliers, a GPU, a CPU and a chassis whose layout has 53 connectors, and one
  eight-GPU configuration (8 GPUs + 2 CPUs per server);
- orders across every status, older orders further along; orders from procurement on have their servers
  (each with the layout's 53 connectors, assigned round-robin to the partners) and one purchase order
  delivered to that partner's workshop, with a GPU line and a CPU line, each received as one lot;
- components, ten per server while the component budget lasts (the rest in the warehouse, on a PO of its
  own), with their status following the server's: in stock while it is planned, allocated while it is
  being assembled (half the GPUs already installed), installed from assembled on; every change has its
  stock movement (receipt, allocation, installation), every allocation and installation its row;
- burn-in runs for servers past burn-in (pass, or fail for those in rework), with stages, per-GPU results
  linked to the installed GPUs, and telemetry samples at 10 s (the sample budget spread over the runs);
- audit events for every order transition, every server's creation and status changes, and every
  allocation.

Determinism: one `random.Random(seed)` and fixed timestamps (from `EPOCH`); primary keys continue from the
tables' current maximum, so on an empty database every run writes the same rows (`digest()` proves it).

Speed: PostgreSQL gets `COPY … FROM STDIN` through psycopg 3's `cursor.copy`; SQLite `executemany`. Both
bypass the ORM's per-object work (and its `auto_now_add`, which would stamp the wall clock).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.apps import apps
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group
from django.contrib.contenttypes.models import ContentType
from django.core.management.color import no_style
from django.db import connection, models, transaction

from builds.choices import ConnectorKind, ServerStatus
from builds.models import (
    Allocation,
    ChassisLayout,
    Connector,
    Installation,
    LayoutConnector,
    Server,
)
from burnin.choices import RunResult, StageStatus
from burnin.models import BurnInRun, BurnInStage, GpuResult, TelemetrySample
from inventory.choices import ComponentStatus, PartCategory, PurchaseOrderStatus
from inventory.models import (
    BatchLot,
    Component,
    Part,
    PurchaseOrder,
    PurchaseOrderLine,
    StockMovement,
    Supplier,
)
from orders.choices import OrderStatus
from orders.models import ConfigurationLine, Order, OrderPurchaseOrder, ServerConfiguration
from werkbank.choices import MembershipRole, OrganizationKind
from werkbank.models import AuditEvent, Membership, Organization

#: Every timestamp counts from here, so that a re-run writes the same values.
EPOCH = datetime(2031, 1, 1, tzinfo=UTC)
#: The year in the order and PO numbers (WB-2031-0001): apart from the demo's and the tests' numbers.
YEAR = EPOCH.year
#: The password of every scale login (a fixed salt keeps the hash, and so the rows, the same on re-runs).
PASSWORD = "werkbank-scale"
PM_USERNAME = "scale-pm"
PARTNERS = 5
ORDERS_PER_CUSTOMER = 40
GPUS_PER_SERVER = 8
CPUS_PER_SERVER = 2
COMPONENTS_PER_SERVER = GPUS_PER_SERVER + CPUS_PER_SERVER
SAMPLE_INTERVAL = timedelta(seconds=10)

#: Order statuses and their weights, in the order of the lifecycle: the oldest orders are furthest along.
ORDER_MIX: list[tuple[str, int]] = [
    (OrderStatus.CLOSED, 15),
    (OrderStatus.HANDED_OVER, 20),
    (OrderStatus.DEPLOYMENT, 10),
    (OrderStatus.BURN_IN, 12),
    (OrderStatus.ASSEMBLY, 20),
    (OrderStatus.PROCUREMENT, 10),
    (OrderStatus.CANCELLED, 2),
    (OrderStatus.REJECTED, 2),
    (OrderStatus.APPROVED, 2),
    (OrderStatus.ROI_REVIEW, 3),
    (OrderStatus.DRAFT, 4),
]
#: The transitions (service verbs) that led to each order status.
ORDER_PATHS: dict[str, list[tuple[str, str]]] = {}
_MAIN_PATH = [
    ("submit", OrderStatus.ROI_REVIEW),
    ("approve", OrderStatus.APPROVED),
    ("procure", OrderStatus.PROCUREMENT),
    ("start_assembly", OrderStatus.ASSEMBLY),
    ("start_burn_in", OrderStatus.BURN_IN),
    ("start_deployment", OrderStatus.DEPLOYMENT),
    ("hand_over", OrderStatus.HANDED_OVER),
    ("close", OrderStatus.CLOSED),
]
ORDER_PATHS[OrderStatus.DRAFT] = []
for _index, (_verb, _status) in enumerate(_MAIN_PATH):
    ORDER_PATHS[_status] = _MAIN_PATH[: _index + 1]
ORDER_PATHS[OrderStatus.REJECTED] = [_MAIN_PATH[0], ("reject", OrderStatus.REJECTED)]
ORDER_PATHS[OrderStatus.CANCELLED] = [_MAIN_PATH[0], ("cancel", OrderStatus.CANCELLED)]
#: Orders from these statuses on have servers (created at procurement) and a received purchase order.
WITH_SERVERS = frozenset(
    {
        OrderStatus.PROCUREMENT,
        OrderStatus.ASSEMBLY,
        OrderStatus.BURN_IN,
        OrderStatus.DEPLOYMENT,
        OrderStatus.HANDED_OVER,
        OrderStatus.CLOSED,
    }
)
#: The server path (service verbs) to each server status; burn_in_failed waits for rework.
_SERVER_PATH = [
    ("start_assembly", ServerStatus.ASSEMBLING),
    ("mark_assembled", ServerStatus.ASSEMBLED),
    ("start_burn_in", ServerStatus.BURN_IN),
    ("pass_burn_in", ServerStatus.BURN_IN_PASSED),
    ("deploy", ServerStatus.DEPLOYED),
    ("hand_over", ServerStatus.HANDED_OVER),
]
SERVER_PATHS: dict[str, list[tuple[str, str]]] = {ServerStatus.PLANNED: []}
for _index, (_verb, _status) in enumerate(_SERVER_PATH):
    SERVER_PATHS[_status] = _SERVER_PATH[: _index + 1]
SERVER_PATHS[ServerStatus.BURN_IN_FAILED] = [*_SERVER_PATH[:3], ("fail_burn_in", ServerStatus.BURN_IN_FAILED)]
#: Servers that have been through a burn-in run, and its verdict.
RUN_RESULT = {
    ServerStatus.BURN_IN_PASSED: RunResult.PASS,
    ServerStatus.BURN_IN_FAILED: RunResult.FAIL,
    ServerStatus.DEPLOYED: RunResult.PASS,
    ServerStatus.HANDED_OVER: RunResult.PASS,
}
STAGES = ["inventory", "telemetry", "bench", "burn", "finalize"]

#: The tables the seed writes, in the order it writes them (foreign keys first); `digest()` reads them.
MODELS: list[type[models.Model]] = [
    Organization,
    Membership,
    Supplier,
    Part,
    ChassisLayout,
    LayoutConnector,
    ServerConfiguration,
    ConfigurationLine,
    Order,
    PurchaseOrder,
    PurchaseOrderLine,
    OrderPurchaseOrder,
    BatchLot,
    Server,
    Connector,
    Component,
    StockMovement,
    Allocation,
    Installation,
    BurnInRun,
    BurnInStage,
    GpuResult,
    TelemetrySample,
    AuditEvent,
]


def _layout_rows() -> list[dict[str, Any]]:
    """53 connectors: chassis, board, two sockets, 8 PCIe slots, 8 GPU power cables, 24 DIMMs, 4 NVMe, 5 PSUs
    (as the demo's 6U chassis, seed 000)."""
    rows: list[dict[str, Any]] = [
        {"name": "CHASSIS", "kind": ConnectorKind.CHASSIS},
        {"name": "BOARD", "kind": ConnectorKind.BOARD},
        {"name": "CPU0", "kind": ConnectorKind.CPU_SOCKET, "numa_node": 0},
        {"name": "CPU1", "kind": ConnectorKind.CPU_SOCKET, "numa_node": 1},
    ]
    rows += [
        {
            "name": f"PCIE-{i}",
            "kind": ConnectorKind.PCIE_SLOT,
            "numa_node": 0 if i <= 4 else 1,
            "pcie_gen": 5,
            "pcie_lanes": 16,
        }
        for i in range(1, 9)
    ]
    rows += [{"name": f"PWR-{i}", "kind": ConnectorKind.GPU_POWER} for i in range(1, 9)]
    rows += [
        {"name": f"DIMM-P{socket}-{chr(65 + slot)}", "kind": ConnectorKind.DIMM_SLOT, "numa_node": socket}
        for socket in (0, 1)
        for slot in range(12)
    ]
    rows += [{"name": f"NVME-{i}", "kind": ConnectorKind.NVME_BAY} for i in range(4)]
    rows += [{"name": f"PSU-{i}", "kind": ConnectorKind.PSU_BAY} for i in range(1, 6)]
    return rows


LAYOUT = _layout_rows()
GPU_CONNECTORS = [row["name"] for row in LAYOUT if row["kind"] == ConnectorKind.PCIE_SLOT]
CPU_CONNECTORS = [row["name"] for row in LAYOUT if row["kind"] == ConnectorKind.CPU_SOCKET]


@dataclass(frozen=True)
class ScaleSize:
    """How big the dataset is: the command's options."""

    servers: int = 10_000
    components: int = 100_000
    samples: int = 1_700_000
    orders: int = 2_000
    seed: int = 15


@dataclass
class _Ids:
    """The next primary key per table: the table's maximum when the seed began, plus what it wrote."""

    next: dict[type[models.Model], int] = field(default_factory=dict)

    def take(self, model: type[models.Model]) -> int:
        value = self.next[model]
        self.next[model] = value + 1
        return value


class Writer:
    """Writes rows of one table fast: COPY on PostgreSQL, executemany elsewhere. Rows are dicts or tuples in
    the order of `columns` (field names); values are Python values, converted per column once."""

    def __init__(self) -> None:
        self.counts: dict[type[models.Model], int] = {}

    def _converters(self, model: type[models.Model], names: list[str]) -> list[Callable[[Any], Any] | None]:
        postgres = connection.vendor == "postgresql"
        converters: list[Callable[[Any], Any] | None] = []
        for name in names:
            model_field = model._meta.get_field(name)
            if isinstance(model_field, models.JSONField):
                converters.append(lambda value: json.dumps(value, sort_keys=True))
            elif postgres:
                converters.append(None)
            elif isinstance(model_field, models.DateTimeField):
                converters.append(
                    lambda value: None if value is None else connection.ops.adapt_datetimefield_value(value)
                )
            elif isinstance(model_field, models.DecimalField):
                converters.append(lambda value: None if value is None else str(value))
            else:
                converters.append(None)
        return converters

    def write(self, model: type[models.Model], names: list[str], rows: Iterable[tuple[Any, ...]]) -> int:
        # A column the caller leaves out gets the field's default (or NULL, or ""), as the ORM would write it:
        # COPY knows nothing of Django's defaults.
        given = {model._meta.get_field(name).attname for name in names}
        rest: dict[str, Any] = {}
        for model_field in model._meta.concrete_fields:
            if model_field.attname in given:
                continue
            if model_field.has_default():
                rest[model_field.name] = model_field.get_default()
            elif model_field.null:
                rest[model_field.name] = None
            elif model_field.empty_strings_allowed:
                rest[model_field.name] = ""
            else:
                raise ValueError(f"{model._meta.label}.{model_field.name} needs a value")
        if rest:
            extra = tuple(rest.values())
            rows = (tuple(row) + extra for row in rows)
            names = [*names, *rest]
        columns = [model._meta.get_field(name).column for name in names]
        converters = self._converters(model, names)
        if any(converters):
            rows = (
                tuple(
                    value if convert is None else convert(value)
                    for value, convert in zip(row, converters, strict=True)
                )
                for row in rows
            )
        table = connection.ops.quote_name(model._meta.db_table)
        quoted = ", ".join(connection.ops.quote_name(column) for column in columns)
        written = 0
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                raw = cursor.cursor  # psycopg 3's cursor: Django's wrapper has no copy()
                with raw.copy(f"COPY {table} ({quoted}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
                        written += 1
            else:
                placeholders = ", ".join(["%s"] * len(columns))
                sql = f"INSERT INTO {table} ({quoted}) VALUES ({placeholders})"
                batch: list[tuple[Any, ...]] = []
                for row in rows:
                    batch.append(row)
                    if len(batch) == 5000:
                        cursor.executemany(sql, batch)
                        written += len(batch)
                        batch = []
                if batch:
                    cursor.executemany(sql, batch)
                    written += len(batch)
        self.counts[model] = self.counts.get(model, 0) + written
        return written


def is_empty() -> bool:
    """Whether the database holds no fleet yet (the seed refuses to add one to another's data by default)."""
    return not any(model.objects.exists() for model in (Organization, Order, Server, Component, Part))


def _spread(total: int, parts: int) -> list[int]:
    """`total` cut into `parts` whole numbers that differ by at most one."""
    return [total * (i + 1) // parts - total * i // parts for i in range(parts)] if parts else []


def _order_statuses(count: int, rng: random.Random) -> list[str]:
    """Each order's status, oldest first: the mix of ORDER_MIX, sorted along the lifecycle."""
    total = sum(weight for _, weight in ORDER_MIX)
    statuses: list[str] = []
    for status, weight in ORDER_MIX:
        # Every status at least once where there are enough orders, so that small datasets show them all.
        statuses += [status] * max(count * weight // total, 1 if count >= 2 * len(ORDER_MIX) else 0)
    statuses += [OrderStatus.ASSEMBLY] * (count - len(statuses))
    rank = {status: index for index, (status, _) in enumerate(ORDER_MIX)}
    # A little shuffling within neighbouring ages, as real orders do not finish in the order they came.
    keyed = sorted(statuses, key=lambda status: rank[status] + rng.random() * 0.8)
    return keyed


def _server_statuses(order_status: str, count: int) -> list[str]:
    """The statuses of an order's servers, consistent with the order's."""
    cycle: list[str]
    if order_status == OrderStatus.PROCUREMENT:
        cycle = [ServerStatus.PLANNED]
    elif order_status == OrderStatus.ASSEMBLY:
        cycle = [ServerStatus.ASSEMBLED, ServerStatus.ASSEMBLING, ServerStatus.PLANNED]
    elif order_status == OrderStatus.BURN_IN:
        cycle = [
            ServerStatus.BURN_IN_PASSED,
            ServerStatus.BURN_IN,
            ServerStatus.BURN_IN_PASSED,
            ServerStatus.BURN_IN_FAILED,
        ]
    elif order_status == OrderStatus.DEPLOYMENT:
        cycle = [ServerStatus.DEPLOYED, ServerStatus.BURN_IN_PASSED]
    else:
        cycle = [ServerStatus.HANDED_OVER]
    return [cycle[i % len(cycle)] for i in range(count)]


def seed(*, size: ScaleSize, log: Callable[[str], None] = lambda _: None) -> dict[str, int]:
    """Write the scale dataset in one transaction; return the rows written per table (by model label)."""
    with transaction.atomic():
        counts = _seed(size=size, log=log)
    if connection.vendor == "postgresql" and not connection.in_atomic_block:
        # What autovacuum would have done long before a live fleet reached this size: the visibility maps
        # set (index-only scans) and the statistics fresh. Left to autovacuum, it vacuums the 2.9 million
        # new rows while the next thing runs: on two cores, beside a benchmark's series.
        started = time.perf_counter()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM (ANALYZE)")
        log(f"VACUUM (ANALYZE) in {time.perf_counter() - started:.1f} s")
    return counts


def _seed(*, size: ScaleSize, log: Callable[[str], None]) -> dict[str, int]:
    rng = random.Random(size.seed)
    writer = Writer()
    ids = _Ids()
    user_model = apps.get_model("auth", "User")
    for model in [*MODELS, user_model]:
        ids.next[model] = (model.objects.aggregate(top=models.Max("pk"))["top"] or 0) + 1
    content_type = {
        model: ContentType.objects.get_for_model(model).pk for model in (Order, Server, Component)
    }
    audit_names = [
        "id",
        "created_at",
        "actor",
        "verb",
        "content_type",
        "object_id",
        "object_repr",
        "before",
        "after",
        "note",
    ]
    audit_rows: list[tuple[Any, ...]] = []

    def audit(
        at: datetime,
        actor: int | None,
        verb: str,
        model: type[models.Model],
        pk: int,
        text: str,
        before: dict[str, Any],
        after: dict[str, Any],
        note: str = "",
    ) -> None:
        audit_rows.append(
            (
                ids.take(AuditEvent),
                at,
                actor,
                verb,
                content_type[model],
                str(pk),
                text[:200],
                before,
                after,
                note,
            )
        )

    # --- People: customers, partners, one member each, and the PM.
    customers_count = max(1, -(-size.orders // ORDERS_PER_CUSTOMER))
    password = make_password(PASSWORD, salt="werkbankscale15")
    organizations: list[tuple[Any, ...]] = []
    users: list[tuple[Any, ...]] = []
    memberships: list[tuple[Any, ...]] = []
    pm_id = ids.take(user_model)
    users.append(
        (pm_id, password, PM_USERNAME, "Scale", "PM", "scale-pm@example.com", True, True, False, EPOCH)
    )
    customer_ids: list[int] = []
    partner_ids: list[int] = []
    member_of: dict[int, int] = {}
    for kind, count, prefix in (
        (OrganizationKind.CUSTOMER, customers_count, "customer"),
        (OrganizationKind.PARTNER, PARTNERS, "partner"),
    ):
        for number in range(1, count + 1):
            org_id = ids.take(Organization)
            organizations.append(
                (
                    org_id,
                    f"Scale {prefix} {number:03d}",
                    kind,
                    f"{prefix}{number:03d}@scale.example",
                    "en",
                    EPOCH,
                )
            )
            user_id = ids.take(user_model)
            username = f"scale-{prefix}-{number:03d}"
            users.append(
                (
                    user_id,
                    password,
                    username,
                    "Scale",
                    f"{prefix} {number}",
                    f"{username}@example.com",
                    False,
                    True,
                    False,
                    EPOCH,
                )
            )
            memberships.append((ids.take(Membership), user_id, org_id, MembershipRole.ADMIN, EPOCH))
            member_of[org_id] = user_id
            (customer_ids if kind == OrganizationKind.CUSTOMER else partner_ids).append(org_id)
    writer.write(
        user_model,
        [
            "id",
            "password",
            "username",
            "first_name",
            "last_name",
            "email",
            "is_staff",
            "is_active",
            "is_superuser",
            "date_joined",
        ],
        users,
    )
    pm = user_model.objects.get(pk=pm_id)
    pm.groups.add(Group.objects.get_or_create(name="project-managers")[0])
    writer.write(
        Organization, ["id", "name", "kind", "contact_email", "language", "created_at"], organizations
    )
    writer.write(Membership, ["id", "user", "organization", "role", "created_at"], memberships)

    # --- Catalogue: suppliers, parts, the chassis layout, the configuration.
    supplier_ids = []
    supplier_rows = []
    for number, country in enumerate(("DE", "NL", "FR"), start=1):
        supplier_ids.append(ids.take(Supplier))
        supplier_rows.append((supplier_ids[-1], f"Scale supplier {number}", country, EPOCH))
    writer.write(Supplier, ["id", "name", "country", "created_at"], supplier_rows)
    gpu_id, cpu_id, chassis_id = ids.take(Part), ids.take(Part), ids.take(Part)
    gpu_price, cpu_price = Decimal("8450.00"), Decimal("4120.00")
    writer.write(
        Part,
        [
            "id",
            "category",
            "manufacturer",
            "mpn",
            "name",
            "vram_gb",
            "tdp_w",
            "pcie_gen",
            "pcie_lanes",
            "u_height",
            "specs",
            "list_price",
            "preferred_supplier",
            "created_at",
        ],
        [
            (
                gpu_id,
                PartCategory.GPU,
                "NVIDIA",
                "SCALE-RTXPRO6000-96G",
                "RTX PRO 6000 96 GB (scale)",
                96,
                600,
                5,
                16,
                None,
                {},
                gpu_price,
                supplier_ids[0],
                EPOCH,
            ),
            (
                cpu_id,
                PartCategory.CPU,
                "AMD",
                "SCALE-EPYC-9554",
                "EPYC 9554 64C (scale)",
                None,
                360,
                None,
                None,
                None,
                {"cores": 64},
                cpu_price,
                supplier_ids[1],
                EPOCH,
            ),
            (
                chassis_id,
                PartCategory.CHASSIS,
                "Scale Chassis",
                "SCALE-6U",
                "6U eight-GPU chassis (scale)",
                None,
                None,
                None,
                None,
                6,
                {},
                Decimal("3900.00"),
                supplier_ids[2],
                EPOCH,
            ),
        ],
    )
    layout_id = ids.take(ChassisLayout)
    writer.write(
        ChassisLayout,
        ["id", "chassis", "description", "columns"],
        [(layout_id, chassis_id, "6U, 8 GPUs on PCIe 5.0 (scale dataset)", 4)],
    )
    connector_fields = ["name", "kind", "numa_node", "pcie_gen", "pcie_lanes", "cooling_block"]
    layout_values = [
        tuple(row.get(name, "" if name == "cooling_block" else None) for name in connector_fields)
        for row in LAYOUT
    ]
    writer.write(
        LayoutConnector,
        ["id", "layout", "position", *connector_fields],
        [
            (ids.take(LayoutConnector), layout_id, position, *values)
            for position, values in enumerate(layout_values)
        ],
    )
    configuration_id = ids.take(ServerConfiguration)
    writer.write(
        ServerConfiguration,
        ["id", "name", "description", "psu_count", "psu_rating_w", "psu_redundant", "created_at"],
        [(configuration_id, "Scale 8× RTX PRO 6000", "The scale dataset's configuration", 5, 1600, 1, EPOCH)],
    )
    writer.write(
        ConfigurationLine,
        ["id", "configuration", "part", "quantity"],
        [
            (ids.take(ConfigurationLine), configuration_id, gpu_id, GPUS_PER_SERVER),
            (ids.take(ConfigurationLine), configuration_id, cpu_id, CPUS_PER_SERVER),
            (ids.take(ConfigurationLine), configuration_id, chassis_id, 1),
        ],
    )
    log("catalogue and organizations written")

    # --- Orders, spread over a year, oldest furthest along.
    statuses = _order_statuses(size.orders, rng)
    with_servers = [index for index, status in enumerate(statuses) if status in WITH_SERVERS]
    servers_per = dict(zip(with_servers, _spread(size.servers, len(with_servers)), strict=True))
    order_rows = []
    orders: list[
        tuple[int, str, int, datetime, str, int]
    ] = []  # id, status, customer, created, reference, count
    for index, status in enumerate(statuses):
        order_id = ids.take(Order)
        created = EPOCH + timedelta(minutes=index * 250)
        reference = f"WB-{YEAR}-{index + 1:04d}"
        count = servers_per.get(index) or rng.randint(1, 8)
        if count < 1:
            count = 1  # an order of more orders than servers: the order still asks for one
        customer = customer_ids[index % len(customer_ids)]
        path = ORDER_PATHS[status]
        updated = created + timedelta(days=2 * len(path))
        order_rows.append(
            (
                order_id,
                reference,
                customer,
                configuration_id,
                count,
                36 if index % 3 else 60,
                status,
                "",
                1,
                10,
                "",
                pm_id,
                created,
                updated,
            )
        )
        orders.append((order_id, status, customer, created, reference, servers_per.get(index, 0)))
        audit(created, pm_id, "order.create", Order, order_id, reference, {}, {"status": OrderStatus.DRAFT})
        previous = OrderStatus.DRAFT
        for step, (verb, target) in enumerate(path, start=1):
            audit(
                created + timedelta(days=2 * step),
                pm_id,
                f"order.{verb}",
                Order,
                order_id,
                reference,
                {"status": previous},
                {"status": target},
            )
            previous = target
    writer.write(
        Order,
        [
            "id",
            "reference",
            "customer",
            "configuration",
            "server_count",
            "warranty_months",
            "status",
            "notes",
            "circuit_phases",
            "spare_percent",
            "approval_override_reason",
            "created_by",
            "created_at",
            "updated_at",
        ],
        order_rows,
    )
    log(f"{len(order_rows)} orders written")

    # --- Per order with servers: a PO to the partner's workshop, lots, servers, connectors, components.
    po_rows, line_rows, link_rows, lot_rows, server_rows, connector_rows = [], [], [], [], [], []
    component_rows, movement_rows, allocation_rows, installation_rows = [], [], [], []
    runs: list[tuple[int, int, datetime, str, list[int]]] = []  # run id, server id, start, result, GPU ids
    budget = size.components
    po_number = 0
    partner_location = {
        pid: f"Workshop of Scale partner {n:03d}" for n, pid in enumerate(partner_ids, start=1)
    }
    serial_number = 0
    component_row: dict[int, list[Any]] = {}  # a component's row, changed as the server's status moves on

    def new_po(*, deliver_to: int | None, created: datetime, status: str) -> int:
        nonlocal po_number
        po_number += 1
        po_id = ids.take(PurchaseOrder)
        po_rows.append(
            (
                po_id,
                f"PO-{YEAR}-{po_number:04d}",
                supplier_ids[po_number % len(supplier_ids)],
                status,
                "EUR",
                deliver_to,
                "",
                "",
                created,
                pm_id,
                created,
            )
        )
        return po_id

    def receive(
        *,
        po_id: int,
        part: int,
        price: Decimal,
        quantity: int,
        received: int,
        holder: int | None,
        at: datetime,
        lot_code: str,
    ) -> tuple[int, int, list[int]]:
        nonlocal serial_number
        line_id = ids.take(PurchaseOrderLine)
        line_rows.append((line_id, po_id, part, quantity, price, received))
        if not received:
            return line_id, 0, []
        lot_id = ids.take(BatchLot)
        lot_rows.append(
            (
                lot_id,
                part,
                supplier_ids[po_id % len(supplier_ids)],
                po_id,
                lot_code,
                f"{at.year % 100:02d}{1 + rng.randrange(52):02d}",
                "TW",
                at,
            )
        )
        location = partner_location[holder] if holder else "Warehouse"
        component_ids = []
        for _ in range(received):
            serial_number += 1
            component_id = ids.take(Component)
            prefix = "G" if part == gpu_id else "C"
            manufacturer = "NVIDIA" if part == gpu_id else "AMD"
            row = [
                component_id,
                part,
                manufacturer,
                f"SC{prefix}{serial_number:08d}",
                lot_id,
                line_id,
                ComponentStatus.IN_STOCK,
                location,
                holder,
                at,
            ]
            component_rows.append(row)
            component_row[component_id] = row
            movement_rows.append(
                (
                    ids.take(StockMovement),
                    component_id,
                    pm_id,
                    at,
                    "",
                    ComponentStatus.IN_STOCK,
                    "",
                    location,
                    f"Received on PO line {line_id}, lot {lot_code}",
                )
            )
            component_ids.append(component_id)
        return line_id, lot_id, component_ids

    for order_id, status, _customer, created, _reference, server_count in orders:
        if status not in WITH_SERVERS or not server_count:
            continue
        partner = partner_ids[order_id % len(partner_ids)]
        partner_user = member_of[partner]
        procured = created + timedelta(days=6)
        received_servers = min(server_count, budget // COMPONENTS_PER_SERVER)
        budget -= received_servers * COMPONENTS_PER_SERVER
        po_status = (
            PurchaseOrderStatus.RECEIVED
            if received_servers == server_count
            else PurchaseOrderStatus.PARTIALLY_RECEIVED
            if received_servers
            else PurchaseOrderStatus.SENT
        )
        po_id = new_po(deliver_to=partner, created=procured, status=po_status)
        link_rows.append((ids.take(OrderPurchaseOrder), order_id, po_id, procured))
        received_at = procured + timedelta(days=5)
        _, _, gpus = receive(
            po_id=po_id,
            part=gpu_id,
            price=gpu_price,
            quantity=server_count * GPUS_PER_SERVER,
            received=received_servers * GPUS_PER_SERVER,
            holder=partner,
            at=received_at,
            lot_code=f"GL{order_id:05d}",
        )
        _, _, cpus = receive(
            po_id=po_id,
            part=cpu_id,
            price=cpu_price,
            quantity=server_count * CPUS_PER_SERVER,
            received=received_servers * CPUS_PER_SERVER,
            holder=partner,
            at=received_at,
            lot_code=f"CL{order_id:05d}",
        )
        server_statuses = _server_statuses(status, server_count)
        if received_servers < server_count:
            # Without parts nobody builds: servers whose parts have not arrived stay planned.
            server_statuses = [
                server_status if sequence < received_servers else ServerStatus.PLANNED
                for sequence, server_status in enumerate(server_statuses)
            ]
        for sequence, server_status in enumerate(server_statuses, start=1):
            server_id = ids.take(Server)
            hostname = f"sc-{order_id:05d}-{sequence:02d}"
            built = server_status not in (ServerStatus.PLANNED, ServerStatus.ASSEMBLING)
            server_created = procured
            power = 4780.0 + rng.random() * 80 if RUN_RESULT.get(server_status) == RunResult.PASS else None
            server_rows.append(
                (
                    server_id,
                    order_id,
                    sequence,
                    hostname,
                    f"CH{server_id:08d}" if built else "",
                    f"SC{server_id:07d}",
                    partner,
                    server_status,
                    power,
                    server_created,
                )
            )
            audit(
                server_created,
                pm_id,
                "server.create",
                Server,
                server_id,
                hostname,
                {},
                {"status": ServerStatus.PLANNED},
            )
            previous = ServerStatus.PLANNED
            for step, (verb, target) in enumerate(SERVER_PATHS[server_status], start=1):
                audit(
                    received_at + timedelta(days=step),
                    partner_user,
                    f"server.{verb}",
                    Server,
                    server_id,
                    hostname,
                    {"status": previous},
                    {"status": target},
                )
                previous = target
            connector_ids = {}
            for position, values in enumerate(layout_values):
                connector_id = ids.take(Connector)
                connector_ids[values[0]] = connector_id
                connector_rows.append((connector_id, server_id, position, *values))
            if sequence > received_servers:
                continue
            first = sequence - 1
            server_gpus = gpus[first * GPUS_PER_SERVER : (first + 1) * GPUS_PER_SERVER]
            server_cpus = cpus[first * CPUS_PER_SERVER : (first + 1) * CPUS_PER_SERVER]
            if server_status == ServerStatus.PLANNED:
                continue
            allocated_at = received_at + timedelta(hours=20)
            installed_at = received_at + timedelta(days=1)
            placed = list(zip(server_gpus, GPU_CONNECTORS, strict=True)) + list(
                zip(server_cpus, CPU_CONNECTORS, strict=True)
            )
            for number, (component_id, connector_name) in enumerate(placed):
                row = component_row[component_id]
                allocation_rows.append(
                    (ids.take(Allocation), component_id, server_id, pm_id, allocated_at, "", None)
                )
                movement_rows.append(
                    (
                        ids.take(StockMovement),
                        component_id,
                        pm_id,
                        allocated_at,
                        ComponentStatus.IN_STOCK,
                        ComponentStatus.ALLOCATED,
                        row[7],
                        row[7],
                        f"Allocated to {hostname}",
                    )
                )
                row[6] = ComponentStatus.ALLOCATED
                # While a server is being assembled, half its GPUs and its CPUs are in already.
                if server_status == ServerStatus.ASSEMBLING and number % 2:
                    continue
                installation_rows.append(
                    (
                        ids.take(Installation),
                        server_id,
                        connector_ids[connector_name],
                        component_id,
                        partner_user,
                        installed_at,
                        None,
                        None,
                        "",
                    )
                )
                movement_rows.append(
                    (
                        ids.take(StockMovement),
                        component_id,
                        partner_user,
                        installed_at,
                        ComponentStatus.ALLOCATED,
                        ComponentStatus.INSTALLED,
                        row[7],
                        f"{hostname} {connector_name}",
                        f"Installed in {hostname} {connector_name}",
                    )
                )
                row[6] = ComponentStatus.INSTALLED
                row[7] = f"{hostname} {connector_name}"
            audit(
                allocated_at,
                pm_id,
                "server.allocate",
                Server,
                server_id,
                hostname,
                {},
                {"components": len(placed)},
            )
            if server_status in RUN_RESULT:
                runs.append(
                    (
                        ids.take(BurnInRun),
                        server_id,
                        installed_at + timedelta(days=2),
                        RUN_RESULT[server_status],
                        server_gpus,
                    )
                )
    if budget >= 1:
        # The rest of the component budget waits in the warehouse, on a PO of its own.
        po_id = new_po(deliver_to=None, created=EPOCH, status=PurchaseOrderStatus.RECEIVED)
        half = budget // 2
        for part, price, quantity, code in (
            (gpu_id, gpu_price, half, "GLSTOCK"),
            (cpu_id, cpu_price, budget - half, "CLSTOCK"),
        ):
            if quantity:
                receive(
                    po_id=po_id,
                    part=part,
                    price=price,
                    quantity=quantity,
                    received=quantity,
                    holder=None,
                    at=EPOCH + timedelta(days=1),
                    lot_code=code,
                )

    writer.write(
        PurchaseOrder,
        [
            "id",
            "number",
            "supplier",
            "status",
            "currency",
            "deliver_to",
            "non_eu_override_reason",
            "notes",
            "sent_at",
            "created_by",
            "created_at",
        ],
        po_rows,
    )
    writer.write(
        PurchaseOrderLine,
        ["id", "purchase_order", "part", "quantity", "unit_price", "quantity_received"],
        line_rows,
    )
    writer.write(OrderPurchaseOrder, ["id", "order", "purchase_order", "created_at"], link_rows)
    writer.write(
        BatchLot,
        [
            "id",
            "part",
            "supplier",
            "purchase_order",
            "lot_code",
            "date_code",
            "country_of_origin",
            "created_at",
        ],
        lot_rows,
    )
    writer.write(
        Server,
        [
            "id",
            "order",
            "sequence",
            "hostname",
            "chassis_serial",
            "asset_tag",
            "partner",
            "status",
            "burnin_gpu_power_w",
            "created_at",
        ],
        server_rows,
    )
    writer.write(Connector, ["id", "server", "position", *connector_fields], connector_rows)
    log(f"{len(server_rows)} servers with {len(connector_rows)} connectors written")
    writer.write(
        Component,
        [
            "id",
            "part",
            "manufacturer",
            "serial",
            "lot",
            "po_line",
            "status",
            "location",
            "holder",
            "received_at",
        ],
        (tuple(row) for row in component_rows),
    )
    writer.write(
        StockMovement,
        [
            "id",
            "component",
            "actor",
            "created_at",
            "from_status",
            "to_status",
            "from_location",
            "to_location",
            "reason",
        ],
        movement_rows,
    )
    writer.write(
        Allocation,
        ["id", "component", "server", "allocated_by", "allocated_at", "lot_override_reason", "released_at"],
        allocation_rows,
    )
    writer.write(
        Installation,
        [
            "id",
            "server",
            "connector",
            "component",
            "installed_by",
            "installed_at",
            "removed_by",
            "removed_at",
            "removal_reason",
        ],
        installation_rows,
    )
    log(f"{len(component_rows)} components, {len(movement_rows)} stock movements written")

    # --- Burn-in: runs, stages, per-GPU results and the telemetry sample budget.
    run_rows, stage_rows, result_rows = [], [], []
    per_run = _spread(size.samples, len(runs))
    for (run_id, server_id, started, result, server_gpus), samples in zip(runs, per_run, strict=True):
        per_gpu = max(1, -(-samples // GPUS_PER_SERVER))
        ended = started + SAMPLE_INTERVAL * per_gpu
        run_rows.append(
            (
                run_id,
                server_id,
                f"scale-{run_id:08d}",
                "1.0.0",
                "1",
                started,
                ended,
                result,
                "scale-1",
                "",
                None,
                ended,
            )
        )
        for position, name in enumerate(STAGES):
            stage_rows.append(
                (ids.take(BurnInStage), run_id, position, name, StageStatus.OK, "", started, ended)
            )
        for index, component_id in enumerate(server_gpus):
            result_rows.append(
                (
                    ids.take(GpuResult),
                    run_id,
                    index,
                    f"SCG{component_id:08d}",
                    "",
                    "RTX PRO 6000",
                    f"0000:{index + 1:02x}:00.0",
                    0 if index < 4 else 1,
                    component_id,
                    5,
                    16,
                    5,
                    16,
                    27.4 + rng.random() * 0.4,
                    26.9 + rng.random() * 0.4,
                    1790.0 + rng.random() * 10,
                    78.0 + rng.random() * 6,
                    5.0 + rng.random() * 4,
                    595.0,
                    600.0,
                    1_000_000,
                    0,
                    0,
                )
            )
    writer.write(
        BurnInRun,
        [
            "id",
            "server",
            "report_id",
            "probe_version",
            "schema_version",
            "started_at",
            "ended_at",
            "result",
            "rules_version",
            "report",
            "uploaded_by",
            "created_at",
        ],
        run_rows,
    )
    writer.write(
        BurnInStage,
        ["id", "run", "position", "name", "status", "reason", "started_at", "ended_at"],
        stage_rows,
    )
    writer.write(
        GpuResult,
        [
            "id",
            "run",
            "index",
            "serial",
            "uuid",
            "name",
            "pci_bus_id",
            "numa_node",
            "component",
            "expected_gen",
            "expected_width",
            "load_gen",
            "load_width",
            "h2d_gbps",
            "d2h_gbps",
            "vram_gbps",
            "peak_temp_c",
            "min_margin_c",
            "mean_power_w",
            "power_limit_w",
            "matmuls",
            "mismatches",
            "nans",
        ],
        result_rows,
    )

    def samples() -> Iterator[tuple[Any, ...]]:
        sample_id = ids.next[TelemetrySample]
        noise = random.Random(size.seed + 1)
        for (run_id, _server, started, _result, _gpus), total in zip(runs, per_run, strict=True):
            for gpu_index, count in enumerate(_spread(total, GPUS_PER_SERVER)):
                at = started
                for _ in range(count):
                    jitter = noise.random()
                    yield (
                        sample_id,
                        run_id,
                        gpu_index,
                        at,
                        70.0 + 10 * jitter,
                        10.0 - 4 * jitter,
                        590.0 + 10 * jitter,
                        2400.0 + 50 * jitter,
                        99.0 + jitter,
                        4,
                        5,
                        16,
                    )
                    sample_id += 1
                    at += SAMPLE_INTERVAL
        ids.next[TelemetrySample] = sample_id

    writer.write(
        TelemetrySample,
        [
            "id",
            "run",
            "gpu_index",
            "at",
            "temp_c",
            "margin_c",
            "power_w",
            "sm_mhz",
            "util_pct",
            "clock_event_mask",
            "pcie_gen",
            "pcie_width",
        ],
        samples(),
    )
    log(
        f"{len(run_rows)} burn-in runs with {writer.counts.get(TelemetrySample, 0)} telemetry samples written"
    )
    writer.write(AuditEvent, audit_names, audit_rows)
    log(f"{len(audit_rows)} audit events written")

    # Explicit keys leave PostgreSQL's sequences behind: move them past the rows.
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), [*MODELS, user_model]):
            cursor.execute(statement)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # fresh statistics: the planner sees the fleet, not empty tables
    return {model._meta.label: count for model, count in writer.counts.items()}


def digest() -> str:
    """A SHA-256 over every row of the tables the seed writes, in key order: two seeds of an empty database
    with the same size give the same digest."""
    sha = hashlib.sha256()
    for model in MODELS:
        names = [model_field.attname for model_field in model._meta.concrete_fields]
        sha.update(model._meta.label.encode())
        for row in model.objects.order_by("pk").values_list(*names).iterator(chunk_size=5000):
            sha.update(repr(row).encode())
    return sha.hexdigest()
