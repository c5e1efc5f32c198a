"""The builds' rows of the scale dataset: the chassis layout (53 connectors), and per order with servers its
servers (assigned to the order's partner) with the layout's connectors, the allocations of their components
and the installations of those already fitted, each status change with its audit event."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from builds.choices import ConnectorKind, ServerStatus
from builds.models import Allocation, ChassisLayout, Connector, Installation, LayoutConnector, Server
from burnin.choices import RunResult
from burnin.models import BurnInRun
from inventory.choices import ComponentStatus
from orders.choices import OrderStatus

from .base import CPUS_PER_SERVER, GPUS_PER_SERVER, Seeding
from .burnin import RUN_RESULT, PlannedRun
from .core import People
from .inventory import Stock
from .orders import PlannedOrder


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
CONNECTOR_FIELDS = ["name", "kind", "numa_node", "pcie_gen", "pcie_lanes", "cooling_block"]
#: The layout's connectors as the values of CONNECTOR_FIELDS, in position order (a server's copy of them).
LAYOUT_VALUES = [
    tuple(row.get(name, "" if name == "cooling_block" else None) for name in CONNECTOR_FIELDS)
    for row in LAYOUT
]

#: The server path (service verbs) to each server status; burn_in_failed waits for rework.
_SERVER_PATH: list[tuple[str, str]] = [
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

SERVER_NAMES = [
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
]
INSTALLATION_NAMES = [
    "id",
    "server",
    "connector",
    "component",
    "installed_by",
    "installed_at",
    "removed_by",
    "removed_at",
    "removal_reason",
]


def server_statuses(order_status: str, count: int) -> list[str]:
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


def write_layout(seeding: Seeding, *, chassis_id: int) -> None:
    """The chassis' layout: the connectors every server of the dataset is given a copy of."""
    ids = seeding.ids
    layout_id = ids.take(ChassisLayout)
    seeding.writer.write(
        ChassisLayout,
        ["id", "chassis", "description", "columns"],
        [(layout_id, chassis_id, "6U, 8 GPUs on PCIe 5.0 (scale dataset)", 4)],
    )
    seeding.writer.write(
        LayoutConnector,
        ["id", "layout", "position", *CONNECTOR_FIELDS],
        [
            (ids.take(LayoutConnector), layout_id, position, *values)
            for position, values in enumerate(LAYOUT_VALUES)
        ],
    )


class Fleet:
    """The servers and what is fitted in them, held as rows until `write_*`; `runs` are the burn-in runs the
    servers past burn-in have had, for the burn-in writer."""

    def __init__(self, seeding: Seeding, *, people: People, stock: Stock) -> None:
        self.seeding = seeding
        self.people = people
        self.stock = stock
        self.server_rows: list[tuple[Any, ...]] = []
        self.connector_rows: list[tuple[Any, ...]] = []
        self.allocation_rows: list[tuple[Any, ...]] = []
        self.installation_rows: list[tuple[Any, ...]] = []
        self.runs: list[PlannedRun] = []

    def add_order(
        self,
        order: PlannedOrder,
        *,
        partner: int,
        procured: datetime,
        received_at: datetime,
        supplied: int,
        gpus: list[int],
        cpus: list[int],
    ) -> None:
        """The order's servers; the first `supplied` have their parts (`gpus`, `cpus`), the rest stay planned
        (without parts nobody builds)."""
        statuses = server_statuses(order.status, order.servers)
        if supplied < order.servers:
            statuses = [
                status if sequence < supplied else ServerStatus.PLANNED
                for sequence, status in enumerate(statuses)
            ]
        partner_user = self.people.member_of[partner]
        for sequence, status in enumerate(statuses, start=1):
            server_id, hostname, connector_ids = self._add_server(
                order, sequence, status, partner=partner, created=procured, changed=received_at
            )
            if sequence > supplied or status == ServerStatus.PLANNED:
                continue
            first = sequence - 1
            server_gpus = gpus[first * GPUS_PER_SERVER : (first + 1) * GPUS_PER_SERVER]
            server_cpus = cpus[first * CPUS_PER_SERVER : (first + 1) * CPUS_PER_SERVER]
            placed = list(zip(server_gpus, GPU_CONNECTORS, strict=True)) + list(
                zip(server_cpus, CPU_CONNECTORS, strict=True)
            )
            installed_at = received_at + timedelta(days=1)
            self._fit(
                server_id,
                hostname,
                status,
                placed=placed,
                connector_ids=connector_ids,
                fitter=partner_user,
                allocated_at=received_at + timedelta(hours=20),
                installed_at=installed_at,
            )
            if status in RUN_RESULT:
                run_id = self.seeding.ids.take(BurnInRun)
                started = installed_at + timedelta(days=2)
                self.runs.append(PlannedRun(run_id, server_id, started, RUN_RESULT[status], server_gpus))

    def _add_server(
        self,
        order: PlannedOrder,
        sequence: int,
        status: str,
        *,
        partner: int,
        created: datetime,
        changed: datetime,
    ) -> tuple[int, str, dict[str, int]]:
        """One server with its connectors and the audit events of its creation and status changes: its id,
        hostname and connector id by name."""
        seeding = self.seeding
        server_id = seeding.ids.take(Server)
        hostname = f"sc-{order.id:05d}-{sequence:02d}"
        built = status not in (ServerStatus.PLANNED, ServerStatus.ASSEMBLING)
        passed = RUN_RESULT.get(status) == RunResult.PASS
        power = 4780.0 + seeding.rng.random() * 80 if passed else None
        self.server_rows.append(
            (
                server_id,
                order.id,
                sequence,
                hostname,
                f"CH{server_id:08d}" if built else "",
                f"SC{server_id:07d}",
                partner,
                status,
                power,
                created,
            )
        )
        pm_id, partner_user = self.people.pm_id, self.people.member_of[partner]
        audit = seeding.audit.record
        audit(
            created, pm_id, "server.create", Server, server_id, hostname, {}, {"status": ServerStatus.PLANNED}
        )
        previous: str = ServerStatus.PLANNED
        for step, (verb, target) in enumerate(SERVER_PATHS[status], start=1):
            before, after = {"status": previous}, {"status": target}
            audit(
                changed + timedelta(days=step),
                partner_user,
                f"server.{verb}",
                Server,
                server_id,
                hostname,
                before,
                after,
            )
            previous = target
        connector_ids: dict[str, int] = {}
        for position, values in enumerate(LAYOUT_VALUES):
            connector_id = seeding.ids.take(Connector)
            connector_ids[str(values[0])] = connector_id
            self.connector_rows.append((connector_id, server_id, position, *values))
        return server_id, hostname, connector_ids

    def _fit(
        self,
        server_id: int,
        hostname: str,
        status: str,
        *,
        placed: list[tuple[int, str]],
        connector_ids: dict[str, int],
        fitter: int,
        allocated_at: datetime,
        installed_at: datetime,
    ) -> None:
        """Allocate the server's components and install them (while it is being assembled, half its GPUs and
        its CPUs are in already), each change with its stock movement."""
        ids, stock, pm_id = self.seeding.ids, self.stock, self.people.pm_id
        for number, (component_id, connector_name) in enumerate(placed):
            self.allocation_rows.append(
                (ids.take(Allocation), component_id, server_id, pm_id, allocated_at, "", None)
            )
            stock.move(
                component_id,
                actor=pm_id,
                at=allocated_at,
                status=ComponentStatus.ALLOCATED,
                location=stock.location(component_id),
                reason=f"Allocated to {hostname}",
            )
            if status == ServerStatus.ASSEMBLING and number % 2:
                continue
            self.installation_rows.append(
                (
                    ids.take(Installation),
                    server_id,
                    connector_ids[connector_name],
                    component_id,
                    fitter,
                    installed_at,
                    None,
                    None,
                    "",
                )
            )
            where = f"{hostname} {connector_name}"
            stock.move(
                component_id,
                actor=fitter,
                at=installed_at,
                status=ComponentStatus.INSTALLED,
                location=where,
                reason=f"Installed in {where}",
            )
        self.seeding.audit.record(
            allocated_at,
            pm_id,
            "server.allocate",
            Server,
            server_id,
            hostname,
            {},
            {"components": len(placed)},
        )

    def write_servers(self) -> None:
        writer = self.seeding.writer
        writer.write(Server, SERVER_NAMES, self.server_rows)
        writer.write(Connector, ["id", "server", "position", *CONNECTOR_FIELDS], self.connector_rows)

    def write_installations(self) -> None:
        writer = self.seeding.writer
        writer.write(
            Allocation,
            [
                "id",
                "component",
                "server",
                "allocated_by",
                "allocated_at",
                "lot_override_reason",
                "released_at",
            ],
            self.allocation_rows,
        )
        writer.write(Installation, INSTALLATION_NAMES, self.installation_rows)
