"""The GPU rules (docs/reference/burnin.md §4, rules 1–13): link, bandwidth, compute, thermals, power, ECC."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable

from burnin.analysis.common import (
    change,
    deg,
    first_of,
    highest,
    link_text,
    lowest,
    num,
    parse_time,
    rounded,
    sysfs_bdf,
)
from burnin.analysis.context import BAD_BITS, Context, Finding, Gpu, peer_median
from burnin.rules import BAD_COUNTER_NAMES, BAD_REASON_NAMES, REASON_WORDS, THERMAL_BITS


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
            why = ""
            if width_downtrained and link.driver_max_width == link.loaded_width:
                why = f": the driver's maximum is x{link.driver_max_width} too (slot, riser or bifurcation)"
            yield Finding(
                "pcie_link_downtrained",
                "fail",
                gpu.index,
                f"GPU {gpu.index}: PCIe link at {link_text(link.loaded_gen, link.loaded_width)} under load "
                f"(expected {link_text(link.expected_gen, link.expected_width)}){why}",
                evidence,
            )
        platform_gen = lowest(link.host_gen, link.driver_max_gen)
        if link.card_gen is not None and platform_gen is not None:
            promised = lowest(link.card_gen, link.promised_gen)
            if link.promised_gen is not None and platform_gen < promised:
                yield Finding(
                    "pcie_link_cap_limited",
                    "fail",
                    gpu.index,
                    f"GPU {gpu.index}: link capped at Gen{platform_gen} by the host, but the configuration "
                    f"promises Gen{promised}",
                    evidence,
                )
            elif platform_gen < link.card_gen:
                stated = link.promised_gen is not None and link.promised_gen <= platform_gen
                yield Finding(
                    "pcie_link_cap_limited",
                    "info" if stated else "warn",
                    gpu.index,
                    f"GPU {gpu.index}: Gen{link.card_gen} card runs at the platform's Gen{platform_gen}"
                    + (", as the configuration states" if stated else " (host root port maximum)"),
                    evidence,
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
                f"GPU {gpu.index}: the driver reports a maximum link width of x{link.driver_max_width} "
                f"(expected x{link.expected_width}): slot, riser or bifurcation",
                evidence,
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
            if low_peer:
                text = f"GPU {gpu.index}: H2D {value:.1f} GB/s, {value / median:.2f} × the median"
            else:
                text = (
                    f"GPU {gpu.index}: H2D {value:.1f} GB/s, {value / expected:.2f} × the {expected:g} GB/s "
                    f"expected of a {link_text(link.expected_gen, link.expected_width)} link"
                )
            if link.downtrained:
                now, want = link.describe()
                text += f": link at {now} (expected {want})"
            elif low_peer:
                text += f" of {peers} cards ({median:.1f} GB/s)"
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
            )
        h2d = gpu.get("bench", "h2d_gbps") or {}
        idle, loaded = num(first_of(h2d.get("default"), h2d.get("local"))), num(h2d.get("under_load"))
        if idle and loaded is not None and loaded < lim.h2d_under_load_ratio * idle:
            yield Finding(
                "h2d_under_load_drop",
                "warn",
                gpu.index,
                f"GPU {gpu.index}: H2D drops to {loaded:.1f} GB/s under load, {loaded / idle:.2f} × idle "
                f"({idle:.1f} GB/s): a shared switch or root port",
                {
                    "idle_gbps": idle,
                    "under_load_gbps": loaded,
                    "method": gpu.get("bench", "under_load_method"),
                },
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
            yield Finding(
                "h2d_under_load_drop",
                "warn",
                "host",
                f"host: H2D to all {len(pairs)} GPUs at once totals {concurrent:.1f} GB/s, "
                f"{concurrent / alone:.2f} × the {alone:.1f} GB/s they reach one at a time",
                {"concurrent_sum_gbps": rounded(concurrent, 2), "individual_sum_gbps": rounded(alone, 2)},
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
            yield Finding(
                "numa_misaffinity",
                "warn",
                gpu.index,
                f"GPU {gpu.index}: H2D at default placement {default:.1f} GB/s matches the remote NUMA "
                f"node ({remote:.1f} GB/s, local {local:.1f} GB/s): pin host buffers with numactl",
                {
                    "default_gbps": default,
                    "local_gbps": local,
                    "remote_gbps": remote,
                    "numa_node": gpu.get("numa_node"),
                },
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
        yield Finding(
            "tflops_outlier",
            "fail" if value < lim.tflops_fail_ratio * median else "warn",
            gpu.index,
            f"GPU {gpu.index}: FP16 {value:.1f} TFLOPS, {value / median:.2f} × the median of {peers} cards "
            f"({median:.1f} TFLOPS)",
            {"tflops": value, "peer_median": median, "peers": peers, "ratio": rounded(value / median, 3)},
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
            yield Finding(
                "vram_bandwidth_low",
                "fail",
                gpu.index,
                f"GPU {gpu.index}: VRAM {value:,.0f} GB/s, {value / reference:.2f} × the "
                f"{reference:,.0f} GB/s reference of this SKU",
                evidence,
            )
        elif median is not None and value < lim.vram_warn_ratio * median:
            yield Finding(
                "vram_bandwidth_low",
                "warn",
                gpu.index,
                f"GPU {gpu.index}: VRAM {value:,.0f} GB/s, {value / median:.2f} × the median of "
                f"{peers} cards ({median:,.0f} GB/s)",
                evidence,
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
        parts = [
            f"{counts[k]} {words}"
            for k, words in (
                ("mismatches", "mismatching elements"),
                ("nans", "NaNs"),
                ("reference_nans", "NaNs in the reference product"),
                ("cuda_errors", "CUDA errors"),
            )
            if counts[k]
        ]
        if xids:
            parts.append(f"Xid {', '.join(map(str, xids))} during the run")
        checked = burn.get("matmuls_checked")
        yield Finding(
            "compute_errors",
            "fail",
            gpu.index,
            f"GPU {gpu.index}: {', '.join(parts)}"
            + (f" ({int(checked):,} matmuls checked)" if checked is not None else ""),
            dict(counts, xids=xids, matmuls_checked=checked, errors=list(burn.get("errors") or [])[:5]),
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


def thermal(ctx: Context) -> Iterable[Finding]:
    """Rule 9: thermal margin at peak, thermal clock events, and a GPU much hotter than its peers."""
    lim = ctx.limits
    peaks = {}
    for gpu in ctx.gpus:
        margin, peak, source = _margin(gpu)
        peaks[gpu.index] = peak
        thermal_event = bool(_bad_reasons(gpu)[0] & THERMAL_BITS)
        evidence = {
            "margin_c": margin,
            "peak_c": peak,
            "margin_from": source,
            "thermal_clock_event": thermal_event,
        }
        if margin is not None and margin <= lim.thermal_margin_fail_c:
            yield Finding(
                "thermal_margin_low",
                "fail",
                gpu.index,
                f"GPU {gpu.index}: no thermal margin at peak ({deg(margin)} at {deg(peak)})",
                evidence,
            )
        elif thermal_event:
            yield Finding(
                "thermal_margin_low",
                "fail",
                gpu.index,
                f"GPU {gpu.index}: thermal slowdown during the run (peak {deg(peak)})",
                evidence,
            )
        elif margin is not None and margin < lim.thermal_margin_warn_c:
            yield Finding(
                "thermal_margin_low",
                "warn",
                gpu.index,
                f"GPU {gpu.index}: thermal margin {deg(margin)} at peak ({deg(peak)})",
                evidence,
            )
    for gpu in ctx.gpus:
        peak = peaks[gpu.index]
        others = [p for i, p in peaks.items() if i != gpu.index and p is not None]
        if peak is None or len(others) + 1 < lim.min_peers:
            continue
        median = statistics.median(others)
        if peak > median + lim.thermal_peer_delta_c:
            yield Finding(
                "thermal_outlier",
                "warn",
                gpu.index,
                f"GPU {gpu.index}: peaks at {deg(peak)}, {deg(peak - median)} above the other cards' median "
                f"({deg(median)}): check airflow and slot position",
                {"peak_c": peak, "others_median_c": median, "limit_c": lim.thermal_peer_delta_c},
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
            text = f"GPU {gpu.index}: {', '.join(words)} active"
            details = [
                f"first at {first}" if first else "",
                f"{seconds:,.0f} s in total" if seconds is not None else "",
            ]
            if any(details):
                text += f" ({'; '.join(d for d in details if d)})"
            margin, peak, _ = _margin(gpu)
            if not mask & THERMAL_BITS and (margin is None or margin >= lim.thermal_margin_warn_c):
                text += f" with the GPU cool{f' (peak {deg(peak)})' if peak is not None else ''}: " + (
                    "points at the PSU or power cabling"
                )
            yield Finding(
                "throttling_active",
                "fail",
                gpu.index,
                text,
                {"reasons": words, "mask": mask, "first_at": first, "seconds": rounded(seconds, 1)},
            )
        events = gpu.get("clocks_events") or {}
        fraction = series.capped_samples / series.mask_samples if series and series.mask_samples else None
        fraction = first_of(fraction, num(events.get("sw_power_cap_fraction")))
        counter = (events.get("counters_delta_us") or {}).get("sw_power_cap")
        if (fraction or 0) > 0 or counter or "sw_power_cap" in (events.get("seen_active") or []):
            share = f" in {fraction:.0%} of samples" if fraction else ""
            yield Finding(
                "power_capped",
                "info",
                gpu.index,
                f"GPU {gpu.index}: software power cap active{share} (normal at full load)",
                {
                    "power_capped_fraction": rounded(fraction, 4),
                    "counter_s": rounded(counter / 1e6, 1) if counter else None,
                    "limit_w": gpu.get("power", "limit_w"),
                },
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
        if limit and mean < lim.power_limit_ratio * limit:
            parts.append(f"{mean / limit:.2f} × its {limit:.0f} W limit")
        if median and mean < lim.power_peer_ratio * median:
            parts.append(f"{mean / median:.2f} × the median of {peers} cards ({median:.0f} W)")
        if parts:
            yield Finding(
                "power_delivery_low",
                "warn",
                gpu.index,
                f"GPU {gpu.index}: {mean:.0f} W mean under load, {' and '.join(parts)}",
                {
                    "mean_w": rounded(mean, 1),
                    "limit_w": limit,
                    "peer_median_w": rounded(median, 1),
                    "peers": peers,
                },
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
            yield Finding(
                "gpu_ecc_uncorrectable",
                "fail",
                gpu.index,
                f"GPU {gpu.index}: {unc:.0f} uncorrectable ECC errors in GPU memory",
                evidence,
            )
        if remap.get("failure"):
            yield Finding(
                "gpu_row_remap_failure",
                "fail",
                gpu.index,
                f"GPU {gpu.index}: row remapping failed (no spare rows left)",
                evidence,
            )
        if remap.get("pending"):
            yield Finding(
                "gpu_row_remap_pending",
                "warn",
                gpu.index,
                f"GPU {gpu.index}: a row remap is pending: reset the GPU before it ships",
                evidence,
            )
        if corr_growth and corr_growth > 0:
            yield Finding(
                "gpu_ecc_correctable_growth",
                "warn",
                gpu.index,
                f"GPU {gpu.index}: {corr_growth:.0f} new correctable ECC errors in GPU memory during the run",
                dict(evidence, growth=corr_growth),
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
        parts = [
            f"{replayed} PCIe replays" if replayed else "",
            f"{aer} AER correctable errors" if aer else "",
        ]
        yield Finding(
            "pcie_replay_growth",
            "fail" if severe else "warn",
            gpu.index,
            f"GPU {gpu.index}: {' and '.join(p for p in parts if p)} during the run"
            + (f" ({per_min:.1f} AER/min)" if per_min is not None else ""),
            {
                "replays": replayed,
                "aer": aer,
                "aer_per_min": rounded(per_min, 2),
                "aer_limit_per_min": aer_limit,
            },
        )
