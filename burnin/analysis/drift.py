"""Drift: a field-check or post-repair run against each GPU's own baseline. Pure Python, no Django.

A burn-in that passed the gate (or, for a card that came in under warranty, its passing post-repair run) is
the GPU's baseline. A later run of the same server is compared with it GPU by GPU, matched by the card's
key (its normalised serial, or its UUID where it has no serial), never by index: cards move between slots
in a repair. The caller builds :class:`GpuFigures` from the stored results of both runs and stores what
:func:`compare` returns as ordinary findings (codes ``drift_*``) under :data:`DRIFT_RULES_VERSION`.

The thresholds, and which of the ordinary analysis' codes count as throttling, GPU errors or DIMM ECC,
live in :class:`burnin.rules.DriftThresholds`, each with its reasoning.

Every finding's ``evidence`` has ``serial``, ``component_id``, ``baseline_run``, ``baseline``, ``value``
and ``unit``; its ``params`` hold the figures of its sentence (``burnin.findings_text`` words them in the
reader's language) and always ``serial`` (empty for a card without one, then ``uuid``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from burnin.analysis.common import and_join, deg, link_text, rounded
from burnin.analysis.context import Finding
from burnin.rules import DRIFT, DRIFT_RULES_VERSION, DriftThresholds

__all__ = ["CODE_WORDS", "DRIFT_PREFIX", "DRIFT_RULES_VERSION", "GpuFigures", "compare"]

#: Every drift finding's code starts so: how the ingest, the pages and the claims tell a drift from the
#: ordinary rules' findings on the same run.
DRIFT_PREFIX = "drift_"

_RANK = {"fail": 0, "warn": 1, "info": 2}

#: How a drift sentence names an ordinary finding that is new since the baseline (English; the German in
#: ``burnin.findings_text``), in the order a sentence lists them: the ordinary failures before its warnings.
#: Plural, as the code says nothing of how many.
CODE_WORDS: Mapping[str, str] = {
    "throttling_active": "throttling",
    "thermal_margin_low": "low thermal margin",
    "gpu_ecc_uncorrectable": "uncorrectable ECC errors in GPU memory",
    "gpu_row_remap_failure": "failed row remapping",
    "compute_errors": "compute errors or Xid events",
    "gpu_row_remap_pending": "a pending row remap",
    "gpu_ecc_correctable_growth": "correctable ECC errors in GPU memory",
    "host_dimm_correctable": "correctable ECC errors in the BMC event log",
    "host_ecc_logging_limit_reached": "the BMC's correctable ECC logging limit reached",
    "ecc_correlated_periodic": "correctable ECC errors in the same second on several DIMMs",
    "ecc_periodic_single_dimm": "strictly periodic correctable ECC errors",
}


@dataclass(frozen=True)
class GpuFigures:
    """What one GPU of one run measured, as the drift rules need it."""

    index: int
    key: str  # normalised serial, or the UUID for cards without a serial
    serial: str
    component_id: int | None
    load_gen: int | None
    load_width: int | None
    h2d_gbps: float | None
    tflops: float | None
    vram_gbps: float | None
    peak_temp_c: float | None
    mean_power_w: float | None
    codes: frozenset[str] = frozenset()  # codes of the run's warn/fail findings on this GPU
    run_id: int | None = None  # the run the figures come from

    def as_dict(self) -> dict[str, Any]:
        """The figures, JSON-safe (a missing GPU's evidence)."""
        return {
            "index": self.index,
            "load_gen": self.load_gen,
            "load_width": self.load_width,
            "h2d_gbps": self.h2d_gbps,
            "tflops": self.tflops,
            "vram_gbps": self.vram_gbps,
            "peak_temp_c": self.peak_temp_c,
            "mean_power_w": self.mean_power_w,
            "codes": sorted(self.codes),
        }


def compare(
    *,
    current: Sequence[GpuFigures],
    baseline: Mapping[str, GpuFigures],
    host_codes: frozenset[str] = frozenset(),
    baseline_host_codes: frozenset[str] = frozenset(),
    limits: DriftThresholds = DRIFT,
) -> list[Finding]:
    """The drift findings of a run, failures first, then warnings, then notes; within one severity GPU by
    GPU (the current run's order), then the baseline's missing GPUs, then the host."""
    findings: list[Finding] = []
    seen: set[str] = set()
    for gpu in sorted(current, key=lambda g: g.index):
        seen.add(gpu.key)
        base = baseline.get(gpu.key)
        if base is None:
            findings.append(_no_baseline(gpu))
            continue
        for rule in (_link, _h2d, _gpu_errors, _tflops, _vram, _thermal, _throttling):
            findings.extend(rule(gpu, base, limits))
    for key, base in sorted(baseline.items(), key=lambda item: item[1].index):
        if key not in seen:
            findings.append(_missing(base))
    findings.extend(_dimm_ecc(host_codes, baseline_host_codes, baseline, limits))
    return sorted(findings, key=lambda f: _RANK[f.severity])


# --- words and evidence ------------------------------------------------------------------------------------
def _card(gpu: GpuFigures) -> str:
    return f"serial {gpu.serial}" if gpu.serial else f"UUID {gpu.key}"


def _who(gpu: GpuFigures) -> dict[str, Any]:
    """The params that name the card (``burnin.findings_text`` builds the same words from them)."""
    return {"serial": gpu.serial} if gpu.serial else {"serial": "", "uuid": gpu.key}


def _evidence(
    gpu: GpuFigures, base: GpuFigures | None, baseline: Any, value: Any, unit: str | None, **more: Any
) -> dict[str, Any]:
    return {
        "serial": gpu.serial,
        "key": gpu.key,
        "component_id": gpu.component_id,
        "baseline_run": base.run_id if base else None,
        "baseline_index": base.index if base else None,
        "baseline": baseline,
        "value": value,
        "unit": unit,
        **more,
    }


def _down_pct(value: float, base: float) -> float:
    """How far ``value`` fell below ``base``, in percent: one decimal below 20 % (near the thresholds the
    decimal matters), whole percent above (13.9 against 27.7 GB/s is "down 50 %")."""
    drop = (1 - value / base) * 100
    return round(drop) if drop >= 20 else round(drop, 1)


def _pct(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _link_parts(gpu: GpuFigures, base: GpuFigures) -> tuple[str, str]:
    """("x8", "x16"), ("Gen4", "Gen5") or ("Gen4 x8", "Gen5 x16"): the parts that fell, as
    ``context.Link.describe`` words them."""
    gen_low = _lower(gpu.load_gen, base.load_gen)
    width_low = _lower(gpu.load_width, base.load_width)
    if gen_low and not width_low:
        return f"Gen{gpu.load_gen}", f"Gen{base.load_gen}"
    if width_low and not gen_low:
        return f"x{gpu.load_width}", f"x{base.load_width}"
    return link_text(gpu.load_gen, gpu.load_width), link_text(base.load_gen, base.load_width)


def _lower(now: int | None, then: int | None) -> bool:
    return now is not None and then is not None and now < then


def _link_fell(gpu: GpuFigures, base: GpuFigures) -> bool:
    gen_low = _lower(gpu.load_gen, base.load_gen)
    width_low = _lower(gpu.load_width, base.load_width)
    return bool(gen_low or width_low)


# --- the rules ---------------------------------------------------------------------------------------------
def _link(gpu: GpuFigures, base: GpuFigures, limits: DriftThresholds) -> Iterable[Finding]:
    """The link under load narrower or slower than at the baseline: a riser, a seating, a slot (fail)."""
    if not _link_fell(gpu, base):
        return
    now, was = _link_parts(gpu, base)
    params = dict(_who(gpu), link=now, baseline_link=was)
    yield Finding(
        "drift_link",
        "fail",
        gpu.index,
        f"PCIe link at {now} under load, down from {was} at its baseline ({_card(gpu)})",
        _evidence(
            gpu,
            base,
            link_text(base.load_gen, base.load_width),
            link_text(gpu.load_gen, gpu.load_width),
            None,
            baseline_gen=base.load_gen,
            baseline_width=base.load_width,
            gen=gpu.load_gen,
            width=gpu.load_width,
        ),
        params,
    )


def _h2d(gpu: GpuFigures, base: GpuFigures, limits: DriftThresholds) -> Iterable[Finding]:
    """H2D more than 10 % below the baseline's (fail); with the link's fall when there is one."""
    value, was = gpu.h2d_gbps, base.h2d_gbps
    if value is None or was is None or was <= 0 or value >= (1 - limits.h2d_drop_fail) * was:
        return
    params: dict[str, Any] = dict(
        _who(gpu), h2d_gbps=round(value, 1), baseline_gbps=round(was, 1), down_pct=_down_pct(value, was)
    )
    text = (
        f"H2D {params['h2d_gbps']:.1f} GB/s, down {_pct(params['down_pct'])} % from "
        f"{params['baseline_gbps']:.1f} GB/s at its baseline ({_card(gpu)})"
    )
    if _link_fell(gpu, base):
        now, then = _link_parts(gpu, base)
        params.update(variant="link", link=now, baseline_link=then)
        text += f": link at {now} ({then} at its baseline)"
    yield Finding(
        "drift_h2d",
        "fail",
        gpu.index,
        text,
        _evidence(gpu, base, was, value, "GB/s", threshold_drop=limits.h2d_drop_fail),
        params,
    )


def _figure_drop(
    code: str,
    gpu: GpuFigures,
    base: GpuFigures,
    value: float | None,
    was: float | None,
    limit: float,
    unit: str,
) -> Iterable[Finding]:
    if value is None or was is None or was <= 0 or value >= (1 - limit) * was:
        return
    down = _down_pct(value, was)
    if unit == "TFLOPS":
        params = dict(_who(gpu), tflops=round(value, 1), baseline_tflops=round(was, 1), down_pct=down)
        text = (
            f"FP16 {params['tflops']:.1f} TFLOPS, down {_pct(down)} % from {params['baseline_tflops']:.1f} "
            f"TFLOPS at its baseline ({_card(gpu)})"
        )
    else:
        params = dict(_who(gpu), vram_gbps=round(value), baseline_gbps=round(was), down_pct=down)
        text = (
            f"VRAM {params['vram_gbps']:,} GB/s, down {_pct(down)} % from {params['baseline_gbps']:,} GB/s "
            f"at its baseline ({_card(gpu)})"
        )
    yield Finding(
        code, "warn", gpu.index, text, _evidence(gpu, base, was, value, unit, threshold_drop=limit), params
    )


def _tflops(gpu: GpuFigures, base: GpuFigures, limits: DriftThresholds) -> Iterable[Finding]:
    """FP16 TFLOPS more than 5 % below the baseline's (warn: clocks a site's air or power limit can cost)."""
    return _figure_drop("drift_tflops", gpu, base, gpu.tflops, base.tflops, limits.tflops_drop_warn, "TFLOPS")


def _vram(gpu: GpuFigures, base: GpuFigures, limits: DriftThresholds) -> Iterable[Finding]:
    """VRAM bandwidth more than 5 % below the baseline's (warn, as TFLOPS)."""
    return _figure_drop("drift_vram", gpu, base, gpu.vram_gbps, base.vram_gbps, limits.vram_drop_warn, "GB/s")


def _thermal(gpu: GpuFigures, base: GpuFigures, limits: DriftThresholds) -> Iterable[Finding]:
    """Peak temperature more than 5 °C above the baseline's at the same power or less (warn)."""
    peak, was, power, was_power = gpu.peak_temp_c, base.peak_temp_c, gpu.mean_power_w, base.mean_power_w
    if peak is None or was is None or power is None or was_power is None or was_power <= 0:
        return
    if power > (1 + limits.same_power_above) * was_power:  # the heat may be the extra power's
        return
    rise = peak - was
    if rise <= limits.temp_rise_warn_c:
        return
    params = dict(
        _who(gpu),
        peak_c=rounded(peak, 1),
        baseline_peak_c=rounded(was, 1),
        rise_c=rounded(rise, 1),
        power_w=round(power),
        baseline_power_w=round(was_power),
    )
    yield Finding(
        "drift_thermal",
        "warn",
        gpu.index,
        f"peaks at {deg(params['peak_c'])}, up {deg(params['rise_c'])} from {deg(params['baseline_peak_c'])} "
        f"at its baseline ({_card(gpu)}), at {params['power_w']} W mean power "
        f"({params['baseline_power_w']} W at its baseline)",
        _evidence(
            gpu,
            base,
            was,
            peak,
            "°C",
            power_w=power,
            baseline_power_w=was_power,
            threshold_rise_c=limits.temp_rise_warn_c,
        ),
        params,
    )


_ORDER = {code: rank for rank, code in enumerate(CODE_WORDS)}


def _listed(codes: Iterable[str]) -> list[str]:
    """Codes in ``CODE_WORDS`` order (a code it does not know last, by name)."""
    return sorted(codes, key=lambda code: (_ORDER.get(code, len(_ORDER)), code))


def _new_codes(
    code: str,
    severity: str,
    gpu: GpuFigures,
    base: GpuFigures,
    watched: frozenset[str],
) -> Iterable[Finding]:
    new = _listed((gpu.codes & watched) - base.codes)
    if not new:
        return
    yield Finding(
        code,
        severity,
        gpu.index,
        f"new since its baseline ({_card(gpu)}): {and_join([CODE_WORDS.get(c, c) for c in new])}",
        _evidence(gpu, base, _listed(base.codes & watched), _listed(gpu.codes & watched), None, new=new),
        dict(_who(gpu), codes=new),
    )


def _gpu_errors(gpu: GpuFigures, base: GpuFigures, limits: DriftThresholds) -> Iterable[Finding]:
    """GPU memory ECC, row remapping or Xid findings the baseline did not have (fail)."""
    return _new_codes("drift_gpu_errors", "fail", gpu, base, limits.gpu_error_codes)


def _throttling(gpu: GpuFigures, base: GpuFigures, limits: DriftThresholds) -> Iterable[Finding]:
    """Throttling or a thermal margin the baseline did not have (warn)."""
    return _new_codes("drift_throttling", "warn", gpu, base, limits.throttle_codes)


def _missing(base: GpuFigures) -> Finding:
    """A card of the baseline that the run does not show (fail), under its index at the baseline."""
    return Finding(
        "drift_gpu_missing",
        "fail",
        base.index,
        f"the baseline's card ({_card(base)}) is missing from this run",
        _evidence(base, base, base.as_dict(), None, None),
        dict(_who(base), baseline_run=base.run_id),
    )


def _no_baseline(gpu: GpuFigures) -> Finding:
    """A card no accepted run has measured (a replacement): nothing to compare with (info)."""
    return Finding(
        "drift_no_baseline",
        "info",
        gpu.index,
        f"no baseline for this card ({_card(gpu)}) yet: not compared (a passing post-repair run becomes "
        "its baseline)",
        _evidence(gpu, None, None, None, None),
        _who(gpu),
    )


def _dimm_ecc(
    host_codes: frozenset[str],
    baseline_host_codes: frozenset[str],
    baseline: Mapping[str, GpuFigures],
    limits: DriftThresholds,
) -> Iterable[Finding]:
    """Correctable DIMM ECC findings the baseline's host did not have (warn, subject "host")."""
    watched = limits.dimm_ce_codes
    new = _listed((host_codes & watched) - baseline_host_codes)
    if not new:
        return
    # The host's baseline is the earliest run among the GPUs' baselines: the burn-in (run ids only grow).
    runs = [b.run_id for b in baseline.values() if b.run_id is not None]
    yield Finding(
        "drift_dimm_ecc",
        "warn",
        "host",
        f"new since the baseline: {and_join([CODE_WORDS.get(c, c) for c in new])}",
        {
            "serial": None,
            "component_id": None,
            "baseline_run": min(runs) if runs else None,
            "baseline": _listed(baseline_host_codes & watched),
            "value": _listed(host_codes & watched),
            "unit": None,
            "new": new,
        },
        {"codes": new},
    )
