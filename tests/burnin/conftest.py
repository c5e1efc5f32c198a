"""Reports for the analysis tests: seed 003's fixture, and a report built from the real H200 captures."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from probe import hostinfo, load, nvxml
from probe.burnin import BurnIn
from probe.common import UTC, iso
from probe.sampler import Telemetry, select_fields
from tests.probe.conftest import _build_sysfs, _parse_sysfs_capture

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SEED003 = FIXTURES / "burnin" / "seed003-report.json"
H200 = FIXTURES / "gpu" / "h200"


@pytest.fixture(scope="session")
def seed003_report() -> dict:
    return json.loads(SEED003.read_text())


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


@pytest.fixture
def h200_report(tmp_path: Path) -> dict:
    """The H200 report; its sysfs is the captured ``sysfs-pci.txt`` (a VM: no upstream port, NUMA -1)."""
    devices = _parse_sysfs_capture((H200 / "sysfs-pci.txt").read_text())
    return build_h200_report(_build_sysfs(tmp_path / "sys", devices))
