"""The thermal and power rules (docs/reference/burnin.md §4, rules 9–11): thermal margin, clock-event
reasons (throttling), and power delivery under load."""

from __future__ import annotations

import statistics
from collections.abc import Iterable

from burnin.analysis.common import deg, first_of, gpus_label, highest, num, rounded
from burnin.analysis.context import BAD_BITS, Context, Finding, Gpu, peer_median
from burnin.rules import BAD_COUNTER_NAMES, BAD_REASON_NAMES, REASON_WORDS, THERMAL_BITS

#: The probe's name of each bad clock-event reason, as a finding's params carry it (``REASON_WORDS`` order).
REASON_NAMES = {bit: name for name, bit in BAD_REASON_NAMES.items()}


def _margin(gpu: Gpu) -> tuple[float | None, float | None, str | None]:
    """(margin °C at peak, peak °C, how the margin was found). Rule 9: min T.Limit; without T.Limit
    samples, the T.Limit temperature from the start snapshot (temperature + T.Limit) less the peak; on
    older drivers, GPU_MAX (or slowdown) threshold less the peak."""
    series, thermal = gpu.series, gpu.get("thermal") or {}
    peak = highest(series.peak_temp if series else None, num(thermal.get("peak_gpu_c")))
    candidates = []
    if series and series.min_tlimit is not None:
        candidates.append((series.min_tlimit, "T.Limit samples"))
    elif num(thermal.get("min_tlimit_c")) is not None and series is None:
        candidates.append((num(thermal.get("min_tlimit_c")), "probe summary"))
    start = gpu.get("snapshots", "start") or {}
    if peak is not None and num(start.get("temp_c")) is not None and num(start.get("tlimit_c")) is not None:
        candidates.append((start["temp_c"] + start["tlimit_c"] - peak, "T.Limit temperature less the peak"))
    limits = thermal.get("thresholds") or {}
    absolute = first_of(num(limits.get("max_op_c")), num(limits.get("slowdown_c")))
    if peak is not None and absolute is not None:
        candidates.append((absolute - peak, "threshold less the peak"))
    if not candidates:
        return None, peak, None
    margin, source = min(candidates, key=lambda c: c[0])
    return margin, peak, source


#: How a GPU's thermal margin falls short (rule 9), worst first.
_THERMAL_VARIANTS = ("none", "slowdown", "low")


def _thermal_words(variant: str, margin: float | None, peak: float | None) -> str:
    if variant == "none":
        return f"no thermal margin at peak ({deg(margin)} at {deg(peak)})"
    if variant == "slowdown":
        return f"thermal slowdown during the run (peak {deg(peak)})"
    return f"thermal margin {deg(margin)} at peak ({deg(peak)})"


def thermal(ctx: Context) -> Iterable[Finding]:
    """Rule 9: thermal margin at peak, thermal clock events, and a GPU much hotter than its peers.

    One cause, one finding: the margins of a machine's GPUs are one finding (the chassis' airflow), filed
    under the worst GPU and listing the others with their margins."""
    lim = ctx.limits
    peaks = {}
    short: list[dict] = []
    for gpu in ctx.gpus:
        margin, peak, source = _margin(gpu)
        peaks[gpu.index] = peak
        thermal_event = bool(_bad_reasons(gpu)[0] & THERMAL_BITS)
        if margin is not None and margin <= lim.thermal_margin_fail_c:
            variant, severity = "none", "fail"
        elif thermal_event:
            variant, severity = "slowdown", "fail"
        elif margin is not None and margin < lim.thermal_margin_warn_c:
            variant, severity = "low", "warn"
        else:
            continue
        short.append(
            {
                "gpu": gpu.index,
                "variant": variant,
                "severity": severity,
                "margin_c": rounded(margin, 1),
                "peak_c": rounded(peak, 1),
                "evidence": {
                    "margin_c": margin,
                    "peak_c": peak,
                    "margin_from": source,
                    "thermal_clock_event": thermal_event,
                },
            }
        )
    if short:
        short.sort(
            key=lambda s: (
                _THERMAL_VARIANTS.index(s["variant"]),
                s["margin_c"] if s["margin_c"] is not None else float("inf"),
                s["gpu"],
            )
        )
        worst, others = short[0], sorted(short[1:], key=lambda s: s["gpu"])
        params = {
            "variant": worst["variant"],
            "gpu": worst["gpu"],
            "margin_c": worst["margin_c"],
            "peak_c": worst["peak_c"],
        }
        text = _thermal_words(worst["variant"], worst["margin_c"], worst["peak_c"])
        evidence = dict(worst["evidence"])
        if others:
            params["others"] = [
                {"gpu": o["gpu"], "variant": o["variant"], "margin_c": o["margin_c"]} for o in others
            ]
            listed = ", ".join(
                f"GPU {o['gpu']} (thermal slowdown)"
                if o["variant"] == "slowdown"
                else f"GPU {o['gpu']} ({deg(o['margin_c'])})"
                for o in others
            )
            text = f"{text} on GPU {worst['gpu']}, the worst; also on {listed}"
            evidence["gpus"] = {str(s["gpu"]): dict(s["evidence"], severity=s["severity"]) for s in short}
        yield Finding(
            "thermal_margin_low",
            worst["severity"],
            gpus_label([s["gpu"] for s in short]) if others else worst["gpu"],
            text,
            evidence,
            params,
            gpu_index=worst["gpu"],
        )
    for gpu in ctx.gpus:
        peak = peaks[gpu.index]
        others_peaks = [p for i, p in peaks.items() if i != gpu.index and p is not None]
        if peak is None or len(others_peaks) + 1 < lim.min_peers:
            continue
        median = statistics.median(others_peaks)
        if peak > median + lim.thermal_peer_delta_c:
            params = {
                "peak_c": rounded(peak, 1),
                "delta_c": rounded(peak - median, 1),
                "median_c": rounded(median, 1),
            }
            yield Finding(
                "thermal_outlier",
                "warn",
                gpu.index,
                f"peaks at {deg(params['peak_c'])}, {deg(params['delta_c'])} above the other cards' median "
                f"({deg(params['median_c'])}): check airflow and slot position",
                {"peak_c": peak, "others_median_c": median, "limit_c": lim.thermal_peer_delta_c},
                params,
            )


def _bad_reasons(gpu: Gpu) -> tuple[int, float | None]:
    """(mask of HW slowdown / thermal / power-brake reasons seen, seconds from the counters)."""
    events = gpu.get("clocks_events") or {}
    mask = gpu.series.mask_seen & BAD_BITS if gpu.series else 0
    for name in events.get("seen_active") or []:
        mask |= BAD_REASON_NAMES.get(name, 0)
    seconds = None
    for name, bit in BAD_COUNTER_NAMES.items():
        delta = (events.get("counters_delta_us") or {}).get(name)
        if delta:
            mask |= bit
            seconds = (seconds or 0.0) + delta / 1e6
    return mask, seconds


def throttling(ctx: Context) -> Iterable[Finding]:
    """Rule 10: HW slowdown, SW/HW thermal or HW power brake is a failure; the SW power cap is a note."""
    lim = ctx.limits
    for gpu in ctx.gpus:
        mask, seconds = _bad_reasons(gpu)
        series = gpu.series
        if mask:
            words = [w for bit, w in REASON_WORDS.items() if mask & bit]
            first = ctx.at(series.first_bad_t) if series else None
            if seconds is None and series and ctx.interval_s:
                seconds = series.bad_samples * ctx.interval_s
            params = {
                "reasons": [REASON_NAMES[bit] for bit in REASON_WORDS if mask & bit],
                "first_at": first,
                "seconds": round(seconds) if seconds is not None else None,
            }
            text = f"{', '.join(words)} active"
            details = [
                f"first at {first}" if first else "",
                f"{params['seconds']:,} s in total" if seconds is not None else "",
            ]
            if any(details):
                text += f" ({'; '.join(d for d in details if d)})"
            margin, peak, _ = _margin(gpu)
            if not mask & THERMAL_BITS and (margin is None or margin >= lim.thermal_margin_warn_c):
                params.update(variant="cool", peak_c=rounded(peak, 1))
                cool = f" (peak {deg(params['peak_c'])})" if peak is not None else ""
                text += f" with the GPU cool{cool}: points at the PSU or power cabling"
            yield Finding(
                "throttling_active",
                "fail",
                gpu.index,
                text,
                {"reasons": words, "mask": mask, "first_at": first, "seconds": rounded(seconds, 1)},
                params,
            )
        events = gpu.get("clocks_events") or {}
        fraction = series.capped_samples / series.mask_samples if series and series.mask_samples else None
        fraction = first_of(fraction, num(events.get("sw_power_cap_fraction")))
        counter = (events.get("counters_delta_us") or {}).get("sw_power_cap")
        if (fraction or 0) > 0 or counter or "sw_power_cap" in (events.get("seen_active") or []):
            params = {"share_pct": round(fraction * 100) if fraction else None}
            share = f" in {params['share_pct']}% of samples" if fraction else ""
            yield Finding(
                "power_capped",
                "info",
                gpu.index,
                f"software power cap active{share} (normal at full load)",
                {
                    "power_capped_fraction": rounded(fraction, 4),
                    "counter_s": rounded(counter / 1e6, 1) if counter else None,
                    "limit_w": gpu.get("power", "limit_w"),
                },
                params,
            )


def _loaded_power(gpu: Gpu) -> float | None:
    return gpu.series.loaded_power_mean if gpu.series else None


def power_delivery(ctx: Context) -> Iterable[Finding]:
    """Rule 11: mean power under load below 0.75 × the enforced limit or 0.95 × the peers' median."""
    lim = ctx.limits
    for gpu in ctx.gpus:
        mean = _loaded_power(gpu)
        if mean is None:
            continue
        limit = num(gpu.get("power", "limit_w"))
        median, peers = peer_median(ctx, gpu, _loaded_power)
        parts = []
        params: dict = {"mean_w": round(mean)}
        if limit and mean < lim.power_limit_ratio * limit:
            params.update(limit_ratio=round(mean / limit, 2), limit_w=round(limit))
            parts.append(f"{params['limit_ratio']:.2f} × its {params['limit_w']} W limit")
        if median and mean < lim.power_peer_ratio * median:
            params.update(median_ratio=round(mean / median, 2), peers=peers, median_w=round(median))
            parts.append(
                f"{params['median_ratio']:.2f} × the median of {peers} cards ({params['median_w']} W)"
            )
        if parts:
            yield Finding(
                "power_delivery_low",
                "warn",
                gpu.index,
                f"{params['mean_w']} W mean under load, {' and '.join(parts)}",
                {
                    "mean_w": rounded(mean, 1),
                    "limit_w": limit,
                    "peer_median_w": rounded(median, 1),
                    "peers": peers,
                },
                params,
            )
