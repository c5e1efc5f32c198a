"""Demo data of the burn-in: probe reports for the demo's assembled servers, ingested as uploads are.

- The 7U machine of Inferenzlabor (seed 003), after its two GPUs were moved off the faulty connectors: its six
  installed cards (their real serials) at Gen4 x16 and 27.7 GB/s, FP16 291–302 TFLOPS, VRAM ~1,471 GB/s, a
  peak of 88 °C against the ~90 °C slowdown, DIMMs A1 and B1 with correctable ECC in the same second at
  4 h 30 m and 4 h 01 m, and the `burn` stage interrupted by the workshop's power distribution after about
  20 hours of sustained mixed load, as the seed tells it: short of the 72 h the order promises
  (`burnin_too_short`). It stays in burn-in: the interrupted stage and the short run wait for a PM's decision.
- The first server of the Vastfleet fleet (8× RTX 5090 on a Gen5 platform): its first 72 h run, five days
  earlier, failed: GPU 2 with uncorrectable ECC errors in its memory, GPU 5 with compute errors and Xid 13.
  The PM failed the gate; on the bench the partner took both cards out as faulty (for their supplier return)
  and put in two of the order's spares (another lot: a PM's override of the same-lot rule). The second run is
  clean, and the PM passes it. Those two cards and the claim its customer files later on a third card of the
  same lot are the fleet's flagged lot (3 of 8 failed; pm.quality). GeForce cards report no serial, so the
  runs bind their cards by UUID (the swapped cards' UUIDs differ between the runs).

Both reports are the seed 003 report of the test fixtures (written by the probe's own code, see
`tests/fixtures/burnin/make_seed003_report.py`), with the demo server's serials and hostname and the figures
above; the fleet's is reshaped to eight RTX 5090 cards.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings

from builds.choices import ConnectorKind, ServerStatus
from builds.models import Installation, Server
from builds.services import (
    server_allocate,
    server_install,
    server_mark_assembled,
    server_remove,
    server_start_assembly,
)
from burnin.analysis.common import iso, parse_time
from burnin.models import BurnInRun
from burnin.services.gate import server_fail_burnin, server_pass_burnin
from burnin.services.ingest import report_ingest
from inventory.choices import ComponentStatus, PartCategory
from inventory.models import Component
from orders.choices import OrderStatus
from orders.services import order_start_burn_in
from werkbank.demo_context import DemoContext

SEED_003_REPORT = Path(settings.BASE_DIR) / "tests" / "fixtures" / "burnin" / "seed003-report.json"

#: RTX 5090 figures for the fleet's run: FP16 dense ~209 TFLOPS, 1,792 GB/s GDDR7 (≈ 1,650 measured),
#: 575 W board power, PCIe Gen5 x16 (≈ 53.6 GB/s host to device).
RTX_5090 = {
    "name": "NVIDIA GeForce RTX 5090",
    "pci_device_id": "2B8510DE",
    "tflops": [209.8, 208.1, 210.4, 207.9, 209.2, 208.8, 210.1, 207.5],
    "vram_gbps": 1650.0,
    "h2d_gbps": 53.6,
    "d2h_gbps": 54.9,
    "peak_c": [76, 78, 77, 79, 75, 78, 77, 76],
    "tlimit_c": 90,
    "power_w": 561.0,
    "limit_w": 575.0,
}


def seed(context: DemoContext) -> None:
    pm = context.pm
    seven_u = context.orders["Inferenzlabor GmbH"].servers.order_by("sequence").first()
    fleet = context.orders["Vastfleet Rentals GmbH"].servers.order_by("sequence").first()
    base = json.loads(SEED_003_REPORT.read_text())
    for server, report, passes in (
        (seven_u, _seven_u_report(base, seven_u), False),
        (fleet, _fleet_report(base, fleet), True),
    ):
        if server is None or BurnInRun.objects.filter(server=server).exists():
            continue
        if server.status not in (ServerStatus.ASSEMBLED, ServerStatus.BURN_IN):
            continue
        if passes:
            _failed_first_run(server, pm, base)
        report_ingest(server=server, actor=pm, raw=json.dumps(report).encode())
        context.created += 1
        if passes:
            server_pass_burnin(
                server=server, actor=pm, note="Clean 72 h burn-in, all eight cards at Gen5 x16."
            )
    # The 7U order's one machine is in burn-in, so the order is too (the fleet's are still on the bench).
    order = context.orders["Inferenzlabor GmbH"]
    order.refresh_from_db()
    on_bench = order.servers.filter(status=ServerStatus.ASSEMBLING).exists()
    if order.status == OrderStatus.ASSEMBLY and not on_bench:
        context.orders[order.customer.name] = order_start_burn_in(
            order=order, actor=pm, note="The machine is assembled; its 72 h burn-in is running"
        )


#: The fleet server's first run: which cards failed and how (burnin.analysis.compute's ECC and compute rules).
FAILED_GPUS = {2: "uncorrectable ECC errors in its memory", 5: "compute errors and Xid 13 under load"}
#: How long before the clean run the failed one started.
FIRST_RUN_EARLIER = timedelta(days=5)


def _failed_first_run(server: Server, pm: Any, base: dict[str, Any]) -> None:
    """The fleet server's first burn-in, failed by two cards; the gate failed, and the bench's rework: both
    cards out as faulty, two of the order's spares in."""
    report = _earlier(_fleet_report(base, server), FIRST_RUN_EARLIER)
    for gpu in report["gpus"]:
        if gpu["index"] not in FAILED_GPUS:
            continue
        gpu["uuid"] = gpu["uuid"][:-12] + f"{0xDEAD00 + gpu['index']:012d}"  # the card that came out
        if gpu["index"] == 2:
            gpu["ecc"].update(mode="Enabled")
            gpu["ecc"]["end"].update(unc_total=3, dram_unc=3)
        else:
            gpu["burn"].update(mismatches=41, xids=[13])
    report_ingest(server=server, actor=pm, raw=json.dumps(report).encode())
    reason = "GPU 2: uncorrectable ECC errors; GPU 5: compute errors and Xid 13. Both cards go back."
    server = server_fail_burnin(server=server, actor=pm, reason=reason)
    server = server_start_assembly(server=server, actor=pm, note="Rework: two failed cards are replaced")
    gpu_slots = (
        Installation.objects.active()
        .filter(server=server, connector__kind=ConnectorKind.PCIE_SLOT)
        .select_related("connector", "component")
        .order_by("connector__position")
    )
    spares = Component.objects.filter(
        status=ComponentStatus.IN_STOCK,
        part__category=PartCategory.GPU,
        po_line__purchase_order__order_link__order=server.order,
    ).order_by("-lot__lot_code", "serial")
    for index, installation in enumerate(list(gpu_slots)):
        if index not in FAILED_GPUS:
            continue
        spare = spares.exclude(lot=installation.component.lot).first()
        assert spare is not None, "the fleet order has spares in a lot of their own (orders/demo.py)"
        server_remove(
            installation=installation,
            actor=pm,
            reason=f"Failed its burn-in: {FAILED_GPUS[index]}",
            failed=True,
        )
        server_allocate(
            server=server,
            actor=pm,
            components=[spare],
            override_reason=f"Rework: replaces a failed card of lot {installation.component.lot.lot_code} "
            "from the order's spares",
        )
        server_install(server=server, actor=pm, component=spare, connector_name=installation.connector.name)
    server_mark_assembled(server=server, actor=pm, note="Two cards replaced; ready for a second burn-in")


def _earlier(report: dict[str, Any], delta: timedelta) -> dict[str, Any]:
    """The report as if it had run `delta` earlier: the probe's, the stages', the telemetry's and the BMC
    events' times moved back (the telemetry's offsets are relative and stay)."""
    keys = {"started_at", "ended_at", "t0", "ts_utc"}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in keys and isinstance(item, str):
                    value[key] = iso(parse_time(item) - delta)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk({k: report[k] for k in ("probe", "stages", "telemetry", "host_memory") if k in report})
    return report


def _gpu_serials(server: Server) -> list[str]:
    """The installed GPUs' serials in connector order: the order the probe numbers them in (by PCI bus)."""
    return list(
        Installation.objects.active()
        .filter(server=server, component__part__category=PartCategory.GPU)
        .order_by("connector__position")
        .values_list("component__serial", flat=True)
    )


def _stretch(report: dict[str, Any], *, factor: float, tile: bool = False) -> None:
    """Stretch the seed 003 report's time line by `factor` from its start: stages, the probe's end, and the
    telemetry, either at a longer interval or (`tile`) at the same interval, its rows repeated."""
    start = parse_time(report["probe"]["started_at"])

    def later(text: str | None) -> str | None:
        if text is None:
            return None
        moment = parse_time(text)
        return iso(start + (moment - start) * factor)

    report["probe"]["ended_at"] = later(report["probe"]["ended_at"])
    for stage in report["stages"]:
        stage["started_at"], stage["ended_at"] = later(stage["started_at"]), later(stage["ended_at"])
    telemetry = report["telemetry"]
    offset = _columns(report)["t_offset_s"]
    if tile:
        interval = telemetry["interval_s"]
        for key, rows in telemetry["gpu_series"].items():
            count = round(len(rows) * factor)
            repeated = [copy.copy(rows[i % len(rows)]) for i in range(count)]
            for i, row in enumerate(repeated):
                row[offset] = rows[0][offset] + i * interval
            telemetry["gpu_series"][key] = repeated
        return
    telemetry["interval_s"] = telemetry["interval_s"] * factor
    report["params"]["interval_s"] = report["params"]["interval_s"] * factor
    for rows in telemetry["gpu_series"].values():
        for row in rows:
            row[offset] = round(row[offset] * factor, 3)


def _columns(report: dict[str, Any]) -> dict[str, int]:
    return {name: index for index, name in enumerate(report["telemetry"]["gpu_columns"])}


def _seven_u_report(base: dict[str, Any], server: Server | None) -> dict[str, Any]:
    """Seed 003 after the fix: GPUs 2 and 4 moved to free bays and trained at Gen4 x16."""
    report = copy.deepcopy(base)
    if server is None:
        return report
    report["host"]["hostname"] = server.hostname
    _stretch(report, factor=2)  # the seed's ~20 h of mixed load before the power distribution failed
    column = _columns(report)
    healthy = report["gpus"][0]
    for gpu, serial in zip(report["gpus"], _gpu_serials(server), strict=False):
        gpu["serial"] = serial
        if gpu["pcie"]["load"]["width"] == 16:
            continue
        for key in ("idle", "load"):
            gpu["pcie"][key]["width"] = 16
        for key in ("gpu", "upstream", "gpu_end", "upstream_end"):
            gpu["pcie"]["sysfs"][key]["current_link_width"] = 16
        gpu["bench"]["h2d_gbps"] = copy.deepcopy(healthy["bench"]["h2d_gbps"])
        gpu["bench"]["d2h_gbps"] = healthy["bench"]["d2h_gbps"]
        for row in report["telemetry"]["gpu_series"][str(gpu["index"])]:
            row[column["pcie_width"]] = 16
    return report


def _fleet_report(base: dict[str, Any], server: Server | None) -> dict[str, Any]:
    """A clean run of eight RTX 5090 on a Gen5 platform, shaped from the seed 003 report."""
    report = copy.deepcopy(base)
    if server is None:
        return report
    spec = RTX_5090
    report["host"]["hostname"] = server.hostname
    _stretch(
        report, factor=7.2, tile=True
    )  # 10 h of the seed's report to the 72 h every customer is promised
    report["outcome"] = {"status": "ok", "exit_code": 0, "reasons": []}
    for stage in report["stages"]:
        if stage["name"] == "burn":
            stage["status"], stage["reason"] = "ok", None
    report["host_memory"]["sel_events"] = [
        event for event in report["host_memory"]["sel_events"] if event.get("memory_kind") is None
    ]
    column = _columns(report)
    template, series = report["gpus"][0], report["telemetry"]["gpu_series"]["0"]
    gpus, all_series = [], {}
    for index, _serial in enumerate(_gpu_serials(server)[:8]):
        gpu = copy.deepcopy(template)
        gpu.update(
            index=index,
            serial="N/A",  # a GeForce card has no serial for nvidia-smi: bound by UUID
            name=spec["name"],
            pci_device_id=spec["pci_device_id"],
            uuid=f"GPU-5090{index:04d}-0000-4000-8000-{index:012d}",
            pci_bus_id=f"00000000:{0x18 + 0x20 * index:02X}:00.0",
            numa_node=0 if index < 4 else 1,
        )
        pcie = gpu["pcie"]
        pcie["expected"].update(gen=5, width=16)
        pcie["load"].update(gen=5, width=16, max_gen=5, max_width=16, device_max_gen=5, host_max_gen=5)
        for key in ("gpu", "upstream", "gpu_end", "upstream_end"):
            pcie["sysfs"][key].update(
                bdf=f"0000:{0x18 + 0x20 * index:02x}:00.0",
                max_gen=5,
                max_link_speed="32.0 GT/s PCIe",
                current_link_width=16,
            )
        bench = gpu["bench"]
        bench.update(device=index, d2h_gbps=spec["d2h_gbps"], vram_gbps=spec["vram_gbps"])
        bench["fp16_tflops"] = spec["tflops"][index]
        bench["numa_node"] = gpu["numa_node"]
        bench["h2d_gbps"].update(
            default=spec["h2d_gbps"],
            local=spec["h2d_gbps"],
            remote=round(spec["h2d_gbps"] * 0.8, 1),
            under_load=spec["h2d_gbps"] - 0.2,
            concurrent=spec["h2d_gbps"] - 1.1,
        )
        gpu["burn"].update(device=index, duration_s=72 * 3600.0)
        peak = spec["peak_c"][index]
        gpu["thermal"].update(peak_gpu_c=peak, min_tlimit_c=spec["tlimit_c"] - peak)
        gpu["power"].update(mean_w=spec["power_w"], max_w=spec["limit_w"], limit_w=spec["limit_w"])
        gpus.append(gpu)
        rows = copy.deepcopy(series)
        for row in rows:
            loaded = (row[column["util_pct"]] or 0) >= 80
            temp = peak - (0 if loaded else 40) - (row[column["t_offset_s"]] // 120) % 3
            row[column["temp_c"]] = temp
            row[column["tlimit_c"]] = spec["tlimit_c"] - temp
            row[column["power_w"]] = spec["power_w"] if loaded else 32.0
            row[column["pcie_gen"]] = 5 if loaded else 1
            row[column["pcie_width"]] = 16
        all_series[str(index)] = rows
    report["gpus"] = gpus
    report["telemetry"]["gpu_series"] = all_series
    return report
