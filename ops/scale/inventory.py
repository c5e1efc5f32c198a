"""The inventory's rows of the scale dataset: three EU suppliers, a GPU, a CPU and a chassis; purchase orders
with their lines, received as one lot per line; components, one row per serial, and their stock movements
(receipt, then whatever the build writers move them to)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

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

from .base import COMPONENTS_PER_SERVER, EPOCH, YEAR, Seeding
from .core import People

PART_NAMES = [
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
]
PURCHASE_ORDER_NAMES = [
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
]
LOT_NAMES = [
    "id",
    "part",
    "supplier",
    "purchase_order",
    "lot_code",
    "date_code",
    "country_of_origin",
    "created_at",
]
COMPONENT_NAMES = [
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
]
MOVEMENT_NAMES = [
    "id",
    "component",
    "actor",
    "created_at",
    "from_status",
    "to_status",
    "from_location",
    "to_location",
    "reason",
]
#: Where a component's status and location sit in its row (`COMPONENT_NAMES`).
STATUS, LOCATION = COMPONENT_NAMES.index("status"), COMPONENT_NAMES.index("location")


@dataclass(frozen=True)
class Catalogue:
    """The suppliers and the three parts every order is built from."""

    supplier_ids: list[int]
    gpu_id: int
    cpu_id: int
    chassis_id: int
    gpu_price: Decimal = Decimal("8450.00")
    cpu_price: Decimal = Decimal("4120.00")


def write_catalogue(seeding: Seeding) -> Catalogue:
    """Suppliers in DE, NL and FR, and the parts, each with its preferred supplier."""
    ids = seeding.ids
    supplier_ids = []
    supplier_rows = []
    for number, country in enumerate(("DE", "NL", "FR"), start=1):
        supplier_ids.append(ids.take(Supplier))
        supplier_rows.append((supplier_ids[-1], f"Scale supplier {number}", country, EPOCH))
    seeding.writer.write(Supplier, ["id", "name", "country", "created_at"], supplier_rows)
    catalogue = Catalogue(supplier_ids, ids.take(Part), ids.take(Part), ids.take(Part))
    seeding.writer.write(
        Part,
        PART_NAMES,
        [
            (
                catalogue.gpu_id,
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
                catalogue.gpu_price,
                supplier_ids[0],
                EPOCH,
            ),
            (
                catalogue.cpu_id,
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
                catalogue.cpu_price,
                supplier_ids[1],
                EPOCH,
            ),
            (
                catalogue.chassis_id,
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
    return catalogue


class Stock:
    """Purchase orders, lots, components and their movements, held as rows until `write_*`: the build writers
    move components on (`move`) after they were received, and every move changes the component's row."""

    def __init__(self, seeding: Seeding, *, people: People, catalogue: Catalogue) -> None:
        self.seeding = seeding
        self.people = people
        self.catalogue = catalogue
        #: The components still to be received: ten per server while they last.
        self.budget = seeding.size.components
        self.po_rows: list[tuple[Any, ...]] = []
        self.line_rows: list[tuple[Any, ...]] = []
        self.lot_rows: list[tuple[Any, ...]] = []
        self.component_rows: list[list[Any]] = []
        self.movement_rows: list[tuple[Any, ...]] = []
        self.component_row: dict[int, list[Any]] = {}
        self.partner_location = {
            pid: f"Workshop of Scale partner {n:03d}" for n, pid in enumerate(people.partner_ids, start=1)
        }
        self._po_number = 0
        self._serial_number = 0

    def servers_supplied(self, server_count: int) -> int:
        """How many of an order's servers get their parts, taken from the budget (the rest stay planned)."""
        received = min(server_count, self.budget // COMPONENTS_PER_SERVER)
        self.budget -= received * COMPONENTS_PER_SERVER
        return received

    def new_po(self, *, deliver_to: int | None, created: datetime, status: str) -> int:
        self._po_number += 1
        supplier_ids = self.catalogue.supplier_ids
        po_id = self.seeding.ids.take(PurchaseOrder)
        self.po_rows.append(
            (
                po_id,
                f"PO-{YEAR}-{self._po_number:04d}",
                supplier_ids[self._po_number % len(supplier_ids)],
                status,
                "EUR",
                deliver_to,
                "",
                "",
                created,
                self.people.pm_id,
                created,
            )
        )
        return po_id

    def receive(
        self,
        *,
        po_id: int,
        part: int,
        price: Decimal,
        quantity: int,
        received: int,
        holder: int | None,
        at: datetime,
        lot_code: str,
    ) -> list[int]:
        """A PO line of `quantity`, of which `received` came as one lot: the new components' ids."""
        ids, supplier_ids = self.seeding.ids, self.catalogue.supplier_ids
        line_id = ids.take(PurchaseOrderLine)
        self.line_rows.append((line_id, po_id, part, quantity, price, received))
        if not received:
            return []
        lot_id = ids.take(BatchLot)
        date_code = f"{at.year % 100:02d}{1 + self.seeding.rng.randrange(52):02d}"
        self.lot_rows.append(
            (lot_id, part, supplier_ids[po_id % len(supplier_ids)], po_id, lot_code, date_code, "TW", at)
        )
        location = self.partner_location[holder] if holder else "Warehouse"
        is_gpu = part == self.catalogue.gpu_id
        component_ids = []
        for _ in range(received):
            self._serial_number += 1
            component_id = ids.take(Component)
            row = [
                component_id,
                part,
                "NVIDIA" if is_gpu else "AMD",
                f"SC{'G' if is_gpu else 'C'}{self._serial_number:08d}",
                lot_id,
                line_id,
                ComponentStatus.IN_STOCK,
                location,
                holder,
                at,
            ]
            self.component_rows.append(row)
            self.component_row[component_id] = row
            self.movement_rows.append(
                (
                    ids.take(StockMovement),
                    component_id,
                    self.people.pm_id,
                    at,
                    "",
                    ComponentStatus.IN_STOCK,
                    "",
                    location,
                    f"Received on PO line {line_id}, lot {lot_code}",
                )
            )
            component_ids.append(component_id)
        return component_ids

    def location(self, component_id: int) -> str:
        return self.component_row[component_id][LOCATION]

    def move(
        self, component_id: int, *, actor: int, at: datetime, status: str, location: str, reason: str
    ) -> None:
        """A status change of a received component, with its stock movement (the ledger's next row)."""
        row = self.component_row[component_id]
        self.movement_rows.append(
            (
                self.seeding.ids.take(StockMovement),
                component_id,
                actor,
                at,
                row[STATUS],
                status,
                row[LOCATION],
                location,
                reason,
            )
        )
        row[STATUS], row[LOCATION] = status, location

    def receive_leftover(self) -> None:
        """The rest of the component budget waits in the warehouse, on a PO of its own."""
        if self.budget < 1:
            return
        catalogue = self.catalogue
        po_id = self.new_po(deliver_to=None, created=EPOCH, status=PurchaseOrderStatus.RECEIVED)
        half = self.budget // 2
        for part, price, quantity, code in (
            (catalogue.gpu_id, catalogue.gpu_price, half, "GLSTOCK"),
            (catalogue.cpu_id, catalogue.cpu_price, self.budget - half, "CLSTOCK"),
        ):
            if quantity:
                self.receive(
                    po_id=po_id,
                    part=part,
                    price=price,
                    quantity=quantity,
                    received=quantity,
                    holder=None,
                    at=EPOCH + timedelta(days=1),
                    lot_code=code,
                )

    def write_purchasing(self) -> None:
        writer = self.seeding.writer
        writer.write(PurchaseOrder, PURCHASE_ORDER_NAMES, self.po_rows)
        writer.write(
            PurchaseOrderLine,
            ["id", "purchase_order", "part", "quantity", "unit_price", "quantity_received"],
            self.line_rows,
        )
        writer.write(BatchLot, LOT_NAMES, self.lot_rows)

    def write_components(self) -> None:
        writer = self.seeding.writer
        writer.write(Component, COMPONENT_NAMES, (tuple(row) for row in self.component_rows))
        writer.write(StockMovement, MOVEMENT_NAMES, self.movement_rows)
