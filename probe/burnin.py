"""The ``burnin`` command: run the stages, collect everything, always write the report.

Stages, in order: ``inventory`` (host, GPUs, sysfs, topology, SEL/EDAC/dmesg at start), ``telemetry``
(GPU sampling, from after the inventory until the end of the burn), ``bench`` (per-GPU measurements),
``burn`` (all GPUs for ``--duration``), ``finalize`` (end snapshots). Without torch or CuPy, ``bench``
and ``burn`` are skipped with the reason and the telemetry still runs for ``--duration``.

SIGINT and SIGTERM stop the run: the running stage is recorded as ``interrupted`` with the signal's
name, the end snapshots are still taken and the report is still written (atomically).

The same machinery runs the short field check (:mod:`probe.fieldcheck`), which subclasses :class:`BurnIn`
and overrides the hooks marked below (``purpose``, the load stages' time limits, the SEL window, extra
report fields).

The report document is assembled from this state by :mod:`probe.burnin_report`.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from probe import burnin_report, hostinfo, load, nvxml, report, sel
from probe.burnin_report import MAX_RAW_LINES
from probe.common import iso, run_cmd, utc_now, which
from probe.sampler import Sampler, Telemetry, discover_fields

SEL_INTERVAL_S = 15 * 60
CHECKPOINT_INTERVAL_S = 15 * 60
#: Watchdog for the load threads: a GPU that falls off the bus can hang CUDA calls forever, and the report
#: must still be written. The bench gets a base allowance plus time per GPU; the burn its duration plus grace.
BENCH_LIMIT_BASE_S, BENCH_LIMIT_PER_GPU_S, BURN_GRACE_S = 600.0, 300.0, 600.0
JOIN_AFTER_STOP_S = 120.0
JOIN_AFTER_HANG_S = 30.0


#: The report's ``purpose`` values (schema 1.1.0). A report without one reads as ``burn_in``.
PURPOSES = ("burn_in", "field_check", "post_repair")


class LoadHung(RuntimeError):
    """A load thread did not finish within its watchdog limit."""


class OutOfTime(Exception):
    """A stage was stopped because its share of a time-boxed run was spent (recorded as interrupted)."""


class BurnIn:
    """State and orchestration of one burn-in run."""

    def __init__(
        self,
        out: str,
        duration_s: float,
        interval_s: float,
        *,
        sysfs_root: str = "/sys",
        no_load: bool = False,
        verbose: bool = False,
        argv: list[str] | None = None,
        sel_interval_s: float = SEL_INTERVAL_S,
        checkpoint_s: float = CHECKPOINT_INTERVAL_S,
        purpose: str = "burn_in",
    ) -> None:
        if purpose not in PURPOSES:
            raise ValueError(f"purpose must be one of {', '.join(PURPOSES)}, not {purpose!r}")
        self.purpose = purpose
        self.out = out
        self.duration_s = duration_s
        self.interval_s = interval_s
        self.sysfs_root = sysfs_root
        self.no_load = no_load
        self.verbose = verbose
        self.argv = argv or []
        self.sel_interval_s = sel_interval_s
        self.checkpoint_s = checkpoint_s
        self.started_at = utc_now()
        self.ended_at = None
        self.stages = report.Stages()
        self.errors: list[dict[str, str]] = []
        self.stop_event = threading.Event()
        # The bench watches its own event: a time-boxed run stops the bench alone when its share is spent,
        # and a stop request stops it too (request_stop sets both).
        self.bench_stop = threading.Event()
        # Set on stop requests and when a load thread ends, so the main thread's wait returns at once.
        self.wake = threading.Event()
        self.stop_reason: str | None = None
        self.xml_start: str | None = None
        self.xml_end: str | None = None
        self.doc_start: dict[str, Any] | None = None
        self.doc_end: dict[str, Any] | None = None
        self.pci_start: dict[int, dict[str, Any]] = {}
        self.pci_end: dict[str, dict[str, Any]] = {}
        self.topo: dict[str, Any] = {"available": False, "reason": "not read", "gpus": {}}
        self.host: dict[str, Any] = {}
        self.bmc: dict[str, Any] = {
            "available": False,
            "reason": "not read",
            "sel_time_offset_s": None,
            "sel_time_raw": None,
            "sel_entries": None,
            "sel_overflow": None,
        }
        self.sel_events: dict[tuple[Any, ...], dict[str, Any]] = {}
        self.sel_outside: set[tuple[Any, ...]] = set()
        self.sel_last_read: list[dict[str, Any]] | None = None  # every event of the last good read
        self.sel_snapshots: list[dict[str, Any]] = []
        self.sel_unparsed: list[str] = []
        self.sel_text: str | None = None
        self.edac_start: dict[str, Any] | None = None
        self.edac_end: dict[str, Any] | None = None
        self.rasdaemon: dict[str, Any] | None = None
        self.dmesg_start: dict[str, Any] | None = None
        self.dmesg_end: dict[str, Any] | None = None
        self.telemetry: Telemetry | None = None
        self.sampler: Sampler | None = None
        self.backend = load.Backend(False, reason="not checked")
        self.bench: dict[int, dict[str, Any]] = {}
        self.burn: dict[int, dict[str, Any]] = {}
        self._next_sel = 0.0
        self._next_checkpoint = 0.0
        self._started_mono = time.monotonic()

    # ----------------------------------------------------------------- plumbing
    def log(self, msg: str) -> None:
        print(f"probe: {msg}", file=sys.stderr, flush=True)

    def error(self, stage: str, msg: str) -> None:
        """Record why a source or step did not deliver (once per distinct message)."""
        entry = {"stage": stage, "msg": msg}
        if entry not in self.errors:
            self.errors.append(entry)

    def request_stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
        self.stop_event.set()
        self.bench_stop.set()
        self.wake.set()

    def _on_signal(self, signum: int, _frame: Any) -> None:
        name = signal.Signals(signum).name
        self.log(f"received {name}, stopping and writing the report")
        self.request_stop(f"received {name}")

    @contextmanager
    def stage(self, name: str) -> Iterator[dict[str, Any]]:
        """Run a stage body; map Interrupted → interrupted and any exception → failed (never propagate)."""
        current = self.stages.begin(name)
        self.log(f"stage {name} started")
        try:
            yield current
        except load.Interrupted:
            self.stages.end(name, "interrupted", self.stop_reason or "interrupted")
        except OutOfTime as exc:
            self.stages.end(name, "interrupted", str(exc))
        except Exception as exc:  # a failing stage must not lose the report
            msg = f"{type(exc).__name__}: {exc}"
            self.error(name, msg + " | " + traceback.format_exc(limit=3).strip().splitlines()[-1])
            self.stages.end(name, "failed", msg)
        else:
            self.stages.end(name, "ok")
        self.log(f"stage {name}: {self.stages.get(name)['status']}")

    def _periodic(self) -> None:
        """SEL polls and report checkpoints, run from the main thread while waiting."""
        now = time.monotonic()
        if now >= self._next_sel:
            self._next_sel = now + self.sel_interval_s
            if which("ipmitool"):
                self._read_sel("periodic")
        if now >= self._next_checkpoint:
            self._next_checkpoint = now + self.checkpoint_s
            report.write(self.out, self.build_report(checkpoint=True))
            # A 72 h run is otherwise silent; one line per checkpoint shows it is alive.
            samples = self.telemetry.samples if self.telemetry else 0
            self.log(
                f"running for {(now - self._started_mono) / 3600:.2f} h: {samples} telemetry samples, "
                f"{len(self.sel_events)} SEL events; checkpoint written to {self.out}"
            )

    def _wait(
        self,
        deadline: float,
        worker: threading.Thread | None = None,
        what: str = "",
        soft_stop: threading.Event | None = None,
    ) -> None:
        """Wait for ``deadline`` (or for ``worker`` to end) doing periodic work.

        Raises Interrupted when a stop was requested, and LoadHung when ``worker`` is still running at
        ``deadline`` (the watchdog limit). With ``soft_stop``, the deadline first sets that event (the
        worker stops after its current measurement) and the worker gets ``JOIN_AFTER_HANG_S`` more before
        it counts as hung.
        """
        while True:
            if self.stop_event.is_set():
                if worker is not None:
                    worker.join(timeout=JOIN_AFTER_STOP_S)
                raise load.Interrupted(self.stop_reason or "stop requested")
            now = time.monotonic()
            if worker is not None and not worker.is_alive():
                return
            if now >= deadline:
                if worker is None:
                    return
                if soft_stop is not None and not soft_stop.is_set():
                    soft_stop.set()
                    deadline = now + JOIN_AFTER_HANG_S
                    continue
                msg = f"{what} did not finish within its time limit; a GPU may be hung (see Xid in dmesg)"
                self.request_stop(msg)
                worker.join(timeout=JOIN_AFTER_HANG_S)
                raise LoadHung(msg)
            self._periodic()
            wake = min(deadline, self._next_sel, self._next_checkpoint)
            self.wake.wait(max(0.05, min(wake - time.monotonic(), 60.0)))
            self.wake.clear()

    def _in_thread(
        self,
        fn: Callable[[], Any],
        limit_s: float,
        what: str,
        soft_stop: threading.Event | None = None,
    ) -> Any:
        """Run a load function in a thread while the main thread keeps polling the SEL and checkpointing."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["result"] = fn()
            except BaseException as exc:  # re-raised in the main thread
                box["error"] = exc
            finally:
                self.wake.set()

        worker = threading.Thread(target=target, name="probe-load", daemon=True)
        worker.start()
        self._wait(time.monotonic() + limit_s, worker, what, soft_stop)
        if "error" in box:
            raise box["error"]
        return box.get("result")

    # ----------------------------------------------------------------- hooks (overridden by the field check)
    def _sel_window(self, events: list[dict[str, Any]], phase: str) -> list[bool | None]:
        """For each event of a SEL read not seen before: its ``during_run``, or None to leave it out.

        A burn-in keeps the whole SEL: what was there at the start is history, the rest happened during
        the run.
        """
        return [phase != "start"] * len(events)

    def _bench_limit(self, n_gpus: int) -> tuple[float, bool]:
        """The bench's time limit, and whether reaching it stops the bench (True) or means a hang."""
        return BENCH_LIMIT_BASE_S + BENCH_LIMIT_PER_GPU_S * n_gpus, False

    def _burn_seconds(self) -> float:
        """How long the all-GPU burn (or, without a load backend, the monitoring) lasts."""
        return self.duration_s

    def _load_refusal(self) -> str | None:
        """Why the GPUs must not be loaded although a backend is there (None: load them)."""
        return None

    def _extra_params(self) -> dict[str, Any]:
        return {}

    def _extra_host_memory(self) -> dict[str, Any]:
        return {}

    # ----------------------------------------------------------------- collection
    def _read_sel(self, phase: str) -> None:
        snap = sel.read_sel()
        new = 0
        fresh = []
        for ev in snap["events"]:
            key = sel.event_key(ev)
            if key not in self.sel_events and key not in self.sel_outside:
                fresh.append((key, ev))
        for (key, ev), during in zip(fresh, self._sel_window([ev for _k, ev in fresh], phase), strict=True):
            if during is None:
                self.sel_outside.add(key)  # before the window: left out now and at every later read
            else:
                ev["during_run"] = during
                self.sel_events[key] = ev
                new += 1
        if snap["ok"]:
            self.sel_last_read = snap["events"]
            self.sel_text = snap["text"]
            self.bmc.update(
                available=True,
                reason=None,
                sel_entries=snap["info"]["entries"],
                sel_overflow=snap["info"]["overflow"],
            )
            for line in snap["unparsed"]:
                if line not in self.sel_unparsed and len(self.sel_unparsed) < MAX_RAW_LINES:
                    self.sel_unparsed.append(line)
        elif phase == "start":
            self.bmc.update(available=False, reason=snap["error"])
            self.error("sel", snap["error"] or "ipmitool failed")
        self.sel_snapshots.append(
            {
                "at": iso(utc_now()),
                "phase": phase,
                "ok": snap["ok"],
                "error": snap["error"],
                "events": len(snap["events"]),
                "new_events": new,
                "entries": snap["info"]["entries"],
                "overflow": snap["info"]["overflow"],
            }
        )

    def _read_sel_time(self) -> None:
        res = run_cmd(["ipmitool", "sel", "time", "get"], timeout=30)
        if res.ok:
            bmc_time = sel.parse_sel_time(res.stdout)
            self.bmc["sel_time_raw"] = res.stdout.strip()
            if bmc_time is not None:
                self.bmc["sel_time_offset_s"] = round((bmc_time - utc_now()).total_seconds(), 1)

    def _read_pci(self, doc: dict[str, Any]) -> dict[int, dict[str, Any]]:
        out = {}
        for gpu in doc["gpus"]:
            pci = hostinfo.read_pci(gpu["pci_bus_id"], self.sysfs_root)
            if not pci["available"]:
                self.error("sysfs", f"GPU {gpu['index']}: {pci['reason']}")
            out[gpu["index"]] = pci
        return out

    def _read_dmesg(self, stage: str) -> dict[str, Any]:
        raw = hostinfo.read_dmesg()
        if not raw["available"]:
            self.error(stage, f"dmesg: {raw['reason']}")
            return {"available": False, "reason": raw["reason"], "source": None, "parsed": None}
        return {
            "available": True,
            "reason": None,
            "source": raw["source"],
            "parsed": hostinfo.parse_dmesg(raw["text"]),
        }

    # ----------------------------------------------------------------- stages
    def _inventory(self) -> None:
        with self.stage("inventory"):
            self.host = hostinfo.host_identity()
            self.host["cpu"] = hostinfo.cpu_info(self.sysfs_root)
            text, err = nvxml.query_xml()
            if err:
                raise RuntimeError(f"nvidia-smi -q -x failed: {err}")
            self.xml_start = text
            self.doc_start = nvxml.parse_xml(text or "")
            if not self.doc_start["gpus"]:
                raise RuntimeError("nvidia-smi -q -x lists no GPUs")
            self.log(f"{len(self.doc_start['gpus'])} GPU(s), driver {self.doc_start['driver_version']}")
            self.pci_start = self._read_pci(self.doc_start)
            self.topo = hostinfo.read_topo()
            if not self.topo["available"]:
                self.error("topo", self.topo["reason"] or "nvidia-smi topo -m failed")
            self.host["tools"] = hostinfo.tool_versions(self.doc_start["driver_version"])
            if which("ipmitool"):
                self._read_sel("start")
                self._read_sel_time()
            else:
                self.bmc.update(available=False, reason="ipmitool not found on PATH")
                self.error("sel", "ipmitool not found on PATH")
            self.edac_start = hostinfo.read_edac(self.sysfs_root)
            if not self.edac_start["present"]:
                self.error("edac", self.edac_start["reason"])
            self.rasdaemon = hostinfo.read_rasdaemon()
            self.dmesg_start = self._read_dmesg("dmesg")

    def _start_telemetry(self) -> None:
        self.stages.begin("telemetry")
        fields, sources, note = discover_fields()
        if note:
            self.error("telemetry", note)
        assert self.doc_start is not None
        by_bus = {g["pci_bus_id"]: g["index"] for g in self.doc_start["gpus"] if g["pci_bus_id"]}
        self.telemetry = Telemetry(self.interval_s, fields, sources, by_bus)
        self.telemetry.start_clock()
        self.sampler = Sampler(self.telemetry, verbose=self.verbose)
        self.sampler.start()
        self.log(f"telemetry every {self.interval_s:g}s")

    def _stop_telemetry(self) -> None:
        if self.sampler is None or self.telemetry is None:
            return
        self.sampler.stop()
        self.sampler.join(timeout=60)
        tel = self.telemetry
        if self.stop_reason:
            self.stages.end("telemetry", "interrupted", self.stop_reason)
        elif tel.samples == 0 and tel.failed:
            self.stages.end("telemetry", "failed", f"no sample succeeded: {tel.errors[0]}")
        else:
            self.stages.end("telemetry", "ok")

    def _gpu_list(self) -> list[dict[str, Any]]:
        assert self.doc_start is not None
        return [
            {
                "index": g["index"],
                "pci_bus_id": g["pci_bus_id"],
                "numa_node": self.pci_start.get(g["index"], {}).get("numa_node"),
            }
            for g in self.doc_start["gpus"]
        ]

    def _load_stages(self) -> None:
        refusal = None if self.no_load else self._load_refusal()
        if self.no_load:
            self.backend = load.Backend(False, reason="load disabled with --no-load")
        elif refusal:
            self.backend = load.Backend(False, reason=refusal)
        else:
            self.backend = load.detect()
        if self.backend.available:
            backend = self.backend
            self.log(f"load backend {backend.name} {backend.version}, {backend.device_count} device(s)")
        else:
            self.log(f"load stages skipped: {self.backend.reason}")
            self.error("load", self.backend.reason or "load backend unavailable")
        burn_deadline = None
        if self.stop_event.is_set():
            self.stages.skip("bench", f"not started: run interrupted ({self.stop_reason})")
        elif not self.backend.available:
            self.stages.skip("bench", self.backend.reason or "no load backend")
        else:
            with self.stage("bench"):
                numactl = which("numactl") is not None
                nodes = hostinfo.numa_nodes(self.sysfs_root)
                gpus = self._gpu_list()
                limit, soft = self._bench_limit(len(gpus))
                # Results are filled in place, so a checkpoint or an interruption keeps what was measured.
                with contextlib.suppress(load.Interrupted):
                    self._in_thread(
                        lambda: load.run_bench(
                            self.backend, gpus, self.bench_stop, numactl, nodes, self.log, results=self.bench
                        ),
                        limit,
                        "the bench",
                        soft_stop=self.bench_stop if soft else None,
                    )
                if self.stop_event.is_set():
                    raise load.Interrupted(self.stop_reason or "stop requested")
                bench_errors = [f"GPU {i}: {e}" for i, b in self.bench.items() for e in b["errors"]]
                if self.bench_stop.is_set():
                    # Only the time box sets bench_stop without stop_event: the bench alone ends here.
                    # The last measurement, VRAM bandwidth, tells a GPU whose bench is complete.
                    missing = [
                        g["index"]
                        for g in gpus
                        if (self.bench.get(g["index"]) or {}).get("vram_gbps") is None
                    ]
                    raise OutOfTime(
                        f"stopped when its share of the run ({limit:.0f} s) was spent"
                        + (f"; not fully measured: GPU {', '.join(map(str, missing))}" if missing else "")
                        + (f"; {'; '.join(bench_errors)}" if bench_errors else "")
                    )
                if bench_errors:
                    raise RuntimeError("; ".join(bench_errors)[:2000])
        if self.stop_event.is_set():
            self.stages.skip("burn", f"not started: run interrupted ({self.stop_reason})")
        elif not self.backend.available:
            self.stages.skip("burn", self.backend.reason or "no load backend")
            # Nothing loads the GPUs, but the telemetry still covers the requested duration (an operator
            # may be running their own load, and idle thermals and the SEL are still worth recording).
            burn_deadline = time.monotonic() + self._burn_seconds()
        else:
            with self.stage("burn"):
                burn_s = self._burn_seconds()
                self._in_thread(
                    lambda: load.run_burn(
                        self.backend,
                        self._gpu_list(),
                        burn_s,
                        self.stop_event,
                        self.log,
                        results=self.burn,
                    ),
                    burn_s + BURN_GRACE_S,
                    "the burn",
                )
                if self.stop_event.is_set():
                    raise load.Interrupted(self.stop_reason or "stop requested")
        if burn_deadline is not None:
            # An interruption here is recorded on the telemetry stage by _stop_telemetry.
            with contextlib.suppress(load.Interrupted):
                self._wait(burn_deadline)

    def _finalize(self) -> None:
        with self.stage("finalize"):
            if self.doc_start is not None:
                text, err = nvxml.query_xml(timeout=60)
                if err:
                    self.error("finalize", f"nvidia-smi -q -x at end failed: {err}")
                else:
                    self.xml_end = text
                    self.doc_end = nvxml.parse_xml(text or "")
                    # Keyed by PCI bus id: a GPU lost during the run shifts the numbering at the end.
                    self.pci_end = {
                        g["pci_bus_id"]: hostinfo.read_pci(g["pci_bus_id"], self.sysfs_root)
                        for g in self.doc_end["gpus"]
                    }
                    missing = {g["pci_bus_id"] for g in self.doc_start["gpus"]} - set(self.pci_end)
                    for bus in sorted(b for b in missing if b):
                        self.error("finalize", f"GPU {bus} is missing from nvidia-smi at the end of the run")
            if which("ipmitool"):
                self._read_sel("end")
            self.edac_end = hostinfo.read_edac(self.sysfs_root)
            self.dmesg_end = self._read_dmesg("dmesg")

    def run(self) -> int:
        """Execute all stages and write the report; return the process exit code."""
        handlers = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        now = self._started_mono = time.monotonic()
        self._next_sel = now + self.sel_interval_s
        self._next_checkpoint = now + self.checkpoint_s
        try:
            self._inventory()
            if self.stages.get("inventory")["status"] != "ok":
                reason = f"inventory {self.stages.get('inventory')['status']}"
                for name in ("telemetry", "bench", "burn"):
                    self.stages.skip(name, f"not started: {reason}")
            else:
                self._start_telemetry()
                try:
                    self._load_stages()
                finally:
                    self._stop_telemetry()
            self._finalize()
        finally:
            self.ended_at = utc_now()
            final = self.build_report()
            report.write(self.out, final)
            for sig, handler in handlers.items():
                signal.signal(sig, handler)
        result = final["outcome"]
        self.log(f"report written to {self.out}: {result['status']}")
        for reason in result["reasons"]:
            self.log(f"  - {reason}")
        return int(result["exit_code"])

    # ----------------------------------------------------------------- report
    def build_report(self, checkpoint: bool = False) -> dict[str, Any]:
        """Assemble the report from the current state (also used for periodic checkpoints)."""
        # The layout lives in probe.burnin_report; a method so that callers and subclasses keep one name.
        return burnin_report.build_report(self, checkpoint)
