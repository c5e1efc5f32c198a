"""Demo data of the builds: chassis layouts of the three demo chassis, checklists, and the bench.

- The 6U and the 4U-E10G-GENOAX2 chassis: 8 PCIe 5.0 x16 GPU slots (NUMA 0 and 1), 24 DIMM slots, 2 CPU
  sockets, NVMe bays and PSU bays. Slot names are ours; the seeds give none.
- The 7U chassis (seed 003): two independently cooled blocks of four GPU bays each (riser ports, PCIe 4.0
  x16 on the EPYC 7643 platform), 16 DIMM slots.
- The fleet order's first server is fully built and marked assembled, the second half-way; the 7U machine is
  built as seed 003 tells it: two GPUs first trained at x8 in GPU-A2 and GPU-B3, those connectors are
  blacklisted ("intermittent link training at x8", 13.9 vs 27.7 GB/s) and the GPUs moved to free bays.
"""

from __future__ import annotations

from typing import Any

from builds.choices import BuildStepKind, ConnectorKind
from builds.models import ChassisLayout, ChecklistItem, Connector, LayoutConnector, Server
from builds.services import (
    connector_blacklist,
    server_assign_partner,
    server_install,
    server_mark_assembled,
    server_start_assembly,
    servers_create_for_order,
    step_log,
)
from inventory.choices import ComponentStatus, PartCategory
from inventory.models import Component
from orders.choices import OrderStatus
from orders.services import order_start_assembly
from werkbank.demo_context import DemoContext

CHECKLIST = [
    BuildStepKind.CHASSIS_PREPARATION,
    BuildStepKind.PCIE_TOPOLOGY_CHECK,
    BuildStepKind.CABLE_ROUTING,
    BuildStepKind.FIRMWARE,
    BuildStepKind.QC_SIGNOFF,
]


def _dual_socket_layout(
    *, gpu_kind: str, pcie_gen: int, dimms_per_socket: int, nvme: int, psus: int
) -> list[dict]:
    rows: list[dict] = [
        {"name": "CHASSIS", "kind": ConnectorKind.CHASSIS},
        {"name": "BOARD", "kind": ConnectorKind.BOARD},
        {"name": "CPU0", "kind": ConnectorKind.CPU_SOCKET, "numa_node": 0},
        {"name": "CPU1", "kind": ConnectorKind.CPU_SOCKET, "numa_node": 1},
    ]
    rows += [
        {
            "name": f"PCIE-{i}",
            "kind": gpu_kind,
            "numa_node": 0 if i <= 4 else 1,
            "pcie_gen": pcie_gen,
            "pcie_lanes": 16,
        }
        for i in range(1, 9)
    ]
    rows += [{"name": f"PWR-{i}", "kind": ConnectorKind.GPU_POWER} for i in range(1, 9)]
    rows += [
        {"name": f"DIMM-P{socket}-{chr(65 + slot)}", "kind": ConnectorKind.DIMM_SLOT, "numa_node": socket}
        for socket in (0, 1)
        for slot in range(dimms_per_socket)
    ]
    rows += [{"name": f"NVME-{i}", "kind": ConnectorKind.NVME_BAY} for i in range(nvme)]
    rows += [{"name": f"PSU-{i}", "kind": ConnectorKind.PSU_BAY} for i in range(1, psus + 1)]
    return rows


def _seven_u_layout() -> list[dict]:
    rows: list[dict] = [
        {"name": "CHASSIS", "kind": ConnectorKind.CHASSIS},
        {"name": "BOARD", "kind": ConnectorKind.BOARD},
        {"name": "CPU0", "kind": ConnectorKind.CPU_SOCKET, "numa_node": 0},
        {"name": "CPU1", "kind": ConnectorKind.CPU_SOCKET, "numa_node": 1},
    ]
    for block, numa in (("A", 0), ("B", 1)):
        rows += [
            {
                "name": f"GPU-{block}{i}",
                "kind": ConnectorKind.RISER_PORT,
                "numa_node": numa,
                "pcie_gen": 4,
                "pcie_lanes": 16,
                "cooling_block": block,
            }
            for i in range(1, 5)
        ]
        rows += [
            {"name": f"PWR-{block}{i}", "kind": ConnectorKind.GPU_POWER, "cooling_block": block}
            for i in range(1, 5)
        ]
    rows += [
        {"name": f"DIMM-P{socket}-{chr(65 + slot)}", "kind": ConnectorKind.DIMM_SLOT, "numa_node": socket}
        for socket in (0, 1)
        for slot in range(8)
    ]
    rows += [{"name": f"NVME-{i}", "kind": ConnectorKind.NVME_BAY} for i in range(2)]
    rows += [{"name": f"PSU-{i}", "kind": ConnectorKind.PSU_BAY} for i in range(1, 4)]
    return rows


LAYOUTS = {
    "chassis-6u": (
        "Custom 6U, 8 GPUs on PCIe 5.0 risers, front-to-back pressure path",  # seed 000
        _dual_socket_layout(
            gpu_kind=ConnectorKind.PCIE_SLOT, pcie_gen=5, dimms_per_socket=12, nvme=4, psus=5
        ),
    ),
    "chassis-4u": (
        "4U-E10G-GENOAX2, dual EPYC 9004, up to 8 GPUs, 24 DIMM slots",  # seed 001
        _dual_socket_layout(
            gpu_kind=ConnectorKind.PCIE_SLOT, pcie_gen=5, dimms_per_socket=12, nvme=4, psus=4
        ),
    ),
    "chassis-7u": (
        "Custom 7U, two independently cooled blocks of four GPU bays",  # seed 003
        _seven_u_layout(),
    ),
}


def _step_data(server: Server, kind: str) -> dict[str, Any]:
    """What the technician entered for a checklist step (builds.steps defines the fields): the server's
    own PSU and GPU counts from its configuration, firmware as shipped in August 2026."""
    configuration = server.order.configuration
    gpus = sum(line.quantity for line in configuration.lines.all() if line.part.category == PartCategory.GPU)
    return {
        BuildStepKind.CHASSIS_PREPARATION: {
            "standoff_torque_nm": "0.60",
            "fans_fitted": 6,
            "psu_count": configuration.psu_count,
            "dust_filters_fitted": True,
        },
        BuildStepKind.PCIE_TOPOLOGY_CHECK: {
            "gpus_detected": gpus,
            "link_gen": "Gen5",
            "link_width": "x16",
            "h2d_gbps_min": "53.2",
            "numa_balanced": True,
        },
        BuildStepKind.CABLE_ROUTING: {"gpu_power_cables": gpus, "cable_ties": 24, "airflow_clear": True},
        BuildStepKind.FIRMWARE: {
            "bios_version": "2.1.4",
            "bmc_version": "13.06.09",
            "gpu_vbios_version": "98.02.2E.00.01",
            "nvidia_driver": "575.57.08",
        },
        BuildStepKind.QC_SIGNOFF: {
            "memory_test_passes": 4,
            "cpu_idle_temp_c": "38.5",
            "gpu_idle_temp_c": "34.0",
            "wall_power_idle_w": 612,
            "torque_checked": True,
        },
    }.get(kind, {})


#: Seed 003's finding, as the workshop wrote it up.
BLACKLIST_EVIDENCE = (
    "Host-to-device bandwidth per card under load: 13.9 GB/s here against 27.7 GB/s on the other "
    "cards; the link trained at Gen4 x8 instead of x16. A physical-layer fault of the chassis connector, not "
    "of the card, board or riser concept: the GPU ran at x16 after the move."
)


#: What the workshop writes at each checklist step of a fleet server (8× RTX 5090 on PCIe 5.0).
FLEET_STEP_NOTES = {
    BuildStepKind.CHASSIS_PREPARATION: "Chassis inspected, risers and fan wall fitted; all fans spin up.",
    BuildStepKind.PCIE_TOPOLOGY_CHECK: "lspci: all GPUs at Gen5 x16, four per NUMA node.",
    BuildStepKind.CABLE_ROUTING: "12V-2x6 cables along the side channel; front-to-back airflow path clear.",
    BuildStepKind.FIRMWARE: "BIOS, BMC and GPU VBIOS on the current release; settings per build sheet.",
    BuildStepKind.QC_SIGNOFF: "Visual check, screws and power plugs seated, asset labels on. Signed off.",
}

#: The 7U machine's last checklist steps, after the two GPUs moved.
SEVEN_U_STEP_NOTES = {
    BuildStepKind.CABLE_ROUTING: "Power cables re-routed for GPU-A4 and GPU-B4; both cooling blocks closed.",
    BuildStepKind.FIRMWARE: "BIOS and BMC on the current release; GPU-A2 and GPU-B3 left empty.",
    BuildStepKind.QC_SIGNOFF: "Blacklisted bays GPU-A2 and GPU-B3 taped off and labelled. Signed off.",
}


def seed(context: DemoContext) -> None:
    pm = context.pm
    for key, (description, rows) in LAYOUTS.items():
        layout, created = ChassisLayout.objects.get_or_create(
            chassis=context.parts[key], defaults={"description": description, "columns": 8}
        )
        if created:
            LayoutConnector.objects.bulk_create(
                LayoutConnector(layout=layout, position=position, **row) for position, row in enumerate(rows)
            )
            context.created += 1
    for order in context.orders.values():
        for kind in CHECKLIST:
            ChecklistItem.objects.get_or_create(configuration=order.configuration, kind=kind)

    partner = context.organizations["Kentino Werkstatt"]
    fleet = context.orders["Vastfleet Rentals GmbH"]
    seven_u = context.orders["Inferenzlabor GmbH"]
    for order in (fleet, seven_u):
        servers_create_for_order(order=order, actor=pm)  # adds the connectors the layouts now define
        for server in order.servers.filter(partner__isnull=True):
            server_assign_partner(server=server, actor=pm, partner=partner)

    if not fleet.servers.filter(installations__isnull=False).exists():
        servers = list(fleet.servers.order_by("sequence"))
        _build(servers[0], pm, gpu_lot_index=1, steps=CHECKLIST, assembled=True)
        _build(servers[1], pm, gpu_lot_index=2, steps=CHECKLIST[:2], assembled=False, gpus_only=True)
        context.created += 1
    if not seven_u.servers.filter(installations__isnull=False).exists():
        _build_seven_u(seven_u.servers.get(), pm)
        context.created += 1
    # Both orders' servers are on the bench: the orders themselves are in assembly, as a PM would move them.
    for order in (fleet, seven_u):
        order.refresh_from_db()
        if order.status == OrderStatus.PROCUREMENT:
            context.orders[order.customer.name] = order_start_assembly(
                order=order, actor=pm, note="All parts received at Kentino Werkstatt; assembly started"
            )


def _free_components(order: Any, category: str, *, lot_index: int | None = None) -> list[Component]:
    components = Component.objects.filter(
        status=ComponentStatus.IN_STOCK,
        part__category=category,
        po_line__purchase_order__order_link__order=order,
    ).order_by("serial")
    if lot_index is not None:
        components = components.filter(lot__lot_code__endswith=f"-{lot_index:02d}")
    return list(components)


def _install_all(server: Server, pm: Any, category: str, connectors: list[str], **lot: Any) -> None:
    for component, connector in zip(
        _free_components(server.order, category, **lot), connectors, strict=False
    ):
        server_install(server=server, actor=pm, component=component, connector_name=connector)


def _names(server: Server, kind: str) -> list[str]:
    return list(
        Connector.objects.filter(server=server, kind=kind).order_by("position").values_list("name", flat=True)
    )


def _build(
    server: Server, pm: Any, *, gpu_lot_index: int, steps: list, assembled: bool, gpus_only: bool = False
) -> None:
    server_start_assembly(server=server, actor=pm, note="Parts received and checked; assembly started")
    quantities = {
        line.part.category: line.quantity for line in server.order.configuration.lines.select_related("part")
    }
    _install_all(
        server, pm, PartCategory.GPU, _names(server, ConnectorKind.PCIE_SLOT), lot_index=gpu_lot_index
    )
    if not gpus_only:
        for category, kind in (
            (PartCategory.CHASSIS, ConnectorKind.CHASSIS),
            (PartCategory.MOTHERBOARD, ConnectorKind.BOARD),
            (PartCategory.CPU, ConnectorKind.CPU_SOCKET),
            (PartCategory.MEMORY, ConnectorKind.DIMM_SLOT),
            (PartCategory.STORAGE, ConnectorKind.NVME_BAY),
            (PartCategory.PSU, ConnectorKind.PSU_BAY),
        ):
            _install_all(server, pm, category, _names(server, kind)[: quantities.get(category, 0)])
    for kind in steps:
        step_log(
            server=server,
            actor=pm,
            kind=kind,
            notes=FLEET_STEP_NOTES[kind],
            data=_step_data(server, kind),
        )
    if assembled:
        server_mark_assembled(server=server, actor=pm, note="All checks done")


def _build_seven_u(server: Server, pm: Any) -> None:
    server_start_assembly(server=server, actor=pm, note="Kentino Werkstatt, Prague, August 2026")
    for category, kind in (
        (PartCategory.CHASSIS, ConnectorKind.CHASSIS),
        (PartCategory.CPU, ConnectorKind.CPU_SOCKET),
        (PartCategory.MEMORY, ConnectorKind.DIMM_SLOT),
        (PartCategory.STORAGE, ConnectorKind.NVME_BAY),
        (PartCategory.PSU, ConnectorKind.PSU_BAY),
    ):
        _install_all(server, pm, category, _names(server, kind))
    # First power-on: six GPUs in A1-A3 and B1-B3; all were detected and nvidia-smi looked perfect.
    _install_all(server, pm, PartCategory.GPU, ["GPU-A1", "GPU-A2", "GPU-A3", "GPU-B1", "GPU-B2", "GPU-B3"])
    step_log(
        server=server,
        actor=pm,
        kind=BuildStepKind.CHASSIS_PREPARATION,
        notes="Two cooling blocks fitted",
        data=_step_data(server, BuildStepKind.CHASSIS_PREPARATION),
    )
    step_log(
        server=server,
        actor=pm,
        kind=BuildStepKind.PCIE_TOPOLOGY_CHECK,
        notes="Per-card H2D bandwidth under load: GPU-A2 and GPU-B3 at 13.9 GB/s (Gen4 x8), the others 27.7.",
        data={
            "gpus_detected": 6,
            "link_gen": "Gen4",
            "link_width": "x8",
            "h2d_gbps_min": "13.9",
            "numa_balanced": True,
        },
    )
    for faulty, target in (("GPU-A2", "GPU-A4"), ("GPU-B3", "GPU-B4")):
        connector_blacklist(
            connector=Connector.objects.get(server=server, name=faulty),
            actor=pm,
            reason="intermittent link training at x8",
            evidence=BLACKLIST_EVIDENCE,
            measurements={"h2d_gbps": 13.9, "expected_gbps": 27.7, "link": "Gen4 x8"},
            target_connector_name=target,
        )
    step_log(
        server=server,
        actor=pm,
        kind=BuildStepKind.PCIE_TOPOLOGY_CHECK,
        notes="After the move all six cards confirmed Gen4 x16 under load.",
        data={
            "gpus_detected": 6,
            "link_gen": "Gen4",
            "link_width": "x16",
            "h2d_gbps_min": "27.7",
            "numa_balanced": True,
        },
    )
    for kind in (BuildStepKind.CABLE_ROUTING, BuildStepKind.FIRMWARE, BuildStepKind.QC_SIGNOFF):
        step_log(
            server=server,
            actor=pm,
            kind=kind,
            notes=SEVEN_U_STEP_NOTES[kind],
            data=_step_data(server, kind),
        )
    server_mark_assembled(server=server, actor=pm, note="Build complete; all six GPUs at Gen4 x16")
