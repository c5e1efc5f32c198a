"""What a report says, read once: per-GPU links, the telemetry reduced in one pass, the findings' types.

Each telemetry column a rule needs is pulled out once (in C) and reduced with builtins, so a 72 h report
of eight GPUs (207,360 samples) is analysed in well under the 0.5 s budget (``make bench``).
"""

from __future__ import annotations

import operator
import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import compress, repeat
from typing import Any

from burnin.analysis.common import first_of, iso, link_text, lowest, num, parse_time
from burnin.rules import HW_POWER_BRAKE, HW_SLOWDOWN, SW_POWER_CAP, THERMAL_BITS, Thresholds

#: The clock-event reasons that fail a run (rule 10); the SW power cap is not among them.
BAD_BITS = HW_SLOWDOWN | THERMAL_BITS | HW_POWER_BRAKE


@dataclass(frozen=True)
class Finding:
    """One finding. ``subject`` is the GPU's index (an int) for a GPU finding, otherwise a label such as
    ``"DIMM A1"``, ``"DIMMs A1, B1"``, ``"GPUs 0, 2"``, ``"host"`` or ``"stage burn"``.

    ``message`` is the English sentence (for the CLI and the stored row); it never repeats the subject,
    which is shown beside it. ``params`` holds the figures the sentence is made of (JSON-safe), so that
    Werkbank's pages can word the same finding in the reader's language (``burnin.findings_text``): one
    template per code and ``params["variant"]``. ``gpu_index`` is the GPU a finding about several GPUs is
    filed under (the worst one); a GPU finding's index otherwise. ``explained_by`` is the
    ``(code, subject)`` of the finding of the same report that explains this one (a correlated ECC pattern
    explains the per-DIMM warnings of the DIMMs it covers)."""

    code: str
    severity: str  # "info" | "warn" | "fail"
    subject: int | str
    message: str
    evidence: dict[str, Any]
    params: dict[str, Any] = field(default_factory=dict)
    gpu_index: int | None = None
    explained_by: tuple[str, int | str] | None = None

    def __post_init__(self) -> None:
        if self.gpu_index is None and isinstance(self.subject, int):
            object.__setattr__(self, "gpu_index", self.subject)

    @property
    def key(self) -> tuple[str, int | str]:
        """What ``explained_by`` names (unique among the findings that explain others)."""
        return self.code, self.subject

    def as_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity,
            "subject": self.subject,
            "gpu_index": self.gpu_index,
            "message": self.message,
            "params": self.params,
            "evidence": self.evidence,
            "explained_by": (
                {"code": self.explained_by[0], "subject": self.explained_by[1]} if self.explained_by else None
            ),
        }


@dataclass(frozen=True)
class Expectations:
    """What the server should give each card, from Werkbank's own data (not from the report)."""

    #: The configuration's stated platform PCIe generation (an EPYC 7643 platform is Gen4).
    platform_max_gen: int | None = None
    #: GPU serial -> (generation, width) of the connector the card is installed in.
    slot_links: Mapping[str, tuple[int | None, int | None]] = field(default_factory=dict)
    #: The burn-in the order promises, seconds of full load under all GPUs (rule `burnin_too_short`).
    target_s: float | None = None


@dataclass
class Series:
    """One GPU's telemetry, reduced in one pass."""

    samples: int
    t_first: float
    t_last: float
    max_gap_s: float
    long_gaps: list[tuple[float, float]]  # (offset where the gap starts, length), gaps over the limit
    missing: int
    peak_temp: float | None
    min_tlimit: float | None
    mask_seen: int
    mask_samples: int
    capped_samples: int
    bad_samples: int
    first_bad_t: float | None
    loaded: int
    loaded_min_gen: int | None
    loaded_min_width: int | None
    loaded_below: int
    loaded_power_mean: float | None
    ecc_corr_growth: int | None
    ecc_unc_max: int | None


@dataclass
class Link:
    """A card's link: what it can do, what the server should give it, and what it ran at under load."""

    card_gen: int | None
    host_gen: int | None  # the host root port's maximum (report), null in a VM
    driver_max_gen: int | None  # NVML max: min of card and host
    driver_max_width: int | None
    promised_gen: int | None  # from the configuration (platform, connector)
    expected_gen: int | None  # what the link can train to here
    expected_width: int
    width_source: str
    loaded_samples: int
    loaded_gen: int | None
    loaded_width: int | None
    loaded_below: int | None
    loaded_source: str | None

    @property
    def downtrained(self) -> bool:
        if not self.loaded_samples:
            return False
        gen_low = None not in (self.loaded_gen, self.expected_gen) and self.loaded_gen < self.expected_gen
        width_low = self.loaded_width is not None and self.loaded_width < self.expected_width
        return bool(gen_low or width_low)

    def describe(self) -> tuple[str, str]:
        """("x8", "x16"), ("Gen3", "Gen4") or ("Gen3 x8", "Gen4 x16"): the parts that fall short."""
        gen_low = None not in (self.loaded_gen, self.expected_gen) and self.loaded_gen < self.expected_gen
        width_low = self.loaded_width is not None and self.loaded_width < self.expected_width
        if gen_low and not width_low:
            return f"Gen{self.loaded_gen}", f"Gen{self.expected_gen}"
        if width_low and not gen_low:
            return f"x{self.loaded_width}", f"x{self.expected_width}"
        return link_text(self.loaded_gen, self.loaded_width), link_text(
            self.expected_gen, self.expected_width
        )


@dataclass
class Gpu:
    """One card of the report with what the analysis derived from it."""

    index: int
    data: Mapping[str, Any]
    sku: str
    link: Link
    series: Series | None

    def get(self, *path: str) -> Any:
        value: Any = self.data
        for key in path:
            if not isinstance(value, Mapping):
                return None
            value = value.get(key)
        return value


@dataclass
class Context:
    """The report and what every rule needs from it, built once per analysis."""

    report: Mapping[str, Any]
    limits: Thresholds
    gpus: list[Gpu]
    t0: datetime | None
    interval_s: float | None

    def at(self, offset: float | None) -> str | None:
        if self.t0 is None or offset is None:
            return None
        return iso(self.t0 + timedelta(seconds=offset))


def build_context(report: Mapping[str, Any], expectations: Expectations, limits: Thresholds) -> Context:
    """Read the report once: each GPU's expected link, its telemetry reduced, its link under load."""
    telemetry = report.get("telemetry") or {}
    columns = {name: i for i, name in enumerate(telemetry.get("gpu_columns") or [])}
    series = telemetry.get("gpu_series") or {}
    interval = num(telemetry.get("interval_s")) or None
    gpus = []
    for data in report.get("gpus") or []:
        if not isinstance(data, Mapping) or not isinstance(data.get("index"), int):
            continue
        link = _expected_link(data, expectations, limits)
        rows = series.get(str(data["index"])) or []
        scanned = _scan(rows, columns, interval, link, limits) if rows and columns else None
        _apply_loaded(link, scanned, data)
        gpus.append(Gpu(data["index"], data, sku_of(data), link, scanned))
    return Context(
        report=report,
        limits=limits,
        gpus=sorted(gpus, key=lambda g: g.index),
        t0=parse_time(telemetry.get("t0")),
        interval_s=interval,
    )


def _expected_link(gpu: Mapping[str, Any], expectations: Expectations, limits: Thresholds) -> Link:
    pcie = gpu.get("pcie") or {}
    load = pcie.get("load") or {}
    snap = (((gpu.get("snapshots") or {}).get("start") or {}).get("pcie")) or {}
    sysfs = pcie.get("sysfs") or {}
    card_lnk = sysfs.get("gpu") or {}
    card_gen = first_of(
        load.get("device_max_gen"), snap.get("device_max_gen"), (pcie.get("expected") or {}).get("gen")
    )
    card_gen = first_of(card_gen, card_lnk.get("max_gen"))
    host_gen = first_of(load.get("host_max_gen"), snap.get("host_max_gen"))
    driver_max_gen = first_of(load.get("max_gen"), snap.get("max_gen"))
    driver_max_width = first_of(load.get("max_width"), snap.get("max_width"))
    slot_gen, slot_width = expectations.slot_links.get(str(gpu.get("serial")), (None, None))
    promised_gen = lowest(expectations.platform_max_gen, slot_gen)
    expected_gen = lowest(card_gen, host_gen, driver_max_gen, promised_gen)
    if slot_width:
        expected_width, source = slot_width, "connector"
    else:
        expected_width, source = limits.default_link_width, "SKU (x16)"
    card_width = card_lnk.get("max_link_width")
    if isinstance(card_width, int) and 0 < card_width < expected_width:
        expected_width, source = card_width, "the card's own LnkCap"
    return Link(
        card_gen=card_gen,
        host_gen=host_gen,
        driver_max_gen=driver_max_gen,
        driver_max_width=driver_max_width,
        promised_gen=promised_gen,
        expected_gen=expected_gen,
        expected_width=expected_width,
        width_source=source,
        loaded_samples=0,
        loaded_gen=None,
        loaded_width=None,
        loaded_below=None,
        loaded_source=None,
    )


def _apply_loaded(link: Link, series: Series | None, gpu: Mapping[str, Any]) -> None:
    """The link under load: from the telemetry when it has loaded samples, else the probe's summary."""
    if series is not None and series.loaded:
        link.loaded_samples, link.loaded_source = series.loaded, "telemetry"
        link.loaded_gen, link.loaded_width = series.loaded_min_gen, series.loaded_min_width
        link.loaded_below = series.loaded_below
        return
    load = (gpu.get("pcie") or {}).get("load") or {}
    if load.get("samples"):
        link.loaded_samples, link.loaded_source = int(load["samples"]), "probe summary"
        link.loaded_gen, link.loaded_width = load.get("gen"), load.get("width")


def _scan(
    rows: Sequence[Sequence[Any]],
    columns: Mapping[str, int],
    interval: float | None,
    link: Link,
    limits: Thresholds,
) -> Series | None:
    """Reduce one GPU's rows, one pass over each column it needs.

    Columns are pulled out with ``itemgetter`` (in C, allocating no container per row: a per-row
    iterator, as ``zip(*rows)`` makes, would wake the garbage collector, which then walks every row of
    the report again and again, doubling the time).
    """
    n = len(rows)
    cache: dict[str, Sequence[Any]] = {}

    def col(name: str) -> Sequence[Any]:
        if name not in cache:
            i = columns.get(name)
            if i is None:
                cache[name] = tuple(repeat(None, n))
            else:
                try:
                    cache[name] = list(map(operator.itemgetter(i), rows))
                except (IndexError, TypeError):  # a short or malformed row: read what is there
                    cache[name] = [r[i] if isinstance(r, Sequence) and len(r) > i else None for r in rows]
        return cache[name]

    t = col("t_offset_s")
    if n == 0 or None in t:
        return None
    gaps = list(map(operator.sub, t[1:], t[:-1]))
    max_gap = max(gaps, default=0.0)
    long_gaps: list[tuple[float, float]] = []
    missing = 0
    if interval and max_gap > 1.5 * interval:  # only a series with holes needs the second look
        long_gaps = [(t[i], g) for i, g in enumerate(gaps) if g > limits.telemetry_max_gap_s]
        # Missing samples, gap by gap: robust to a clock that drifts a little on every sample.
        missing = sum(round(g / interval) - 1 for g in gaps if g > 1.5 * interval)
    elif max_gap > limits.telemetry_max_gap_s:
        long_gaps = [(t[i], g) for i, g in enumerate(gaps) if g > limits.telemetry_max_gap_s]
    temps = [v for v in col("temp_c") if v is not None]
    tlimits = [v for v in col("tlimit_c") if v is not None]

    # Masks take few distinct values: count them in C, then look at each value once.
    masks = col("clocks_event_mask")
    seen = capped = counted = bad = 0
    for mask, count in Counter(masks).items():
        if mask is None:
            continue
        counted += count
        seen |= int(mask)
        capped += count if int(mask) & SW_POWER_CAP else 0
        bad += count if int(mask) & BAD_BITS else 0
    first_bad = (
        next(t[i] for i, m in enumerate(masks) if m is not None and int(m) & BAD_BITS) if bad else None
    )

    # Under load as DCGM has it: P0 (or a pstate the driver does not report) at >= 80 % utilisation.
    threshold = limits.load_util_pct
    busy = [
        u is not None and u >= threshold and (p is None or p == 0)
        for p, u in zip(col("pstate"), col("util_pct"), strict=True)
    ]
    loaded = sum(busy)
    gens = [g for g in compress(col("pcie_gen"), busy) if g is not None]
    widths = [w for w in compress(col("pcie_width"), busy) if w is not None]
    min_gen, min_width = min(gens, default=None), min(widths, default=None)
    want_gen, want_width = link.expected_gen, link.expected_width
    below = 0
    if (min_width is not None and min_width < want_width) or (
        None not in (min_gen, want_gen) and min_gen < want_gen
    ):
        below = sum(
            1
            for gen, width in compress(zip(col("pcie_gen"), col("pcie_width"), strict=True), busy)
            if (width is not None and width < want_width) or (None not in (gen, want_gen) and gen < want_gen)
        )
    powers = [w for w in compress(col("power_w"), busy) if w is not None]

    corr = [v for v in col("ecc_dram_corr") if v is not None]
    unc = [v for v in col("ecc_dram_unc") if v is not None]
    return Series(
        samples=n,
        t_first=t[0],
        t_last=t[-1],
        max_gap_s=max_gap,
        long_gaps=long_gaps,
        missing=missing,
        peak_temp=max(temps) if temps else None,
        min_tlimit=min(tlimits) if tlimits else None,
        mask_seen=seen,
        mask_samples=counted,
        capped_samples=capped,
        bad_samples=bad,
        first_bad_t=first_bad,
        loaded=loaded,
        loaded_min_gen=int(min_gen) if min_gen is not None else None,
        loaded_min_width=int(min_width) if min_width is not None else None,
        loaded_below=below,
        loaded_power_mean=sum(powers) / len(powers) if powers else None,
        ecc_corr_growth=int(corr[-1] - corr[0]) if corr else None,
        ecc_unc_max=int(max(unc)) if unc else None,
    )


def peer_median(ctx: Context, gpu: Gpu, value_of: Callable[[Gpu], float | None]) -> tuple[float | None, int]:
    """Median of one value over the same-SKU cards of the server (the card included); None below
    ``min_peers`` comparable cards (rule 3)."""
    values = [v for g in ctx.gpus if g.sku == gpu.sku and (v := value_of(g)) is not None]
    if len(values) < ctx.limits.min_peers:
        return None, len(values)
    return statistics.median(values), len(values)


def sku_of(gpu: Mapping[str, Any]) -> str:
    """PCI device id without the vendor (``2BB410DE`` -> ``2BB4``), else the name."""
    device = str(gpu.get("pci_device_id") or "").upper().removeprefix("0X")
    return device[:4] if len(device) >= 4 else str(gpu.get("name") or "")
