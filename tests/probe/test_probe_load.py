"""Load-stage orchestration (bench, burn, device mapping, errors, stop) with a scripted backend.

The GPU kernels themselves need torch or CuPy and a GPU, which CI does not have; these tests run the
real orchestration in ``probe.load`` and ``probe.burnin`` against an ops object that returns fixed
numbers, so what is checked is the bookkeeping: which GPU is measured while which others are loaded,
how results and errors land in the report, and how mismatches turn into exit code 1.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import jsonschema
import pytest

from probe import load
from probe.burnin import BurnIn
from probe.schema import load_schema
from probe.validate import Validator

BUS_A, BUS_B = "00000000:18:00.0", "00000000:3B:00.0"


class FakeOps:
    """Scripted stand-in for TorchOps/CupyOps."""

    def __init__(
        self,
        buses: list[str],
        *,
        slow: set[int] = frozenset(),
        broken: set[int] = frozenset(),
        mismatching: set[int] = frozenset(),
        crashing: set[int] = frozenset(),
    ) -> None:
        self.buses, self.slow, self.broken = buses, slow, broken
        self.mismatching, self.crashing = mismatching, crashing
        self.loaded: set[int] = set()
        self.lock = threading.Lock()
        self.copy_calls: list[tuple[int, frozenset[int]]] = []

    def pci_bus_id(self, dev: int) -> str:
        return self.buses[dev]

    def copy_bandwidth(self, dev: int) -> tuple[float, float]:
        if dev in self.broken:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        with self.lock:
            self.copy_calls.append((dev, frozenset(self.loaded)))
        return (13.9, 14.2) if dev in self.slow else (27.7, 27.9)

    def gemm_tflops(self, dev: int) -> float:
        return 291.0 + dev

    def d2d_gbps(self, dev: int) -> float:
        return 1471.0

    def background_gemm(self, dev: int, stop: threading.Event) -> None:
        with self.lock:
            self.loaded.add(dev)
        stop.wait()
        with self.lock:
            self.loaded.discard(dev)

    def burn(self, dev: int, deadline: float, stop: threading.Event, result: dict) -> None:
        while not stop.is_set() and time.monotonic() < deadline:
            if dev in self.crashing:
                raise RuntimeError("CUDA error: unspecified launch failure")
            result["matmuls_checked"] += 20
            time.sleep(0.02)
        result["mismatches"] = 3 if dev in self.mismatching else 0


@pytest.fixture(autouse=True)
def _no_ramp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load, "LOAD_RAMP_S", 0.0)


def _backend(ops: FakeOps) -> load.Backend:
    return load.Backend(True, "torch", "0.0-fake", None, len(ops.buses), ops)


GPUS = [{"index": 0, "pci_bus_id": BUS_A, "numa_node": 0}, {"index": 1, "pci_bus_id": BUS_B, "numa_node": 1}]


def test_devices_are_mapped_by_pci_bus_id() -> None:
    ops = FakeOps([BUS_B, BUS_A])  # CUDA enumerates the other way round
    assert load.map_devices(_backend(ops), GPUS) == {0: 1, 1: 0}


def test_bench_measures_each_gpu_alone_and_under_load_of_the_others() -> None:
    ops = FakeOps([BUS_A, BUS_B], slow={1})
    logs: list[str] = []
    results = load.run_bench(
        _backend(ops), GPUS, threading.Event(), numactl=False, all_nodes=[0, 1], log=logs.append
    )
    assert set(results) == {0, 1}
    slow = results[1]
    assert slow["h2d_gbps"]["default"] == 13.9 and slow["d2h_gbps"] == 14.2
    assert slow["h2d_gbps"]["under_load"] == 13.9 and slow["h2d_gbps"]["concurrent"] == 13.9
    assert slow["h2d_gbps"]["local"] is None and slow["numactl_used"] is False
    assert (
        slow["fp16_tflops"] == 292.0 and slow["vram_gbps"] == 1471.0 and slow["vram_method"] == "d2d_copy_rw"
    )
    assert slow["under_load_method"] == "other GPUs running FP16 GEMM" and slow["errors"] == []
    assert results[0]["h2d_gbps"]["default"] == 27.7
    # One measurement of each GPU ran while (only) the other GPU was loaded.
    assert (0, frozenset({1})) in ops.copy_calls and (1, frozenset({0})) in ops.copy_calls
    assert (0, frozenset()) in ops.copy_calls and (1, frozenset()) in ops.copy_calls
    assert any("bench GPU 1: h2d under load" in m for m in logs)


def test_single_gpu_under_load_uses_a_background_gemm_on_itself() -> None:
    ops = FakeOps([BUS_A])
    results = load.run_bench(_backend(ops), GPUS[:1], threading.Event(), False, [0], lambda _m: None)
    assert results[0]["under_load_method"].startswith("background FP16 GEMM on the same GPU")
    assert (0, frozenset({0})) in ops.copy_calls
    assert results[0]["h2d_gbps"]["concurrent"] is None


def test_bench_errors_are_recorded_per_gpu_and_numactl_failure_is_explained() -> None:
    ops = FakeOps([BUS_A, BUS_B], broken={0})
    results = load.run_bench(
        _backend(ops), GPUS, threading.Event(), numactl=True, all_nodes=[0, 1], log=lambda _m: None
    )
    broken, fine = results[0], results[1]
    assert broken["h2d_gbps"]["default"] is None
    assert any("illegal memory access" in e for e in broken["errors"])
    assert broken["fp16_tflops"] == 291.0  # later measurements still ran
    assert fine["h2d_gbps"]["default"] == 27.7
    # numactl is "present" here but cannot be executed in the test: the reason is kept.
    assert fine["numactl_used"] is True and fine["h2d_gbps"]["local"] is None
    assert any("numactl" in e for e in fine["errors"])


def test_unmapped_gpu_is_an_error_not_a_guess() -> None:
    ops = FakeOps([BUS_A])
    results = load.run_bench(_backend(ops), GPUS, threading.Event(), False, [0], lambda _m: None)
    assert results[1]["errors"] == [f"no torch device matches nvidia-smi GPU 1 ({BUS_B})"]


def test_bench_stops_when_asked() -> None:
    stop = threading.Event()
    stop.set()
    with pytest.raises(load.Interrupted):
        load.run_bench(_backend(FakeOps([BUS_A])), GPUS[:1], stop, False, [0], lambda _m: None)


def test_burn_counts_matmuls_mismatches_and_cuda_errors() -> None:
    gpus = [*GPUS, {"index": 2, "pci_bus_id": "00000000:5E:00.0", "numa_node": 1}]
    ops = FakeOps([BUS_A, BUS_B, "00000000:5E:00.0"], mismatching={1}, crashing={2})
    results = load.run_burn(_backend(ops), gpus, 0.3, threading.Event(), lambda _m: None)
    assert (
        results[0]["matmuls_checked"] > 0 and results[0]["mismatches"] == 0 and results[0]["cuda_errors"] == 0
    )
    assert results[1]["mismatches"] == 3
    assert results[2]["cuda_errors"] == 1 and "unspecified launch failure" in results[2]["errors"][0]
    assert all(r["duration_s"] >= 0.3 for r in results.values())
    assert results[0]["compare"] == {"dtype": "float16", "atol": load.FP16_ATOL, "n": load.GEMM_N}


def test_burn_stops_early_on_stop_event() -> None:
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    started = time.monotonic()
    results = load.run_burn(_backend(FakeOps([BUS_A])), GPUS[:1], 60, stop, lambda _m: None)
    assert time.monotonic() - started < 5 and results[0]["matmuls_checked"] > 0


def _run_in_process(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch, ops: FakeOps
) -> tuple[int, dict]:
    for key in ("PATH", "FAKE_NVSMI_FIXTURES", "FAKE_NVSMI_STATE"):
        monkeypatch.setenv(key, fake_env[key])
    monkeypatch.setattr(load, "detect", lambda: _backend(ops))
    out = tmp_path / "report.json"
    rc = BurnIn(str(out), 1.0, 0.5, sysfs_root=str(fake_sysfs)).run()
    report = json.loads(out.read_text())
    assert Validator(load_schema()).errors(report) == []
    jsonschema.Draft202012Validator(load_schema()).validate(report)
    return rc, report


class H200Ops(FakeOps):
    """Returns the numbers measured on the real H200 (``gpu/h200/load-result.json``)."""

    def __init__(self, measured: dict) -> None:
        super().__init__(["00000000:00:06.0"])
        self.m = measured

    def copy_bandwidth(self, dev: int) -> tuple[float, float]:
        return self.m["h2d_pinned_GBps"], self.m["d2h_pinned_GBps"]

    def gemm_tflops(self, dev: int) -> float:
        return self.m["matmul_float16_TFLOPS"]

    def d2d_gbps(self, dev: int) -> float:
        return self.m["d2d_GBps_read_plus_write"]


def test_burnin_with_a_load_backend_fills_bench_and_burn(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch, h200_dir: Path
) -> None:
    measured = json.loads((h200_dir / "load-result.json").read_text())
    assert measured["device"] == "NVIDIA H200" and measured["burnin_mismatch_checks"] == 0
    rc, report = _run_in_process(tmp_path, fake_env, fake_sysfs, monkeypatch, H200Ops(measured))
    assert rc == 0, report["outcome"]
    assert {s["name"]: s["status"] for s in report["stages"]} == {
        "inventory": "ok",
        "telemetry": "ok",
        "bench": "ok",
        "burn": "ok",
        "finalize": "ok",
    }
    assert report["load"] == {
        "available": True,
        "backend": "torch",
        "backend_version": "0.0-fake",
        "reason": None,
        "device_count": 1,
        "notes": [],
    }
    bench = report["gpus"][0]["bench"]
    assert bench["h2d_gbps"]["default"] == 54.918 and bench["h2d_gbps"]["under_load"] == 54.918
    assert bench["d2h_gbps"] == 55.201 and bench["fp16_tflops"] == 761.55 and bench["vram_gbps"] == 4289.4
    assert bench["h2d_gbps"]["concurrent"] is None  # one GPU: nothing to run concurrently
    burn = report["gpus"][0]["burn"]
    assert (
        burn["matmuls_checked"] > 0 and burn["mismatches"] == 0 and burn["nans"] == 0 and burn["xids"] == []
    )


def test_burnin_mismatch_is_a_measured_failure(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ops = FakeOps(["00000000:00:06.0"], mismatching={0})
    rc, report = _run_in_process(tmp_path, fake_env, fake_sysfs, monkeypatch, ops)
    assert rc == 1
    assert report["outcome"] == {
        "status": "failed",
        "exit_code": 1,
        "reasons": ["GPU 0: 3 mismatches during burn"],
    }
    assert next(s for s in report["stages"] if s["name"] == "burn")["status"] == "ok"


def test_burnin_bench_error_fails_the_stage_but_keeps_results(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ops = FakeOps(["00000000:00:06.0"], broken={0})
    rc, report = _run_in_process(tmp_path, fake_env, fake_sysfs, monkeypatch, ops)
    assert rc == 1
    bench_stage = next(s for s in report["stages"] if s["name"] == "bench")
    assert bench_stage["status"] == "failed" and "illegal memory access" in bench_stage["reason"]
    assert report["gpus"][0]["bench"]["fp16_tflops"] == 291.0
    assert next(s for s in report["stages"] if s["name"] == "burn")["status"] == "ok"


class HangingOps(FakeOps):
    """A burn that ignores the stop request, like a CUDA call on a GPU that fell off the bus."""

    def __init__(self, buses: list[str], release: threading.Event) -> None:
        super().__init__(buses)
        self.release = release

    def burn(self, dev: int, deadline: float, stop: threading.Event, result: dict) -> None:
        result["matmuls_checked"] += 20
        self.release.wait(30)


def test_hung_gpu_trips_the_watchdog_and_the_report_is_written(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import probe.burnin as burnin_mod

    monkeypatch.setattr(burnin_mod, "BURN_GRACE_S", 0.5)
    monkeypatch.setattr(burnin_mod, "JOIN_AFTER_HANG_S", 0.1)
    release = threading.Event()
    try:
        rc, report = _run_in_process(
            tmp_path, fake_env, fake_sysfs, monkeypatch, HangingOps(["00000000:00:06.0"], release)
        )
    finally:
        release.set()
    assert rc == 1
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["burn"]["status"] == "failed" and "did not finish" in stages["burn"]["reason"]
    assert stages["telemetry"]["status"] == "interrupted" and stages["finalize"]["status"] == "ok"
    assert report["gpus"][0]["burn"]["matmuls_checked"] == 20  # partial progress is kept


def test_stop_during_burn_marks_it_interrupted_and_keeps_progress(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("PATH", "FAKE_NVSMI_FIXTURES", "FAKE_NVSMI_STATE"):
        monkeypatch.setenv(key, fake_env[key])
    monkeypatch.setattr(load, "detect", lambda: _backend(FakeOps(["00000000:00:06.0"])))
    out = tmp_path / "report.json"
    run = BurnIn(str(out), 60.0, 0.5, sysfs_root=str(fake_sysfs))
    timer = threading.Timer(1.5, run.request_stop, args=("received SIGINT",))
    timer.start()
    started = time.monotonic()
    rc = run.run()
    timer.cancel()
    assert rc == 1 and time.monotonic() - started < 20
    report = json.loads(out.read_text())
    assert Validator(load_schema()).errors(report) == []
    stages = {s["name"]: s for s in report["stages"]}
    assert stages["bench"]["status"] == "ok"
    assert stages["burn"]["status"] == "interrupted" and stages["burn"]["reason"] == "received SIGINT"
    assert stages["telemetry"]["status"] == "interrupted"
    assert report["gpus"][0]["burn"]["matmuls_checked"] > 0
    assert report["outcome"]["status"] == "interrupted"
