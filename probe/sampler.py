"""GPU telemetry sampling with ``nvidia-smi --query-gpu`` into columnar series (burnin.md §5).

The probe calls nvidia-smi once per interval instead of using ``-lms``: a one-shot call cannot get
stuck half-way through a line when the run is interrupted, and a missed sample is visible as a gap.

Drivers differ in which ``--query-gpu`` fields exist (``clocks_event_reasons.*`` was
``clocks_throttle_reasons.*``; ``temperature.gpu.tlimit`` is new), and one unknown field makes the whole
query fail. The probe therefore reads ``--help-query-gpu`` once and asks only for supported fields.
"""

from __future__ import annotations

import csv
import re
import sys
import threading
import time
from datetime import datetime
from typing import Any

from probe.common import iso, run_cmd, utc_now
from probe.nvxml import clean, number

#: Telemetry columns (names from burnin.md §5, then additions) and the query fields that feed them,
#: in order of preference. A column whose fields the driver lacks stays null ("not supported").
COLUMN_FIELDS: dict[str, tuple[str, ...]] = {
    "temp_c": ("temperature.gpu",),
    "tlimit_c": ("temperature.gpu.tlimit",),
    "mem_temp_c": ("temperature.memory",),
    "power_w": ("power.draw", "power.draw.average"),
    "sm_mhz": ("clocks.current.sm", "clocks.sm"),
    "util_pct": ("utilization.gpu",),
    "pcie_gen": ("pcie.link.gen.current", "pcie.link.gen.gpucurrent"),
    "pcie_width": ("pcie.link.width.current",),
    "clocks_event_mask": ("clocks_event_reasons.active", "clocks_throttle_reasons.active"),
    "ecc_dram_corr": ("ecc.errors.corrected.volatile.dram", "ecc.errors.corrected.volatile.device_memory"),
    # PCIe replays are not exposed by --query-gpu; they come from the XML snapshots at start and end.
    "replay": (),
    "pstate": ("pstate",),
    "ecc_dram_unc": ("ecc.errors.uncorrected.volatile.dram", "ecc.errors.uncorrected.volatile.device_memory"),
    "mem_used_mib": ("memory.used",),
}
GPU_COLUMNS = ["t_offset_s", *COLUMN_FIELDS]

#: Fields used when ``--help-query-gpu`` cannot be read: the oldest spellings, known since driver 4xx.
FALLBACK_FIELDS = {
    "index",
    "temperature.gpu",
    "power.draw",
    "clocks.sm",
    "utilization.gpu",
    "pcie.link.gen.current",
    "pcie.link.width.current",
    "clocks_throttle_reasons.active",
    "pstate",
    "memory.used",
    "ecc.errors.corrected.volatile.device_memory",
    "ecc.errors.uncorrected.volatile.device_memory",
}

_HELP_NAME_RE = re.compile(r'"([A-Za-z0-9_.]+)"')


def parse_help_query_gpu(text: str) -> set[str]:
    """All field names (including ``or`` aliases) listed by ``nvidia-smi --help-query-gpu``."""
    names: set[str] = set()
    for line in text.splitlines():
        if line.startswith('"'):
            names.update(_HELP_NAME_RE.findall(line))
    return names


def select_fields(supported: set[str]) -> tuple[list[str], dict[str, str | None]]:
    """Choose the query field list and record which field feeds each column (None = unsupported)."""
    # The bus id identifies the card even if the numbering shifts because a GPU fell off the bus.
    fields = ["index", "pci.bus_id"] if "pci.bus_id" in supported else ["index"]
    sources: dict[str, str | None] = {}
    for column, candidates in COLUMN_FIELDS.items():
        chosen = next((f for f in candidates if f in supported), None)
        sources[column] = chosen
        if chosen and chosen not in fields:
            fields.append(chosen)
    return fields, sources


def convert(field: str, raw: str | None) -> int | float | None:
    """Convert one ``--format=csv,nounits`` cell into a number (pstate ``P0`` → 0, masks from hex)."""
    value = clean(raw)
    if value is None:
        return None
    if field == "pstate":
        match = re.match(r"^P(\d+)$", value)
        return int(match.group(1)) if match else None
    if value.lower().startswith("0x"):
        try:
            return int(value, 16)
        except ValueError:
            return None
    return number(value)


def parse_query_csv(text: str, fields: list[str] | None = None) -> list[dict[str, Any]]:
    """Parse ``--query-gpu`` CSV output (with or without header, with or without units).

    With a header line the field names come from it (units like ``[W]`` stripped); otherwise ``fields``
    must give them. Values keep their raw strings; use :func:`convert` for numbers.
    """
    rows = [
        r for r in csv.reader(text.splitlines(), skipinitialspace=True) if r and any(c.strip() for c in r)
    ]
    if not rows:
        return []
    names = fields
    if rows and fields is None:
        names = [re.sub(r"\s*\[[^\]]*\]\s*$", "", c.strip()) for c in rows[0]]
        rows = rows[1:]
    elif fields is not None and rows and [c.strip() for c in rows[0]][:1] == [fields[0]]:
        rows = rows[1:]  # a header slipped through (format=csv without noheader)
    assert names is not None
    return [dict(zip(names, (c.strip() for c in row), strict=False)) for row in rows]


def discover_fields() -> tuple[list[str], dict[str, str | None], str | None]:
    """Ask nvidia-smi which query fields exist; fall back to old spellings if that fails."""
    res = run_cmd(["nvidia-smi", "--help-query-gpu"], timeout=60)
    supported = parse_help_query_gpu(res.stdout) if res.ok else set()
    note = None
    if not supported:
        supported = FALLBACK_FIELDS
        note = f"--help-query-gpu unavailable ({res.error or 'no field names found'}); using fallback fields"
    fields, sources = select_fields(supported)
    return fields, sources, note


class Telemetry:
    """Columnar GPU telemetry: one list of rows per GPU index, columns as in :data:`GPU_COLUMNS`."""

    def __init__(
        self,
        interval_s: float,
        fields: list[str],
        sources: dict[str, str | None],
        index_by_bus: dict[str, int] | None = None,
    ) -> None:
        self.interval_s = interval_s
        self.fields = fields
        self.sources = sources
        # Series are keyed by the GPU's index at the start of the run, found through its PCI bus id.
        self.index_by_bus = {k.upper(): v for k, v in (index_by_bus or {}).items()}
        self.t0: datetime | None = None
        self._t0_mono: float | None = None
        self.series: dict[str, list[list[int | float | None]]] = {}
        self.samples = 0
        self.failed = 0
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def start_clock(self) -> None:
        self.t0 = utc_now()
        self._t0_mono = time.monotonic()

    def add(self, text: str, at_mono: float) -> int:
        """Add one nvidia-smi response; return the number of GPU rows stored."""
        assert self._t0_mono is not None
        offset = round(at_mono - self._t0_mono, 3)
        stored = 0
        with self.lock:
            for row in parse_query_csv(text, self.fields):
                idx = convert("index", row.get("index"))
                bus = (clean(row.get("pci.bus_id")) or "").upper()
                if self.index_by_bus and bus:
                    if bus not in self.index_by_bus:
                        self._note(
                            f"GPU {bus} was not present at the start of the run; its samples are ignored"
                        )
                        continue
                    idx = self.index_by_bus[bus]
                if idx is None:
                    continue
                values: list[int | float | None] = [offset]
                for column in COLUMN_FIELDS:
                    field = self.sources.get(column)
                    values.append(convert(field, row.get(field)) if field else None)
                self.series.setdefault(str(int(idx)), []).append(values)
                stored += 1
            self.samples += 1
        return stored

    def _note(self, error: str) -> None:
        # Keep the first few distinct errors; a 72 h run must not grow the report without bound.
        if len(self.errors) < 20 and error not in self.errors:
            self.errors.append(error)

    def record_failure(self, error: str) -> None:
        with self.lock:
            self.failed += 1
            self._note(error)

    def rows(self, gpu: str) -> list[list[int | float | None]]:
        """A copy of one GPU's rows."""
        with self.lock:
            return [list(r) for r in self.series.get(gpu, [])]

    def column(self, gpu: str, name: str) -> list[int | float | None]:
        """All values of one column for one GPU."""
        pos = GPU_COLUMNS.index(name)
        return [row[pos] for row in self.rows(gpu)]

    def to_report(self) -> dict[str, Any]:
        with self.lock:
            return {
                "interval_s": self.interval_s,
                "t0": iso(self.t0),
                "source": "nvidia-smi --query-gpu --format=csv,noheader,nounits",
                "gpu_columns": list(GPU_COLUMNS),
                "gpu_column_sources": dict(self.sources),
                "gpu_series": {k: [list(r) for r in v] for k, v in self.series.items()},
                "samples": self.samples,
                "samples_failed": self.failed,
                "errors": list(self.errors),
            }


class Sampler(threading.Thread):
    """Background thread that samples every ``interval_s`` until :meth:`stop` is called."""

    def __init__(self, telemetry: Telemetry, verbose: bool = False, timeout_s: float = 30.0) -> None:
        super().__init__(name="probe-sampler", daemon=True)
        self.telemetry = telemetry
        self.verbose = verbose
        self.timeout_s = timeout_s
        self._stop_event = threading.Event()

    def stop(self) -> None:
        self._stop_event.set()

    def sample_once(self) -> None:
        at = time.monotonic()
        res = run_cmd(
            ["nvidia-smi", f"--query-gpu={','.join(self.telemetry.fields)}", "--format=csv,noheader,nounits"],
            timeout=self.timeout_s,
        )
        if not res.ok:
            self.telemetry.record_failure(res.error or "unknown error")
            return
        stored = self.telemetry.add(res.stdout, at)
        if stored == 0:
            self.telemetry.record_failure("nvidia-smi returned no GPU rows")
        elif self.verbose:
            print(
                f"probe: telemetry sample {self.telemetry.samples} ({stored} GPUs)",
                file=sys.stderr,
                flush=True,
            )

    def run(self) -> None:
        if self.telemetry.t0 is None:
            self.telemetry.start_clock()
        start = time.monotonic()
        k = 0
        while not self._stop_event.is_set():
            self.sample_once()
            k += 1
            # Schedule on a fixed grid so slow nvidia-smi calls do not make the series drift.
            next_at = start + k * self.telemetry.interval_s
            delay = next_at - time.monotonic()
            if delay < 0:
                skipped = int(-delay // self.telemetry.interval_s) + 1
                k += skipped
                delay = start + k * self.telemetry.interval_s - time.monotonic()
            self._stop_event.wait(max(delay, 0.0))


def summarize(telemetry: Telemetry, gpu: str) -> dict[str, Any]:
    """Per-GPU aggregates: peaks, minimum T.Limit, clocks-event share, power and the link under load."""
    # One consistent copy: the sampler thread may append while a checkpoint is being written.
    rows = telemetry.rows(gpu)
    col = {name: [row[i] for row in rows] for i, name in enumerate(GPU_COLUMNS)}

    def values(name: str) -> list[Any]:
        return [v for v in col[name] if v is not None]

    temps, tlimits, mem_temps, power = (
        values("temp_c"),
        values("tlimit_c"),
        values("mem_temp_c"),
        values("power_w"),
    )
    masks = [int(m) for m in values("clocks_event_mask")]
    seen = 0
    for mask in masks:
        seen |= mask
    # "Under load" as DCGM defines it for the link check: P0 and utilisation >= 80 %.
    loaded = [
        (gen, width)
        for pstate, util, gen, width in zip(
            col["pstate"], col["util_pct"], col["pcie_gen"], col["pcie_width"], strict=True
        )
        if pstate == 0 and util is not None and util >= 80
    ]
    gens = [g for g, _ in loaded if g is not None]
    widths = [w for _, w in loaded if w is not None]
    return {
        "samples": len(rows),
        "peak_gpu_c": max(temps) if temps else None,
        "min_tlimit_c": min(tlimits) if tlimits else None,
        "peak_mem_c": max(mem_temps) if mem_temps else None,
        "mean_w": round(sum(power) / len(power), 2) if power else None,
        "max_w": max(power) if power else None,
        "mask_seen": seen,
        "mask_samples": len(masks),
        "sw_power_cap_fraction": round(sum(1 for m in masks if m & 0x4) / len(masks), 4) if masks else None,
        "loaded_samples": len(loaded),
        "loaded_min_gen": min(gens) if gens else None,
        "loaded_min_width": min(widths) if widths else None,
    }
