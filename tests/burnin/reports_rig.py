"""Reports for the analysis tests: small hand-made ones, seed 003's fixture, and one built from the real H200
captures.

The hand-made reports have four healthy cards unless a test says otherwise.

The shape is the probe's (``probe/report.py``), trimmed to what the analysis reads. The healthy baseline
is a Gen5 card on a Gen5 host at x16, loaded at 100 %, 70 °C with 20 °C of T.Limit, power-capped at its
limit, with no errors anywhere: it yields no finding except the software power cap note.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from burnin.analysis import Finding
from probe import hostinfo, load, nvxml
from probe.burnin import BurnIn
from probe.common import UTC, iso
from probe.sampler import GPU_COLUMNS, Telemetry, select_fields
from probe.sel import parse_line

LOADED = {
    "temp_c": 70,
    "tlimit_c": 20,
    "mem_temp_c": None,
    "power_w": 595.0,
    "sm_mhz": 2300,
    "util_pct": 100,
    "pcie_gen": 5,
    "pcie_width": 16,
    "clocks_event_mask": 0x4,
    "ecc_dram_corr": 0,
    "replay": None,
    "pstate": 0,
    "ecc_dram_unc": 0,
    "mem_used_mib": 80000,
}
IDLE = dict(LOADED, temp_c=35, tlimit_c=55, power_w=30.0, sm_mhz=180, util_pct=0, pcie_gen=1)
IDLE.update(clocks_event_mask=0x1, pstate=8)


def rows(n: int = 60, interval: float = 10.0, **values: Any) -> list[list[Any]]:
    """``n`` telemetry rows in the probe's column order; a value may be a function of the row number."""
    spec = dict(LOADED, **values)
    out = []
    for i in range(n):
        row: list[Any] = [i * interval]
        for column in GPU_COLUMNS[1:]:
            value = spec[column]
            row.append(value(i) if callable(value) else value)
        out.append(row)
    return out


def gpu(index: int) -> dict[str, Any]:
    """One healthy card's ``gpus[]`` entry."""
    return {
        "index": index,
        "uuid": f"GPU-0000-{index}",
        "serial": f"SN{index:04d}",
        "pci_bus_id": f"00000000:{0x18 + 0x20 * index:02X}:00.0",
        "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
        "pci_device_id": "2BB510DE",
        "numa_node": index // 2,
        "pcie": {
            "expected": {"gen": 5, "width": 16, "source": "GPU capability"},
            "sysfs": {"available": True, "gpu": {"max_link_width": 16, "max_gen": 5}, "upstream": None},
            "idle": {"pstate": "P8", "gen": 1, "width": 16},
            "load": {
                "pstate": "P0",
                "gen": 5,
                "width": 16,
                "max_gen": 5,
                "max_width": 16,
                "device_max_gen": 5,
                "host_max_gen": 5,
                "samples": 60,
            },
            "replay_counter": {"start": 0, "end": 0},
            "aer_correctable": {"start": 0, "end": 0},
        },
        "bench": {
            "h2d_gbps": {
                "default": 55.4,
                "local": 55.4,
                "remote": 44.3,
                "under_load": 55.1,
                "concurrent": 54.0,
                "method": "test",
            },
            "d2h_gbps": 56.0,
            "fp16_tflops": 500.0,
            "vram_gbps": 1500.0,
            "under_load_method": "other GPUs running FP16 GEMM",
        },
        "burn": {
            "duration_s": 600.0,
            "matmuls_checked": 10000,
            "mismatches": 0,
            "nans": 0,
            "reference_nans": 0,
            "cuda_errors": 0,
            "errors": [],
            "xids": [],
        },
        "xids": [],
        "thermal": {
            "peak_gpu_c": 70,
            "min_tlimit_c": 20,
            "thresholds": {"source": "tlimit_offsets", "max_op_c": None, "slowdown_c": None},
        },
        "clocks_events": {
            "seen_active": ["sw_power_cap"],
            "sw_power_cap_fraction": 1.0,
            "counters_delta_us": {"sw_power_cap": 600_000_000, "hw_therm_slowdown": 0, "hw_power_brake": 0},
        },
        "power": {"mean_w": 595.0, "max_w": 600.0, "limit_w": 600.0},
        "ecc": {
            "mode": "Enabled",
            "start": {"dram_corr": 0, "dram_unc": 0, "corr_total": 0, "unc_total": 0},
            "end": {"dram_corr": 0, "dram_unc": 0, "corr_total": 0, "unc_total": 0},
            "remap": {"corr": 0, "unc": 0, "pending": False, "failure": False},
        },
        "snapshots": {"start": {"temp_c": 35, "tlimit_c": 55, "pcie": {}}, "end": None},
    }


def report(
    n_gpus: int = 4, *, telemetry: bool = True, sel_events: list[dict] | None = None
) -> dict[str, Any]:
    """A healthy run of ``n_gpus`` cards: every stage ok, 10 min of telemetry every 10 s, an empty SEL."""
    return {
        "schema": "gpu-burnin-report",
        "schema_version": "1.0.0",
        "probe": {"started_at": "2026-11-29T10:00:00Z", "ended_at": "2026-11-29T10:12:00Z", "errors": []},
        "stages": [
            {"name": name, "status": "ok", "started_at": None, "ended_at": None, "reason": None}
            for name in ("inventory", "telemetry", "bench", "burn", "finalize")
        ],
        "host": {"bmc": {"available": True, "sel_time_offset_s": 1}},
        "gpus": [gpu(i) for i in range(n_gpus)],
        "host_memory": {
            "sel_events": list(sel_events or []),
            "edac": {"present": True, "reason": None, "mc": [{"name": "mc0", "ce": 0, "ue": 0}]},
        },
        "dmesg": {"available": True, "link_limited": [], "xid": []},
        "telemetry": {
            "interval_s": 10.0,
            "t0": "2026-11-29T10:00:30Z",
            "gpu_columns": list(GPU_COLUMNS),
            "gpu_series": {str(i): rows() for i in range(n_gpus)} if telemetry else {},
        },
        "findings": [],
    }


def with_series(doc: dict[str, Any], index: int, **values: Any) -> dict[str, Any]:
    """Replace one GPU's telemetry by ``rows(**values)`` (``n`` and ``interval`` allowed)."""
    doc["telemetry"]["gpu_series"][str(index)] = rows(**values)
    return doc


def sel_event(
    record: int, when: str, dimm: str, kind: str = "Correctable ECC", during_run: bool | None = True
) -> dict:
    """A SEL memory event through the probe's parser: ``when`` is ``MM/DD/YYYY HH:MM:SS``, ``dimm`` like
    ``A1`` (a Supermicro ``@DIMMA1(CPU1)`` decode)."""
    date, time = when.split()
    event = parse_line(f"{record:x} | {date} | {time} | Memory #0xe2 | {kind} @DIMM{dimm}(CPU1) | Asserted")
    assert event is not None
    if during_run is not None:
        event["during_run"] = during_run
    return event


def patched(doc: dict[str, Any], change: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    """A deep copy of ``doc`` changed by ``change``."""
    copied = copy.deepcopy(doc)
    change(copied)
    return copied


def dimm_bursts(*times: str) -> list[dict]:
    """Correctable ECC on DIMMs A1 and B1 in the same second, at each of `times` (``MM/DD/YYYY HH:MM:SS``)."""
    events, record = [], 1
    for when in times:
        for dimm in ("A1", "B1"):
            events.append(sel_event(record, when, dimm))
            record += 1
    return events


# --- reading the findings ------------------------------------------------------------------------------


def keys(findings: list[Finding]) -> set[tuple[str, str, int | str]]:
    """Each finding as (code, severity, subject), the way the tests compare them."""
    return {(f.code, f.severity, f.subject) for f in findings}


def only(findings: list[Finding], code: str) -> list[Finding]:
    """The findings of one rule."""
    return [f for f in findings if f.code == code]


#: The baseline's EDAC reads 0: any SEL memory error there comes with this note (rule 16).
EDAC_BLIND = ("edac_firmware_first_blind", "info", "host")


def baseline_notes(n: int = 4) -> set[tuple[str, str, int | str]]:
    """A healthy run's findings: the software power cap note on every card, nothing else."""
    return {("power_capped", "info", i) for i in range(n)}


# --- the captured reports ------------------------------------------------------------------------------

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SEED003 = FIXTURES / "burnin" / "seed003-report.json"
H200 = FIXTURES / "gpu" / "h200"


def build_h200_report(sysfs_root: Path) -> dict:
    """A report of the captured H200 run, assembled by the probe's own code from the raw captures.

    ``nvidia-smi -q -x`` (start and end snapshot), ``--query-gpu`` telemetry of ~2 min (idle, 100 s of FP16
    GEMM at ~690 W under the software power cap, ramp down) at its real timestamps, sysfs, ``topo -m``, and
    the load result (pinned H2D/D2H, FP16 TFLOPS, device-to-device copy, 58,300 checked matmuls).
    """
    doc = nvxml.parse_xml((H200 / "nvidia-smi-q-idle.xml").read_text())
    lines = (H200 / "telemetry-load.csv").read_text().splitlines()
    names = [name.split(" [")[0].strip() for name in lines[0].split(",")]
    _, sources = select_fields(set(names))
    bus = doc["gpus"][0]["pci_bus_id"]
    telemetry = Telemetry(1.0, names, sources, {bus: 0})
    stamps = [
        datetime.strptime(line.split(",")[0], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=UTC)
        for line in lines[1:]
    ]
    telemetry.t0, telemetry._t0_mono = stamps[0], 0.0
    for stamp, line in zip(stamps, lines[1:], strict=True):
        assert telemetry.add(line, (stamp - stamps[0]).total_seconds()) == 1
    result = json.loads((H200 / "load-result.json").read_text())

    run = BurnIn("h200-report.json", result["burnin_seconds"], 1.0, sysfs_root=str(sysfs_root))
    run.started_at = stamps[0] - timedelta(seconds=5)
    run.ended_at = stamps[-1] + timedelta(seconds=5)
    run.doc_start = run.doc_end = doc
    run.pci_start = {0: hostinfo.read_pci(bus, str(sysfs_root))}
    run.pci_end = {bus: run.pci_start[0]}
    run.topo = {
        "available": True,
        "reason": None,
        "gpus": hostinfo.parse_topo((H200 / "topo.txt").read_text()),
    }
    run.host = {"hostname": "h200-vm", "kernel": None, "os": None, "python": None, "cpu": None, "tools": {}}
    run.bmc.update(reason="ipmitool not found on PATH")
    run.edac_start = run.edac_end = hostinfo.read_edac(str(sysfs_root))
    run.rasdaemon = {"present": False, "reason": "not read", "db": None, "counts": None}
    run.telemetry = telemetry
    run.backend = load.Backend(True, name="torch", version=result["torch"], device_count=1)
    run.bench = {
        0: {
            "device": 0,
            "h2d_gbps": {
                "default": round(result["h2d_pinned_GBps"], 3),
                "local": None,
                "remote": None,
                "under_load": None,
                "concurrent": None,
                "method": "torch pinned copies, CUDA events",
            },
            "d2h_gbps": round(result["d2h_pinned_GBps"], 3),
            "fp16_tflops": round(result["matmul_float16_TFLOPS"], 2),
            "fp16_method": "torch matmul float16",
            "vram_gbps": round(result["d2d_GBps_read_plus_write"], 1),
            "vram_method": "d2d_copy_rw",
            "numa_node": 0,
            "numactl_used": False,
            "under_load_method": None,
            "errors": [],
        }
    }
    run.burn = {
        0: {
            "device": 0,
            "duration_s": round(result["burnin_seconds"], 1),
            "matmuls_checked": result["burnin_matmuls"],
            "mismatches": result["burnin_mismatch_checks"],
            "nans": 0,
            "reference_nans": 0,
            "cuda_errors": 0,
            "errors": [],
            "compare": {"dtype": "float16", "atol": load.FP16_ATOL, "n": load.GEMM_N},
        }
    }
    # The capture is one stretch: the telemetry covers it, the GEMM burn ran inside it.
    start, end = iso(run.started_at), iso(run.ended_at)
    first, last = iso(stamps[0]), iso(stamps[-1])
    run.stages.items = [
        {"name": name, "status": "ok", "started_at": a, "ended_at": b, "reason": None}
        for name, a, b in (
            ("inventory", start, first),
            ("telemetry", first, last),
            ("bench", first, first),
            ("burn", first, last),
            ("finalize", last, end),
        )
    ]
    return run.build_report()
