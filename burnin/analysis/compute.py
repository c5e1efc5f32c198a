"""The compute rules (docs/reference/burnin.md §4, rules 6–8 and 12): compute errors during the burn, FP16
TFLOPS, VRAM bandwidth, and GPU memory ECC."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from burnin.analysis.common import change, highest, num, plural, rounded
from burnin.analysis.context import Context, Finding, Gpu, peer_median


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
