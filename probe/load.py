"""GPU load stages: per-card measurements and the all-GPU burn, with PyTorch or CuPy.

This module imports only the standard library at module level. PyTorch or CuPy is imported inside
:func:`detect`, so the probe stays usable (telemetry, SEL, inventory) where neither is installed.

Measurements per GPU, one GPU at a time (burnin.md §2, rows 2–7):

* pinned host→device and device→host bandwidth (1 GiB, CUDA events, median of 3), at default placement,
  NUMA-local and NUMA-remote via ``numactl`` when it is present and sysfs knows the GPU's node, and again
  while the other GPUs run GEMMs (or, on a single-GPU host, while a background GEMM runs on the same GPU);
* FP16 dense GEMM throughput (8192³);
* VRAM bandwidth as a device-to-device copy, counting bytes read plus written;
* concurrent host→device to all GPUs at once (sum).

The burn then runs FP16 GEMMs on all GPUs at once and compares each result with the first one
(gpu-burn style), counting mismatching and NaN elements and the number of matmuls checked.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GEMM_N = 8192
COPY_BYTES = 1 << 30
#: Inputs are scaled so products are O(1); FP16 spacing there is ~1e-3, so 1e-2 tolerates reduction-order
#: rounding while any flipped exponent or high mantissa bit is counted.
FP16_ATOL = 1e-2
BURN_BATCH = 20
#: Seconds the background GEMMs run before an under-load measurement starts (clocks and power ramp up).
LOAD_RAMP_S = 2.0


class Interrupted(Exception):
    """Raised inside a load stage when the run was asked to stop (signal or error elsewhere)."""


@dataclass
class Backend:
    """Result of backend detection; ``ops`` is set only when the GPUs can be loaded."""

    available: bool
    name: str | None = None
    version: str | None = None
    reason: str | None = None
    device_count: int = 0
    ops: Any = None
    notes: list[str] = field(default_factory=list)

    def to_report(self) -> dict[str, Any]:
        return {
            "available": self.available,
            "backend": self.name,
            "backend_version": self.version,
            "reason": self.reason,
            "device_count": self.device_count,
            "notes": list(self.notes),
        }


def detect() -> Backend:
    """Find a usable GPU compute backend: PyTorch first, then CuPy."""
    # Make CUDA enumerate GPUs in PCI order, the order nvidia-smi uses, before CUDA initialises.
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    errors = []
    try:
        import torch  # optional: only the load stages need it
    except Exception as exc:  # a broken install (missing libcuda, ABI error) is as unusable as none
        errors.append(f"torch: {type(exc).__name__}: {exc}")
    else:
        if not torch.cuda.is_available():
            return Backend(
                False,
                "torch",
                torch.__version__,
                f"torch {torch.__version__} is importable but torch.cuda.is_available() is False",
            )
        return Backend(True, "torch", torch.__version__, None, torch.cuda.device_count(), TorchOps(torch))
    try:
        import cupy  # optional, like torch
    except Exception as exc:  # any import failure means not usable
        errors.append(f"cupy: {type(exc).__name__}: {exc}")
    else:
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # CUDARuntimeError when no driver/device is present
            return Backend(
                False, "cupy", cupy.__version__, f"cupy {cupy.__version__} sees no CUDA device: {exc}"
            )
        if count == 0:
            return Backend(False, "cupy", cupy.__version__, f"cupy {cupy.__version__} sees no CUDA device")
        return Backend(True, "cupy", cupy.__version__, None, count, CupyOps(cupy))
    return Backend(False, None, None, "neither torch nor cupy is importable (" + "; ".join(errors) + ")")


def _median_of(runs: int, fn: Any) -> float:
    return statistics.median(fn() for _ in range(runs))


class TorchOps:
    """Measurements implemented with PyTorch (``torch.cuda`` events for timing)."""

    def __init__(self, torch: Any) -> None:
        self.t = torch

    def pci_bus_id(self, dev: int) -> str | None:
        props = self.t.cuda.get_device_properties(dev)
        if all(hasattr(props, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
            return f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:{props.pci_device_id:02X}.0"
        return None

    def _timed(self, dev: int, body: Any, iters: int) -> float:
        """Seconds for ``iters`` calls of ``body`` on the current stream, measured with CUDA events."""
        t = self.t
        with t.cuda.device(dev):
            start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                body()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1000.0

    def copy_bandwidth(self, dev: int, nbytes: int = COPY_BYTES, iters: int = 10) -> tuple[float, float]:
        """Pinned H2D and D2H bandwidth in GB/s (median of 3 timed loops)."""
        t = self.t
        host = t.empty(nbytes, dtype=t.uint8, pin_memory=True)
        devbuf = t.empty(nbytes, dtype=t.uint8, device=f"cuda:{dev}")
        devbuf.copy_(host, non_blocking=True)  # warm-up: page-in, context, copy engines
        t.cuda.synchronize(dev)

        def h2d_once() -> float:
            return (
                nbytes * iters / self._timed(dev, lambda: devbuf.copy_(host, non_blocking=True), iters) / 1e9
            )

        def d2h_once() -> float:
            return (
                nbytes * iters / self._timed(dev, lambda: host.copy_(devbuf, non_blocking=True), iters) / 1e9
            )

        return _median_of(3, h2d_once), _median_of(3, d2h_once)

    def gemm_tflops(self, dev: int, n: int = GEMM_N, iters: int = 50) -> float:
        t = self.t
        a = t.randn((n, n), device=f"cuda:{dev}", dtype=t.float16)
        b = t.randn((n, n), device=f"cuda:{dev}", dtype=t.float16)
        c = t.empty((n, n), device=f"cuda:{dev}", dtype=t.float16)
        for _ in range(5):
            t.matmul(a, b, out=c)
        t.cuda.synchronize(dev)
        seconds = self._timed(dev, lambda: t.matmul(a, b, out=c), iters)
        return 2.0 * n**3 * iters / seconds / 1e12

    def d2d_gbps(self, dev: int, nbytes: int = COPY_BYTES, iters: int = 20) -> float:
        """Device-to-device copy bandwidth counting bytes read plus bytes written."""
        t = self.t
        src = t.empty(nbytes, dtype=t.uint8, device=f"cuda:{dev}")
        dst = t.empty_like(src)
        dst.copy_(src)
        t.cuda.synchronize(dev)
        seconds = self._timed(dev, lambda: dst.copy_(src), iters)
        return 2.0 * nbytes * iters / seconds / 1e9

    def background_gemm(self, dev: int, stop: threading.Event, n: int = 4096) -> None:
        """Keep one GPU busy with FP16 GEMMs on a side stream until ``stop`` is set."""
        t = self.t
        with t.cuda.device(dev), t.cuda.stream(t.cuda.Stream(device=dev)):
            a = t.randn((n, n), device=f"cuda:{dev}", dtype=t.float16)
            c = t.empty_like(a)
            while not stop.is_set():
                for _ in range(10):
                    t.matmul(a, a, out=c)
                t.cuda.current_stream(dev).synchronize()

    def burn(
        self, dev: int, deadline: float, stop: threading.Event, result: dict[str, Any], n: int = GEMM_N
    ) -> None:
        """Repeat one FP16 GEMM until the deadline and compare each product with the first one."""
        t = self.t
        with t.cuda.device(dev):
            gen = t.Generator(device=f"cuda:{dev}")
            gen.manual_seed(1234 + dev)
            a = (t.randn((n, n), generator=gen, device=f"cuda:{dev}") / n**0.5).half()
            b = t.randn((n, n), generator=gen, device=f"cuda:{dev}").half()
            ref = t.matmul(a, b)
            c, diff = t.empty_like(ref), t.empty_like(ref)
            mism = t.zeros((), dtype=t.int64, device=f"cuda:{dev}")
            nans = t.zeros((), dtype=t.int64, device=f"cuda:{dev}")
            result["reference_nans"] = int(t.isnan(ref).sum().item())
            while not stop.is_set() and time.monotonic() < deadline:
                for _ in range(BURN_BATCH):
                    t.matmul(a, b, out=c)
                    nans += t.isnan(c).sum()
                    t.sub(c, ref, out=diff)
                    mism += (diff.abs_() > FP16_ATOL).sum()
                # Publishing per batch keeps checkpoints current; .item() waits for the batch anyway.
                result["mismatches"], result["nans"] = int(mism.item()), int(nans.item())
                result["matmuls_checked"] += BURN_BATCH


class CupyOps:
    """The same measurements with CuPy (CUDA events via ``cupy.cuda.Event``)."""

    def __init__(self, cupy: Any) -> None:
        self.cp = cupy

    def pci_bus_id(self, dev: int) -> str | None:
        try:
            return self.cp.cuda.runtime.deviceGetPCIBusId(dev).upper().rjust(16, "0")
        except Exception:  # older CuPy lacks the call; fall back to PCI order
            return None

    def _timed(self, dev: int, body: Any, iters: int) -> float:
        cp = self.cp
        with cp.cuda.Device(dev):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            for _ in range(iters):
                body()
            end.record()
            end.synchronize()
            return cp.cuda.get_elapsed_time(start, end) / 1000.0

    def copy_bandwidth(self, dev: int, nbytes: int = COPY_BYTES, iters: int = 10) -> tuple[float, float]:
        import numpy  # CuPy depends on NumPy; imported here like CuPy itself

        cp = self.cp
        with cp.cuda.Device(dev):
            mem = cp.cuda.alloc_pinned_memory(nbytes)
            host = numpy.frombuffer(mem, numpy.uint8, nbytes)
            devbuf = cp.empty(nbytes, dtype=cp.uint8)
            stream = cp.cuda.get_current_stream()
            devbuf.set(host, stream=stream)
            stream.synchronize()

            def h2d_once() -> float:
                return nbytes * iters / self._timed(dev, lambda: devbuf.set(host, stream=stream), iters) / 1e9

            def d2h_once() -> float:
                # Synchronous per copy on recent CuPy; the 1 GiB transfers dwarf that overhead.
                return (
                    nbytes
                    * iters
                    / self._timed(dev, lambda: devbuf.get(out=host, stream=stream), iters)
                    / 1e9
                )

            return _median_of(3, h2d_once), _median_of(3, d2h_once)

    def gemm_tflops(self, dev: int, n: int = GEMM_N, iters: int = 50) -> float:
        cp = self.cp
        with cp.cuda.Device(dev):
            a = cp.random.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
            b = cp.random.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
            c = cp.empty((n, n), dtype=cp.float16)
            for _ in range(5):
                cp.matmul(a, b, out=c)
            cp.cuda.Device(dev).synchronize()
            seconds = self._timed(dev, lambda: cp.matmul(a, b, out=c), iters)
        return 2.0 * n**3 * iters / seconds / 1e12

    def d2d_gbps(self, dev: int, nbytes: int = COPY_BYTES, iters: int = 20) -> float:
        cp = self.cp
        with cp.cuda.Device(dev):
            src = cp.empty(nbytes, dtype=cp.uint8)
            dst = cp.empty_like(src)
            cp.copyto(dst, src)
            cp.cuda.Device(dev).synchronize()
            seconds = self._timed(dev, lambda: cp.copyto(dst, src), iters)
        return 2.0 * nbytes * iters / seconds / 1e9

    def background_gemm(self, dev: int, stop: threading.Event, n: int = 4096) -> None:
        cp = self.cp
        with cp.cuda.Device(dev), cp.cuda.Stream(non_blocking=True) as stream:
            a = cp.random.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
            c = cp.empty_like(a)
            while not stop.is_set():
                for _ in range(10):
                    cp.matmul(a, a, out=c)
                stream.synchronize()

    def burn(
        self, dev: int, deadline: float, stop: threading.Event, result: dict[str, Any], n: int = GEMM_N
    ) -> None:
        cp = self.cp
        with cp.cuda.Device(dev):
            rng = cp.random.default_rng(1234 + dev)
            a = (rng.standard_normal((n, n), dtype=cp.float32) / n**0.5).astype(cp.float16)
            b = rng.standard_normal((n, n), dtype=cp.float32).astype(cp.float16)
            ref = cp.matmul(a, b)
            c, diff = cp.empty_like(ref), cp.empty_like(ref)
            mism = cp.zeros((), dtype=cp.int64)
            nans = cp.zeros((), dtype=cp.int64)
            result["reference_nans"] = int(cp.isnan(ref).sum())
            while not stop.is_set() and time.monotonic() < deadline:
                for _ in range(BURN_BATCH):
                    cp.matmul(a, b, out=c)
                    nans += cp.isnan(c).sum()
                    cp.subtract(c, ref, out=diff)
                    mism += (cp.abs(diff) > FP16_ATOL).sum()
                result["mismatches"], result["nans"] = int(mism), int(nans)
                result["matmuls_checked"] += BURN_BATCH


def map_devices(backend: Backend, gpus: list[dict[str, Any]]) -> dict[int, int]:
    """Map nvidia-smi GPU index → backend device index, by PCI bus id when the backend reports it."""
    by_bus = {}
    for dev in range(backend.device_count):
        bus = backend.ops.pci_bus_id(dev)
        if bus:
            by_bus[bus.upper()] = dev
    mapping = {}
    for gpu in gpus:
        bus = (gpu.get("pci_bus_id") or "").upper()
        if bus in by_bus:
            mapping[gpu["index"]] = by_bus[bus]
        elif not by_bus and gpu["index"] < backend.device_count:
            mapping[gpu["index"]] = gpu["index"]  # PCI_BUS_ID order matches nvidia-smi order
    return mapping


def _numactl_h2d(dev: int, node: int, timeout: float = 300.0) -> tuple[float | None, str | None]:
    """Measure H2D/D2H in a child process bound to ``node`` with numactl; return (h2d, error)."""
    pkg_parent = str(Path(__file__).resolve().parent.parent)
    env = dict(
        os.environ,
        PYTHONPATH=pkg_parent + os.pathsep + os.environ.get("PYTHONPATH", ""),
        CUDA_DEVICE_ORDER="PCI_BUS_ID",
    )
    argv = [
        "numactl",
        f"--cpunodebind={node}",
        f"--membind={node}",
        sys.executable,
        "-m",
        "probe",
        "_h2d",
        "--device",
        str(dev),
    ]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"numactl child failed: {exc}"
    if proc.returncode != 0:
        return None, f"numactl child exited {proc.returncode}: {proc.stderr.strip()[-300:]}"
    try:
        return float(json.loads(proc.stdout)["h2d_gbps"]), None
    except (ValueError, KeyError, TypeError) as exc:
        return None, f"numactl child printed no result: {exc}"


def h2d_child(dev: int) -> dict[str, Any]:
    """Entry point of the hidden ``_h2d`` command used for NUMA-bound measurements."""
    backend = detect()
    if not backend.available:
        raise RuntimeError(backend.reason)
    h2d, d2h = backend.ops.copy_bandwidth(dev)
    return {"device": dev, "h2d_gbps": round(h2d, 3), "d2h_gbps": round(d2h, 3)}


def _with_load(backend: Backend, devices: list[int], fn: Any) -> Any:
    """Run ``fn()`` while background GEMMs keep ``devices`` busy."""
    stop = threading.Event()
    threads = [
        threading.Thread(target=backend.ops.background_gemm, args=(d, stop), daemon=True) for d in devices
    ]
    for th in threads:
        th.start()
    time.sleep(LOAD_RAMP_S)
    try:
        return fn()
    finally:
        stop.set()
        for th in threads:
            th.join(timeout=60)


def run_bench(
    backend: Backend,
    gpus: list[dict[str, Any]],
    stop: threading.Event,
    numactl: bool,
    all_nodes: list[int],
    log: Any,
    results: dict[int, dict[str, Any]] | None = None,
) -> dict[int, dict[str, Any]]:
    """Measure every GPU one at a time. Returns ``{nvidia_smi_index: bench dict}``.

    ``gpus`` entries need ``index``, ``pci_bus_id`` and ``numa_node``. Errors are recorded per GPU and
    per measurement so one failing card does not hide the others. ``results``, when given, is filled in
    place as measurements complete.
    """
    mapping = map_devices(backend, gpus)
    ops = backend.ops
    results = {} if results is None else results
    method = f"{backend.name} pinned {COPY_BYTES >> 20} MiB copies x10, median of 3, CUDA events"
    for gpu in gpus:
        idx = gpu["index"]
        dev = mapping.get(idx)
        bench: dict[str, Any] = {
            "device": dev,
            "h2d_gbps": {
                "default": None,
                "local": None,
                "remote": None,
                "under_load": None,
                "concurrent": None,
                "method": method,
            },
            "d2h_gbps": None,
            "fp16_tflops": None,
            "fp16_method": f"{backend.name} matmul {GEMM_N}^3 float16, 50 iters",
            "vram_gbps": None,
            "vram_method": "d2d_copy_rw",
            "numa_node": gpu.get("numa_node"),
            "numactl_used": False,
            "under_load_method": None,
            "errors": [],
        }
        results[idx] = bench
        if dev is None:
            bench["errors"].append(
                f"no {backend.name} device matches nvidia-smi GPU {idx} ({gpu.get('pci_bus_id')})"
            )
            continue
        others = [d for i, d in mapping.items() if i != idx]

        def step(name: str, fn: Any, bench: dict[str, Any] = bench, idx: int = idx) -> Any:
            if stop.is_set():
                raise Interrupted("stop requested")
            log(f"bench GPU {idx}: {name}")
            try:
                return fn()
            except Exception as exc:  # record and go on with the next measurement
                bench["errors"].append(f"{name}: {type(exc).__name__}: {exc}"[:500])
                return None

        copy = step("h2d/d2h", lambda dev=dev: ops.copy_bandwidth(dev))
        if copy:
            bench["h2d_gbps"]["default"], bench["d2h_gbps"] = round(copy[0], 3), round(copy[1], 3)
        node = gpu.get("numa_node")
        if numactl and isinstance(node, int) and node >= 0:
            # Host buffers bound to the GPU's own node, then to another node (the NUMA penalty).
            bench["numactl_used"] = True
            remote = next((n for n in all_nodes if n != node), None)
            for key, target in (("local", node), ("remote", remote)):
                if target is None:
                    continue
                value, err = step(
                    f"h2d numa-{key}", lambda dev=dev, target=target: _numactl_h2d(dev, target)
                ) or (None, None)
                bench["h2d_gbps"][key] = value
                if err:
                    bench["errors"].append(f"h2d numa-{key}: {err}")
        load_devs = others or [dev]
        bench["under_load_method"] = (
            "other GPUs running FP16 GEMM"
            if others
            else "background FP16 GEMM on the same GPU (single GPU host)"
        )
        loaded = step(
            "h2d under load",
            lambda dev=dev, load_devs=load_devs: _with_load(
                backend, load_devs, lambda: ops.copy_bandwidth(dev)
            ),
        )
        if loaded:
            bench["h2d_gbps"]["under_load"] = round(loaded[0], 3)
        tflops = step("fp16 gemm", lambda dev=dev: ops.gemm_tflops(dev))
        bench["fp16_tflops"] = round(tflops, 2) if tflops else None
        vram = step("vram d2d", lambda dev=dev: ops.d2d_gbps(dev))
        bench["vram_gbps"] = round(vram, 1) if vram else None
    if len(mapping) > 1 and not stop.is_set():
        log("bench: concurrent host-to-device on all GPUs")
        _concurrent_h2d(ops, mapping, results)
    return results


def _concurrent_h2d(ops: Any, mapping: dict[int, int], results: dict[int, dict[str, Any]]) -> None:
    """Host→device on all GPUs at the same time (nvbandwidth's host_to_all); per-GPU values."""
    out: dict[int, float] = {}

    def worker(idx: int, dev: int) -> None:
        try:
            out[idx] = ops.copy_bandwidth(dev)[0]
        except Exception as exc:  # one GPU's failure must not hide the others
            results[idx]["errors"].append(f"h2d concurrent: {type(exc).__name__}: {exc}"[:500])

    threads = [threading.Thread(target=worker, args=(i, d)) for i, d in mapping.items()]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for idx, value in out.items():
        results[idx]["h2d_gbps"]["concurrent"] = round(value, 3)


def run_burn(
    backend: Backend,
    gpus: list[dict[str, Any]],
    duration_s: float,
    stop: threading.Event,
    log: Any,
    results: dict[int, dict[str, Any]] | None = None,
) -> dict[int, dict[str, Any]]:
    """Load all GPUs at once for ``duration_s`` and check every GEMM result. Returns per-GPU results.

    ``results``, when given, is filled in place; the workers update ``matmuls_checked`` as they go, so a
    checkpoint written during a long burn shows the progress.
    """
    mapping = map_devices(backend, gpus)
    deadline = time.monotonic() + duration_s
    results = {} if results is None else results
    threads = []
    started = time.monotonic()
    for gpu in gpus:
        idx = gpu["index"]
        res: dict[str, Any] = {
            "device": mapping.get(idx),
            "duration_s": 0.0,
            "matmuls_checked": 0,
            "mismatches": 0,
            "nans": 0,
            "reference_nans": 0,
            "cuda_errors": 0,
            "errors": [],
            "compare": {"dtype": "float16", "atol": FP16_ATOL, "n": GEMM_N},
        }
        results[idx] = res
        if mapping.get(idx) is None:
            res["cuda_errors"] += 1
            res["errors"].append(f"no {backend.name} device matches nvidia-smi GPU {idx}")
            continue

        def worker(dev: int = mapping[idx], res: dict[str, Any] = res) -> None:
            try:
                backend.ops.burn(dev, deadline, stop, res)
            except Exception as exc:  # a CUDA error ends this GPU's burn, not the others
                res["cuda_errors"] += 1
                res["errors"].append(f"{type(exc).__name__}: {exc}"[:500])

        threads.append(threading.Thread(target=worker, name=f"burn-gpu{idx}", daemon=True))
    log(f"burn: {len(threads)} GPUs for {duration_s:.0f}s")
    for th in threads:
        th.start()
    while any(th.is_alive() for th in threads):
        for th in threads:
            th.join(timeout=1.0)
    elapsed = round(time.monotonic() - started, 1)
    for res in results.values():
        res["duration_s"] = elapsed
    return results
