"""The GPU rules (docs/reference/burnin.md §4, rules 1–13): link, bandwidth, compute, thermals, power, ECC."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable

from burnin.analysis.common import (
    change,
    deg,
    first_of,
    gpus_label,
    highest,
    link_text,
    lowest,
    num,
    parse_time,
    plain,
    plural,
    rounded,
    sysfs_bdf,
)
from burnin.analysis.context import BAD_BITS, Context, Finding, Gpu, peer_median
from burnin.rules import BAD_COUNTER_NAMES, BAD_REASON_NAMES, REASON_WORDS, THERMAL_BITS

#: The probe's name of each bad clock-event reason, as a finding's params carry it (``REASON_WORDS`` order).
REASON_NAMES = {bit: name for name, bit in BAD_REASON_NAMES.items()}


def pcie_link(ctx: Context) -> Iterable[Finding]:
    """Rules 1 and 2: the link under load against the expected link; a platform cap below the card."""
    limited = {}
    for item in (ctx.report.get("dmesg") or {}).get("link_limited") or []:
        limited[str(item.get("bdf", "")).lower()] = item.get("line")
    for gpu in ctx.gpus:
        link = gpu.link
        evidence = {
            "expected": {
                "gen": link.expected_gen,
                "width": link.expected_width,
                "width_from": link.width_source,
            },
            "under_load": {
                "gen": link.loaded_gen,
                "width": link.loaded_width,
                "samples": link.loaded_samples,
                "samples_below_expected": link.loaded_below,
                "from": link.loaded_source,
            },
            "card_max_gen": link.card_gen,
            "host_max_gen": link.host_gen,
            "driver_max": {"gen": link.driver_max_gen, "width": link.driver_max_width},
            "configuration_gen": link.promised_gen,
            "idle": gpu.get("pcie", "idle"),
            "sysfs_upstream": gpu.get("pcie", "sysfs", "upstream"),
            "kernel_limited_by": limited.get(sysfs_bdf(gpu.get("pci_bus_id"))),
        }
        width_downtrained = False
        if link.downtrained:
            width_downtrained = link.loaded_width is not None and link.loaded_width < link.expected_width
            params = {
                "link": link_text(link.loaded_gen, link.loaded_width),
                "expected": link_text(link.expected_gen, link.expected_width),
            }
            text = f"PCIe link at {params['link']} under load (expected {params['expected']})"
            if width_downtrained and link.driver_max_width == link.loaded_width:
                params.update(variant="driver_width", driver_max_width=link.driver_max_width)
                text += f": the driver's maximum is x{link.driver_max_width} too (slot, riser or bifurcation)"
            yield Finding("pcie_link_downtrained", "fail", gpu.index, text, evidence, params)
        platform_gen = lowest(link.host_gen, link.driver_max_gen)
        if link.card_gen is not None and platform_gen is not None:
            promised = lowest(link.card_gen, link.promised_gen)
            if link.promised_gen is not None and platform_gen < promised:
                yield Finding(
                    "pcie_link_cap_limited",
                    "fail",
                    gpu.index,
                    f"link capped at Gen{platform_gen} by the host, "
                    f"but the configuration promises Gen{promised}",
                    evidence,
                    {"variant": "promised", "gen": platform_gen, "promised": promised},
                )
            elif platform_gen < link.card_gen:
                stated = link.promised_gen is not None and link.promised_gen <= platform_gen
                yield Finding(
                    "pcie_link_cap_limited",
                    "info" if stated else "warn",
                    gpu.index,
                    f"Gen{link.card_gen} card runs at the platform's Gen{platform_gen}"
                    + (", as the configuration states" if stated else " (host root port maximum)"),
                    evidence,
                    {
                        "variant": "stated" if stated else "host",
                        "card_gen": link.card_gen,
                        "gen": platform_gen,
                    },
                )
        if (
            not width_downtrained
            and link.driver_max_width is not None
            and link.driver_max_width < link.expected_width
        ):
            yield Finding(
                "pcie_link_cap_limited",
                "fail",
                gpu.index,
                f"the driver reports a maximum link width of x{link.driver_max_width} "
                f"(expected x{link.expected_width}): slot, riser or bifurcation",
                evidence,
                {
                    "variant": "driver_width",
                    "width": link.driver_max_width,
                    "expected_width": link.expected_width,
                },
            )


def _h2d_value(gpu: Gpu) -> float | None:
    h2d = gpu.get("bench", "h2d_gbps") or {}
    return num(first_of(h2d.get("local"), h2d.get("default")))


def h2d(ctx: Context) -> Iterable[Finding]:
    """Rule 3 (outlier against peers and against the generation's expectation) and rule 4 (under load)."""
    lim = ctx.limits
    for gpu in ctx.gpus:
        value = _h2d_value(gpu)
        if value is None:
            continue
        median, peers = peer_median(ctx, gpu, _h2d_value)
        link = gpu.link
        per_gen = lim.h2d_expected_x16_gbps.get(link.expected_gen or 0)
        expected = per_gen * link.expected_width / 16 if per_gen else None
        low_peer = median is not None and value < lim.h2d_ratio_fail * median
        low_abs = expected is not None and value < lim.h2d_ratio_fail * expected
        if low_peer or low_abs:
            params: dict = {"h2d_gbps": round(value, 1)}
            if low_peer:
                params.update(variant="peers", ratio=round(value / median, 2))
                text = f"H2D {params['h2d_gbps']:.1f} GB/s, {params['ratio']:.2f} × the median"
            else:
                params.update(
                    variant="expected",
                    ratio=round(value / expected, 2),
                    expected_gbps=round(expected, 2),
                    expected_link=link_text(link.expected_gen, link.expected_width),
                )
                text = (
                    f"H2D {params['h2d_gbps']:.1f} GB/s, {params['ratio']:.2f} × the "
                    f"{plain(params['expected_gbps'])} GB/s expected of a {params['expected_link']} link"
                )
            if link.downtrained:
                now, want = link.describe()
                params.update(variant=params["variant"] + "_link", link=now, link_expected=want)
                text += f": link at {now} (expected {want})"
            elif low_peer:
                params.update(peers=peers, median_gbps=round(median, 1))
                text += f" of {peers} cards ({params['median_gbps']:.1f} GB/s)"
            yield Finding(
                "h2d_bandwidth_outlier",
                "fail",
                gpu.index,
                text,
                {
                    "h2d_gbps": value,
                    "peer_median_gbps": median,
                    "peers": peers,
                    "ratio_to_median": rounded(value / median, 3) if median else None,
                    "expected_gbps": expected,
                    "threshold_ratio": lim.h2d_ratio_fail,
                    "link_under_load": link_text(link.loaded_gen, link.loaded_width)
                    if link.loaded_samples
                    else None,
                    "expected_link": link_text(link.expected_gen, link.expected_width),
                },
                params,
            )
        h2d = gpu.get("bench", "h2d_gbps") or {}
        idle, loaded = num(first_of(h2d.get("default"), h2d.get("local"))), num(h2d.get("under_load"))
        if idle and loaded is not None and loaded < lim.h2d_under_load_ratio * idle:
            params = {
                "variant": "gpu",
                "under_load_gbps": round(loaded, 1),
                "ratio": round(loaded / idle, 2),
                "idle_gbps": round(idle, 1),
            }
            yield Finding(
                "h2d_under_load_drop",
                "warn",
                gpu.index,
                f"H2D drops to {params['under_load_gbps']:.1f} GB/s under load, {params['ratio']:.2f} × idle "
                f"({params['idle_gbps']:.1f} GB/s): a shared switch or root port",
                {
                    "idle_gbps": idle,
                    "under_load_gbps": loaded,
                    "method": gpu.get("bench", "under_load_method"),
                },
                params,
            )
    pairs = [
        (
            num((g.get("bench", "h2d_gbps") or {}).get("concurrent")),
            num((g.get("bench", "h2d_gbps") or {}).get("default")),
        )
        for g in ctx.gpus
    ]
    pairs = [(c, d) for c, d in pairs if c is not None and d]
    if len(pairs) > 1:
        concurrent, alone = sum(c for c, _ in pairs), sum(d for _, d in pairs)
        if concurrent < lim.h2d_concurrent_ratio * alone:
            params = {
                "variant": "concurrent",
                "gpus": len(pairs),
                "concurrent_gbps": round(concurrent, 1),
                "ratio": round(concurrent / alone, 2),
                "individual_gbps": round(alone, 1),
            }
            yield Finding(
                "h2d_under_load_drop",
                "warn",
                "host",
                f"H2D to all {len(pairs)} GPUs at once totals {params['concurrent_gbps']:.1f} GB/s, "
                f"{params['ratio']:.2f} × the {params['individual_gbps']:.1f} GB/s they reach one at a time",
                {"concurrent_sum_gbps": rounded(concurrent, 2), "individual_sum_gbps": rounded(alone, 2)},
                params,
            )


def numa(ctx: Context) -> Iterable[Finding]:
    """Rule 5: the default placement performs like the remote NUMA node (the workload runs off-node)."""
    lim = ctx.limits
    for gpu in ctx.gpus:
        h2d = gpu.get("bench", "h2d_gbps") or {}
        default, local, remote = (num(h2d.get(k)) for k in ("default", "local", "remote"))
        if not (default and local and remote) or remote >= (1 - lim.numa_penalty_min) * local:
            continue
        if default <= (1 + lim.numa_remote_within) * remote:
            params = {
                "default_gbps": round(default, 1),
                "remote_gbps": round(remote, 1),
                "local_gbps": round(local, 1),
            }
            yield Finding(
                "numa_misaffinity",
                "warn",
                gpu.index,
                f"H2D at default placement {params['default_gbps']:.1f} GB/s matches the remote NUMA node "
                f"({params['remote_gbps']:.1f} GB/s, local {params['local_gbps']:.1f} GB/s): "
                "pin host buffers with numactl",
                {
                    "default_gbps": default,
                    "local_gbps": local,
                    "remote_gbps": remote,
                    "numa_node": gpu.get("numa_node"),
                },
                params,
            )


def _bench_value(key: str) -> Callable[[Gpu], float | None]:
    return lambda gpu: num(gpu.get("bench", key))


def tflops(ctx: Context) -> Iterable[Finding]:
    """Rule 7: FP16 TFLOPS against the same-SKU median."""
    lim, value_of = ctx.limits, _bench_value("fp16_tflops")
    for gpu in ctx.gpus:
        value = value_of(gpu)
        median, peers = peer_median(ctx, gpu, value_of)
        if value is None or median is None or value >= lim.tflops_warn_ratio * median:
            continue
        params = {
            "tflops": round(value, 1),
            "ratio": round(value / median, 2),
            "peers": peers,
            "median_tflops": round(median, 1),
        }
        yield Finding(
            "tflops_outlier",
            "fail" if value < lim.tflops_fail_ratio * median else "warn",
            gpu.index,
            f"FP16 {params['tflops']:.1f} TFLOPS, {params['ratio']:.2f} × the median of {peers} cards "
            f"({params['median_tflops']:.1f} TFLOPS)",
            {"tflops": value, "peer_median": median, "peers": peers, "ratio": rounded(value / median, 3)},
            params,
        )


def vram(ctx: Context) -> Iterable[Finding]:
    """Rule 8: VRAM bandwidth against the SKU reference (fail) and the same-SKU median (warn)."""
    lim, value_of = ctx.limits, _bench_value("vram_gbps")
    for gpu in ctx.gpus:
        value = value_of(gpu)
        if value is None:
            continue
        reference = lim.vram_reference_gbps.get(gpu.sku)
        median, peers = peer_median(ctx, gpu, value_of)
        evidence = {
            "vram_gbps": value,
            "sku_reference_gbps": reference,
            "peer_median_gbps": median,
            "peers": peers,
        }
        if reference and value < lim.vram_sku_fail_ratio * reference:
            params = {
                "variant": "reference",
                "vram_gbps": round(value),
                "ratio": round(value / reference, 2),
                "reference_gbps": round(reference),
            }
            yield Finding(
                "vram_bandwidth_low",
                "fail",
                gpu.index,
                f"VRAM {params['vram_gbps']:,} GB/s, {params['ratio']:.2f} × the "
                f"{params['reference_gbps']:,} GB/s reference of this SKU",
                evidence,
                params,
            )
        elif median is not None and value < lim.vram_warn_ratio * median:
            params = {
                "variant": "peers",
                "vram_gbps": round(value),
                "ratio": round(value / median, 2),
                "peers": peers,
                "median_gbps": round(median),
            }
            yield Finding(
                "vram_bandwidth_low",
                "warn",
                gpu.index,
                f"VRAM {params['vram_gbps']:,} GB/s, {params['ratio']:.2f} × the median of "
                f"{peers} cards ({params['median_gbps']:,} GB/s)",
                evidence,
                params,
            )


#: What ``compute_errors`` counts, in its sentence's order: (key, one, many).
COMPUTE_ERROR_WORDS = (
    ("mismatches", "mismatching element", "mismatching elements"),
    ("nans", "NaN", "NaNs"),
    ("reference_nans", "NaN in the reference product", "NaNs in the reference product"),
    ("cuda_errors", "CUDA error", "CUDA errors"),
)


def compute_errors(ctx: Context) -> Iterable[Finding]:
    """Rule 6: any mismatch, NaN, CUDA error or Xid during the burn."""
    for gpu in ctx.gpus:
        burn = gpu.get("burn") or {}
        xids = sorted(
            {int(x) for x in burn.get("xids") or []}
            | {int(x["xid"]) for x in gpu.get("xids") or [] if x.get("during_run") and "xid" in x}
        )
        counts = {k: int(burn.get(k) or 0) for k in ("mismatches", "nans", "reference_nans", "cuda_errors")}
        if not xids and not any(counts.values()):
            continue
        parts = [plural(counts[k], one, many) for k, one, many in COMPUTE_ERROR_WORDS if counts[k]]
        if xids:
            parts.append(f"Xid {', '.join(map(str, xids))} during the run")
        checked = burn.get("matmuls_checked")
        checked = int(checked) if checked is not None else None
        yield Finding(
            "compute_errors",
            "fail",
            gpu.index,
            ", ".join(parts) + (f" ({checked:,} matmuls checked)" if checked is not None else ""),
            dict(counts, xids=xids, matmuls_checked=checked, errors=list(burn.get("errors") or [])[:5]),
            dict(counts, xids=xids, matmuls_checked=checked),
        )


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


def gpu_ecc(ctx: Context) -> Iterable[Finding]:
    """Rule 12: GPU memory ECC and row remapping."""
    for gpu in ctx.gpus:
        ecc = gpu.get("ecc") or {}
        start, end, remap = ecc.get("start") or {}, ecc.get("end") or {}, ecc.get("remap") or {}
        unc = highest(
            num(end.get("unc_total")),
            num(end.get("dram_unc")),
            gpu.series.ecc_unc_max if gpu.series else None,
        )
        corr_growth = highest(
            change(start.get("corr_total"), end.get("corr_total")),
            change(start.get("dram_corr"), end.get("dram_corr")),
            gpu.series.ecc_corr_growth if gpu.series else None,
        )
        evidence = {"mode": ecc.get("mode"), "start": start, "end": end, "remap": remap}
        if unc:
            count = round(unc)
            yield Finding(
                "gpu_ecc_uncorrectable",
                "fail",
                gpu.index,
                plural(count, "uncorrectable ECC error", "uncorrectable ECC errors") + " in GPU memory",
                evidence,
                {"count": count},
            )
        if remap.get("failure"):
            yield Finding(
                "gpu_row_remap_failure",
                "fail",
                gpu.index,
                "row remapping failed (no spare rows left)",
                evidence,
            )
        if remap.get("pending"):
            yield Finding(
                "gpu_row_remap_pending",
                "warn",
                gpu.index,
                "a row remap is pending: reset the GPU before it ships",
                evidence,
            )
        if corr_growth and corr_growth > 0:
            count = round(corr_growth)
            yield Finding(
                "gpu_ecc_correctable_growth",
                "warn",
                gpu.index,
                plural(count, "new correctable ECC error", "new correctable ECC errors")
                + " in GPU memory during the run",
                dict(evidence, growth=corr_growth),
                {"count": count},
            )


def _run_minutes(ctx: Context) -> float | None:
    probe = ctx.report.get("probe") or {}
    start, end = parse_time(probe.get("started_at")), parse_time(probe.get("ended_at"))
    if start and end and end > start:
        return (end - start).total_seconds() / 60
    spans = [g.series.t_last - g.series.t_first for g in ctx.gpus if g.series]
    return max(spans) / 60 if spans and max(spans) > 0 else None


def replays(ctx: Context) -> Iterable[Finding]:
    """Rule 13: PCIe replay counter and AER correctable growth."""
    lim, minutes = ctx.limits, _run_minutes(ctx)
    for gpu in ctx.gpus:
        pcie = gpu.get("pcie") or {}
        replayed = change(
            (pcie.get("replay_counter") or {}).get("start"), (pcie.get("replay_counter") or {}).get("end")
        )
        aer = change(
            (pcie.get("aer_correctable") or {}).get("start"), (pcie.get("aer_correctable") or {}).get("end")
        )
        replayed, aer = max(replayed or 0, 0), max(aer or 0, 0)  # a counter reset is not growth
        if not replayed and not aer:
            continue
        per_min = aer / minutes if aer and minutes else None
        gen = gpu.link.expected_gen
        aer_limit = lim.aer_per_min_fail.get(5 if gen and gen >= 5 and gpu.link.expected_width >= 16 else 4)
        severe = replayed > lim.replay_fail or (per_min is not None and per_min > aer_limit)
        params = {"replays": replayed, "aer": aer, "aer_per_min": rounded(per_min, 1)}
        parts = [
            plural(replayed, "PCIe replay", "PCIe replays") if replayed else "",
            plural(aer, "AER correctable error", "AER correctable errors") if aer else "",
        ]
        yield Finding(
            "pcie_replay_growth",
            "fail" if severe else "warn",
            gpu.index,
            f"{' and '.join(p for p in parts if p)} during the run"
            + (f" ({params['aer_per_min']:.1f} AER/min)" if per_min is not None else ""),
            {
                "replays": replayed,
                "aer": aer,
                "aer_per_min": rounded(per_min, 2),
                "aer_limit_per_min": aer_limit,
            },
            params,
        )
