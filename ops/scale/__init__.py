"""The scale dataset (issue #15): a fleet of thousands of servers, written in minutes, the same on every run.

`manage.py seed_scale` calls `seed()`. The rows are shaped as the services write them, without calling
the services (which lock, audit and check one object at a time: hours at this size):

- organizations (`core`): customers (one per 40 orders) and five assembly partners, each with one member
  login, and one PM login;
- a small catalogue (`inventory`, `builds`, `orders`): three EU suppliers, a GPU, a CPU and a chassis whose
  layout has 53 connectors, and one eight-GPU configuration (8 GPUs + 2 CPUs per server);
- orders across every status (`orders`), older orders further along; orders from procurement on have their
  servers (`builds`: each with the layout's 53 connectors, assigned round-robin to the partners) and one
  purchase order delivered to that partner's workshop, with a GPU line and a CPU line, each received as
  one lot (`inventory`);
- components, ten per server while the component budget lasts (the rest in the warehouse, on a PO of its
  own), with their status following the server's: in stock while it is planned, allocated while it is
  being assembled (half the GPUs already installed), installed from assembled on; every change has its
  stock movement (receipt, allocation, installation), every allocation and installation its row;
- burn-in runs for servers past burn-in (`burnin`: pass, or fail for those in rework), with stages, per-GPU
  results linked to the installed GPUs, and telemetry samples at 10 s (the sample budget spread over the
  runs);
- audit events for every order transition, every server's creation and status changes, and every
  allocation (collected by every writer, written last).

It writes no deployment or warranty rows: its servers past deployment have neither placements nor packs.
The writers share `base`: the size, the fixed figures, the id counter, the bulk writer and the audit trail.

Determinism: one `random.Random(seed)` and fixed timestamps (from `EPOCH`); primary keys continue from the
tables' current maximum, so on an empty database every run writes the same rows (`digest()` proves it).
The writers draw from the one generator in the order `_seed` calls them, so that order is part of the rows.

Speed: PostgreSQL gets `COPY … FROM STDIN` through psycopg 3's `cursor.copy`; SQLite `executemany`. Both
bypass the ORM's per-object work (and its `auto_now_add`, which would stamp the wall clock).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from datetime import timedelta

from django.apps import apps
from django.core.management.color import no_style
from django.db import connection, models, transaction

from builds.models import Allocation, ChassisLayout, Connector, Installation, LayoutConnector, Server
from burnin.models import BurnInRun, BurnInStage, GpuResult, TelemetrySample
from inventory.choices import PurchaseOrderStatus
from inventory.models import (
    BatchLot,
    Component,
    Part,
    PurchaseOrder,
    PurchaseOrderLine,
    StockMovement,
    Supplier,
)
from orders.models import ConfigurationLine, Order, OrderPurchaseOrder, ServerConfiguration
from werkbank.models import AuditEvent, Membership, Organization

from . import builds, burnin, core, inventory, orders
from .base import (
    COMPONENTS_PER_SERVER,
    CPUS_PER_SERVER,
    EPOCH,
    GPUS_PER_SERVER,
    ORDERS_PER_CUSTOMER,
    PARTNERS,
    PASSWORD,
    PM_USERNAME,
    SAMPLE_INTERVAL,
    YEAR,
    Ids,
    ScaleSize,
    Seeding,
    Writer,
)
from .builds import CPU_CONNECTORS, GPU_CONNECTORS, LAYOUT, SERVER_PATHS
from .burnin import RUN_RESULT, STAGES
from .orders import ORDER_MIX, ORDER_PATHS, WITH_SERVERS, PlannedOrder

__all__ = [
    "COMPONENTS_PER_SERVER",
    "CPUS_PER_SERVER",
    "CPU_CONNECTORS",
    "EPOCH",
    "GPUS_PER_SERVER",
    "GPU_CONNECTORS",
    "LAYOUT",
    "MODELS",
    "ORDERS_PER_CUSTOMER",
    "ORDER_MIX",
    "ORDER_PATHS",
    "PARTNERS",
    "PASSWORD",
    "PM_USERNAME",
    "RUN_RESULT",
    "SAMPLE_INTERVAL",
    "SERVER_PATHS",
    "STAGES",
    "WITH_SERVERS",
    "YEAR",
    "ScaleSize",
    "Writer",
    "digest",
    "is_empty",
    "seed",
]

#: The tables the seed writes, foreign keys first; `digest()` reads them.
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


def is_empty() -> bool:
    """Whether the database holds no fleet yet (the seed refuses to add one to another's data by default)."""
    return not any(model.objects.exists() for model in (Organization, Order, Server, Component, Part))


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
    tables = [*MODELS, apps.get_model("auth", "User")]
    seeding = Seeding(size=size, ids=Ids.after_current_rows(tables), log=log)
    people = core.write_people(seeding)
    catalogue = inventory.write_catalogue(seeding)
    builds.write_layout(seeding, chassis_id=catalogue.chassis_id)
    configuration_id = orders.write_configuration(seeding, catalogue=catalogue)
    log("catalogue and organizations written")
    planned = orders.write_orders(seeding, people=people, configuration_id=configuration_id)
    log(f"{len(planned)} orders written")

    stock = inventory.Stock(seeding, people=people, catalogue=catalogue)
    links = orders.PurchaseLinks(seeding)
    fleet = builds.Fleet(seeding, people=people, stock=stock)
    for order in planned:
        if order.status in WITH_SERVERS and order.servers:
            _supply_and_build(order, people=people, stock=stock, links=links, fleet=fleet)
    stock.receive_leftover()
    stock.write_purchasing()
    links.write()
    fleet.write_servers()
    log(f"{len(fleet.server_rows)} servers with {len(fleet.connector_rows)} connectors written")
    stock.write_components()
    fleet.write_installations()
    log(f"{len(stock.component_rows)} components, {len(stock.movement_rows)} stock movements written")
    burnin.write_runs(seeding, fleet.runs)
    log(f"{seeding.audit.write(seeding.writer)} audit events written")

    # Explicit keys leave PostgreSQL's sequences behind: move them past the rows.
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), tables):
            cursor.execute(statement)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # fresh statistics: the planner sees the fleet, not empty tables
    return {model._meta.label: count for model, count in seeding.writer.counts.items()}


def _supply_and_build(
    order: PlannedOrder,
    *,
    people: core.People,
    stock: inventory.Stock,
    links: orders.PurchaseLinks,
    fleet: builds.Fleet,
) -> None:
    """One order with servers: a PO to its partner's workshop, received while the component budget lasts
    (a GPU lot and a CPU lot), and its servers built as far as the order's status says."""
    partner = people.partner_ids[order.id % len(people.partner_ids)]
    procured = order.created + timedelta(days=6)
    supplied = stock.servers_supplied(order.servers)
    po_status = (
        PurchaseOrderStatus.RECEIVED
        if supplied == order.servers
        else PurchaseOrderStatus.PARTIALLY_RECEIVED
        if supplied
        else PurchaseOrderStatus.SENT
    )
    po_id = stock.new_po(deliver_to=partner, created=procured, status=po_status)
    links.add(order_id=order.id, po_id=po_id, at=procured)
    received_at = procured + timedelta(days=5)
    catalogue = stock.catalogue
    gpus = stock.receive(
        po_id=po_id,
        part=catalogue.gpu_id,
        price=catalogue.gpu_price,
        quantity=order.servers * GPUS_PER_SERVER,
        received=supplied * GPUS_PER_SERVER,
        holder=partner,
        at=received_at,
        lot_code=f"GL{order.id:05d}",
    )
    cpus = stock.receive(
        po_id=po_id,
        part=catalogue.cpu_id,
        price=catalogue.cpu_price,
        quantity=order.servers * CPUS_PER_SERVER,
        received=supplied * CPUS_PER_SERVER,
        holder=partner,
        at=received_at,
        lot_code=f"CL{order.id:05d}",
    )
    fleet.add_order(
        order,
        partner=partner,
        procured=procured,
        received_at=received_at,
        supplied=supplied,
        gpus=gpus,
        cpus=cpus,
    )


def digest() -> str:
    """A SHA-256 over every row of the tables the seed writes, in key order: two seeds of an empty database
    with the same size give the same digest."""
    sha = hashlib.sha256()
    for model in MODELS:
        names = [model_field.attname for model_field in model._meta.concrete_fields]
        sha.update(model._meta.label.encode())
        for row in model._default_manager.order_by("pk").values_list(*names).iterator(chunk_size=5000):
            sha.update(repr(row).encode())
    return sha.hexdigest()
