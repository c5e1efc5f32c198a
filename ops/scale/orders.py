"""The orders' rows of the scale dataset: the one eight-GPU configuration with its bill of materials, the
orders across every status (spread over a year, the oldest furthest along) with the audit events of their
transitions, and the links of orders to the purchase orders that serve them."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from orders.choices import OrderStatus
from orders.models import ConfigurationLine, Order, OrderPurchaseOrder, ServerConfiguration

from .base import CPUS_PER_SERVER, EPOCH, GPUS_PER_SERVER, YEAR, Seeding, spread
from .core import People
from .inventory import Catalogue

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
_MAIN_PATH: list[tuple[str, str]] = [
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
ORDER_NAMES = [
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
]


@dataclass(frozen=True)
class PlannedOrder:
    """An order as the later writers need it; `servers` is its share of the server budget (0 without)."""

    id: int
    status: str
    customer: int
    created: datetime
    reference: str
    servers: int


def order_statuses(count: int, rng: random.Random) -> list[str]:
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


def write_configuration(seeding: Seeding, *, catalogue: Catalogue) -> int:
    """The configuration every order builds: 8 GPUs, 2 CPUs and the chassis, five 1600 W PSUs in N+1."""
    ids = seeding.ids
    configuration_id = ids.take(ServerConfiguration)
    seeding.writer.write(
        ServerConfiguration,
        ["id", "name", "description", "psu_count", "psu_rating_w", "psu_redundant", "created_at"],
        [(configuration_id, "Scale 8× RTX PRO 6000", "The scale dataset's configuration", 5, 1600, 1, EPOCH)],
    )
    seeding.writer.write(
        ConfigurationLine,
        ["id", "configuration", "part", "quantity"],
        [
            (ids.take(ConfigurationLine), configuration_id, catalogue.gpu_id, GPUS_PER_SERVER),
            (ids.take(ConfigurationLine), configuration_id, catalogue.cpu_id, CPUS_PER_SERVER),
            (ids.take(ConfigurationLine), configuration_id, catalogue.chassis_id, 1),
        ],
    )
    return configuration_id


def write_orders(seeding: Seeding, *, people: People, configuration_id: int) -> list[PlannedOrder]:
    """The orders, oldest first, each with the audit events of the transitions that led to its status."""
    ids, rng, size = seeding.ids, seeding.rng, seeding.size
    statuses = order_statuses(size.orders, rng)
    with_servers = [index for index, status in enumerate(statuses) if status in WITH_SERVERS]
    servers_per = dict(zip(with_servers, spread(size.servers, len(with_servers)), strict=True))
    order_rows: list[tuple[Any, ...]] = []
    planned: list[PlannedOrder] = []
    pm_id = people.pm_id
    for index, status in enumerate(statuses):
        order_id = ids.take(Order)
        created = EPOCH + timedelta(minutes=index * 250)
        reference = f"WB-{YEAR}-{index + 1:04d}"
        count = servers_per.get(index) or rng.randint(1, 8)
        if count < 1:
            count = 1  # an order of more orders than servers: the order still asks for one
        customer = people.customer_ids[index % len(people.customer_ids)]
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
        planned.append(
            PlannedOrder(order_id, status, customer, created, reference, servers_per.get(index, 0))
        )
        audit = seeding.audit.record
        audit(created, pm_id, "order.create", Order, order_id, reference, {}, {"status": OrderStatus.DRAFT})
        previous: str = OrderStatus.DRAFT
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
    seeding.writer.write(Order, ORDER_NAMES, order_rows)
    return planned


class PurchaseLinks:
    """Which purchase order serves which order (`orders.OrderPurchaseOrder`), held until `write`."""

    def __init__(self, seeding: Seeding) -> None:
        self.seeding = seeding
        self.rows: list[tuple[Any, ...]] = []

    def add(self, *, order_id: int, po_id: int, at: datetime) -> None:
        self.rows.append((self.seeding.ids.take(OrderPurchaseOrder), order_id, po_id, at))

    def write(self) -> None:
        self.seeding.writer.write(
            OrderPurchaseOrder, ["id", "order", "purchase_order", "created_at"], self.rows
        )
