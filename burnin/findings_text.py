"""A burn-in finding's sentence in the reader's language, from its code and params.

The analysis (`burnin.analysis`, pure Python) words each finding once in English (`Finding.message`, for the
CLI and for rows stored before findings carried params) and hands over the figures the sentence is made of
(`Finding.params`). Here the same sentence is worded through gettext, one template per code and
`params["variant"]`, with numbers in the active language's format (decimal comma in German). Rendered in
English, every template gives exactly the analysis' message (`tests/burnin/test_findings_text.py` holds the
two together).

The drift findings' templates (codes `drift_*`) live in `burnin.findings_text_drift` and are looked up
here with the others; the numbers' formats in `burnin.findings_text_format`.

A code or a variant without a template here, or params that lack a figure (a row stored before params
existed has none), give back the stored English sentence: `finding_text` never fails a page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from burnin.analysis.common import about, duration
from burnin.findings_text_drift import DRIFT_RENDERERS
from burnin.findings_text_format import Params, _and, _count, _deg, _fixed, _plain


def finding_text(*, code: str, params: Params | None, fallback: str) -> str:
    """The sentence of a finding with `code` and `params` in the active language; `fallback` (the stored
    English message) where there is no template for them."""
    render = _RENDERERS.get(code)
    if render is None or not isinstance(params, Mapping) or (not params and code not in _WITHOUT_FIGURES):
        return fallback
    try:
        return render(params)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return fallback


# --- one renderer per code ---------------------------------------------------------------------------------
def _pcie_link_downtrained(p: Params) -> str:
    values = {"link": p["link"], "expected": p["expected"]}
    if p.get("variant") == "driver_width":
        return _(
            "PCIe link at %(link)s under load (expected %(expected)s): the driver's maximum is x%(width)s "
            "too (slot, riser or bifurcation)"
        ) % dict(values, width=p["driver_max_width"])
    return _("PCIe link at %(link)s under load (expected %(expected)s)") % values


def _pcie_link_cap_limited(p: Params) -> str:
    variant = p["variant"]
    if variant == "promised":
        return _("link capped at Gen%(gen)s by the host, but the configuration promises Gen%(promised)s") % {
            "gen": p["gen"],
            "promised": p["promised"],
        }
    if variant == "driver_width":
        return _(
            "the driver reports a maximum link width of x%(width)s (expected x%(expected_width)s): slot, "
            "riser or bifurcation"
        ) % {"width": p["width"], "expected_width": p["expected_width"]}
    values = {"card_gen": p["card_gen"], "gen": p["gen"]}
    if variant == "stated":
        return (
            _("Gen%(card_gen)s card runs at the platform's Gen%(gen)s, as the configuration states") % values
        )
    if variant == "host":
        return _("Gen%(card_gen)s card runs at the platform's Gen%(gen)s (host root port maximum)") % values
    raise KeyError(variant)


def _h2d_bandwidth_outlier(p: Params) -> str:
    variant = p["variant"]
    values = {"h2d": _fixed(p["h2d_gbps"], 1), "ratio": _fixed(p["ratio"], 2)}
    if variant == "peers":
        return _("H2D %(h2d)s GB/s, %(ratio)s × the median of %(peers)s cards (%(median)s GB/s)") % dict(
            values, peers=_count(p["peers"]), median=_fixed(p["median_gbps"], 1)
        )
    if variant == "peers_link":
        return _(
            "H2D %(h2d)s GB/s, %(ratio)s × the median: link at %(link)s (expected %(link_expected)s)"
        ) % dict(values, link=p["link"], link_expected=p["link_expected"])
    values.update(expected=_plain(p["expected_gbps"]), expected_link=p["expected_link"])
    if variant == "expected":
        return (
            _("H2D %(h2d)s GB/s, %(ratio)s × the %(expected)s GB/s expected of a %(expected_link)s link")
            % values
        )
    if variant == "expected_link":
        return _(
            "H2D %(h2d)s GB/s, %(ratio)s × the %(expected)s GB/s expected of a %(expected_link)s link: link "
            "at %(link)s (expected %(link_expected)s)"
        ) % dict(values, link=p["link"], link_expected=p["link_expected"])
    raise KeyError(variant)


def _h2d_under_load_drop(p: Params) -> str:
    variant = p["variant"]
    if variant == "gpu":
        return _(
            "H2D drops to %(under_load)s GB/s under load, %(ratio)s × idle (%(idle)s GB/s): a shared switch "
            "or root port"
        ) % {
            "under_load": _fixed(p["under_load_gbps"], 1),
            "ratio": _fixed(p["ratio"], 2),
            "idle": _fixed(p["idle_gbps"], 1),
        }
    if variant == "concurrent":
        return _(
            "H2D to all %(gpus)s GPUs at once totals %(concurrent)s GB/s, %(ratio)s × the %(individual)s "
            "GB/s they reach one at a time"
        ) % {
            "gpus": _count(p["gpus"]),
            "concurrent": _fixed(p["concurrent_gbps"], 1),
            "ratio": _fixed(p["ratio"], 2),
            "individual": _fixed(p["individual_gbps"], 1),
        }
    raise KeyError(variant)


def _numa_misaffinity(p: Params) -> str:
    return _(
        "H2D at default placement %(default)s GB/s matches the remote NUMA node (%(remote)s GB/s, local "
        "%(local)s GB/s): pin host buffers with numactl"
    ) % {
        "default": _fixed(p["default_gbps"], 1),
        "remote": _fixed(p["remote_gbps"], 1),
        "local": _fixed(p["local_gbps"], 1),
    }


def _tflops_outlier(p: Params) -> str:
    return _("FP16 %(tflops)s TFLOPS, %(ratio)s × the median of %(peers)s cards (%(median)s TFLOPS)") % {
        "tflops": _fixed(p["tflops"], 1),
        "ratio": _fixed(p["ratio"], 2),
        "peers": _count(p["peers"]),
        "median": _fixed(p["median_tflops"], 1),
    }


def _vram_bandwidth_low(p: Params) -> str:
    variant = p["variant"]
    values = {"vram": _count(p["vram_gbps"]), "ratio": _fixed(p["ratio"], 2)}
    if variant == "reference":
        return _("VRAM %(vram)s GB/s, %(ratio)s × the %(reference)s GB/s reference of this SKU") % dict(
            values, reference=_count(p["reference_gbps"])
        )
    if variant == "peers":
        return _("VRAM %(vram)s GB/s, %(ratio)s × the median of %(peers)s cards (%(median)s GB/s)") % dict(
            values, peers=_count(p["peers"]), median=_count(p["median_gbps"])
        )
    raise KeyError(variant)


def _compute_errors(p: Params) -> str:
    words: dict[str, Callable[[int], str]] = {
        "mismatches": lambda n: ngettext(
            "%(count)s mismatching element", "%(count)s mismatching elements", n
        ),
        "nans": lambda n: ngettext("%(count)s NaN", "%(count)s NaNs", n),
        "reference_nans": lambda n: ngettext(
            "%(count)s NaN in the reference product", "%(count)s NaNs in the reference product", n
        ),
        "cuda_errors": lambda n: ngettext("%(count)s CUDA error", "%(count)s CUDA errors", n),
    }
    parts = [word(p[key]) % {"count": _count(p[key])} for key, word in words.items() if p[key]]
    if p["xids"]:
        parts.append(_("Xid %(xids)s during the run") % {"xids": ", ".join(str(int(x)) for x in p["xids"])})
    if not parts:
        raise ValueError("no errors")
    text = ", ".join(parts)
    if p["matmuls_checked"] is not None:
        text = _("%(errors)s (%(checked)s matmuls checked)") % {
            "errors": text,
            "checked": _count(p["matmuls_checked"]),
        }
    return text


def _thermal_words(variant: str, margin: Any, peak: Any) -> str:
    if variant == "none":
        return _("no thermal margin at peak (%(margin)s at %(peak)s)") % {
            "margin": _deg(margin),
            "peak": _deg(peak),
        }
    if variant == "slowdown":
        return _("thermal slowdown during the run (peak %(peak)s)") % {"peak": _deg(peak)}
    if variant == "low":
        return _("thermal margin %(margin)s at peak (%(peak)s)") % {
            "margin": _deg(margin),
            "peak": _deg(peak),
        }
    raise KeyError(variant)


def _thermal_margin_low(p: Params) -> str:
    text = _thermal_words(p["variant"], p["margin_c"], p["peak_c"])
    others = p.get("others")
    if not others:
        return text
    listed = ", ".join(
        _("GPU %(gpu)s (thermal slowdown)") % {"gpu": o["gpu"]}
        if o["variant"] == "slowdown"
        else _("GPU %(gpu)s (%(margin)s)") % {"gpu": o["gpu"], "margin": _deg(o["margin_c"])}
        for o in others
    )
    return _("%(worst)s on GPU %(gpu)s, the worst; also on %(others)s") % {
        "worst": text,
        "gpu": p["gpu"],
        "others": listed,
    }


def _thermal_outlier(p: Params) -> str:
    return _(
        "peaks at %(peak)s, %(delta)s above the other cards' median (%(median)s): check airflow and slot "
        "position"
    ) % {"peak": _deg(p["peak_c"]), "delta": _deg(p["delta_c"]), "median": _deg(p["median_c"])}


def _throttling_active(p: Params) -> str:
    words = {
        "hw_slowdown": _("HW slowdown"),
        "sw_thermal_slowdown": _("SW thermal slowdown"),
        "hw_thermal_slowdown": _("HW thermal slowdown"),
        "hw_power_brake_slowdown": _("HW power brake"),
    }
    if not p["reasons"]:
        raise ValueError("no reasons")
    text = _("%(reasons)s active") % {"reasons": ", ".join(words[r] for r in p["reasons"])}
    details = []
    if p["first_at"]:
        details.append(_("first at %(time)s") % {"time": p["first_at"]})
    if p["seconds"] is not None:
        details.append(_("%(seconds)s s in total") % {"seconds": _count(p["seconds"])})
    if details:
        text = f"{text} ({'; '.join(details)})"
    if p.get("variant") == "cool":
        if p["peak_c"] is None:
            return _("%(text)s with the GPU cool: points at the PSU or power cabling") % {"text": text}
        return _("%(text)s with the GPU cool (peak %(peak)s): points at the PSU or power cabling") % {
            "text": text,
            "peak": _deg(p["peak_c"]),
        }
    return text


def _power_capped(p: Params) -> str:
    if p["share_pct"] is None:
        return _("software power cap active (normal at full load)")
    return _("software power cap active in %(share)s%% of samples (normal at full load)") % {
        "share": _count(p["share_pct"])
    }


def _power_delivery_low(p: Params) -> str:
    parts = []
    if p.get("limit_ratio") is not None:
        parts.append(
            _("%(ratio)s × its %(limit)s W limit")
            % {"ratio": _fixed(p["limit_ratio"], 2), "limit": _count(p["limit_w"])}
        )
    if p.get("median_ratio") is not None:
        parts.append(
            _("%(ratio)s × the median of %(peers)s cards (%(median)s W)")
            % {
                "ratio": _fixed(p["median_ratio"], 2),
                "peers": _count(p["peers"]),
                "median": _count(p["median_w"]),
            }
        )
    if not parts:
        raise ValueError("no comparison")
    return _("%(mean)s W mean under load, %(comparison)s") % {
        "mean": _count(p["mean_w"]),
        "comparison": _and(parts),
    }


def _gpu_ecc_uncorrectable(p: Params) -> str:
    n = p["count"]
    return ngettext(
        "%(count)s uncorrectable ECC error in GPU memory",
        "%(count)s uncorrectable ECC errors in GPU memory",
        n,
    ) % {"count": _count(n)}


def _gpu_ecc_correctable_growth(p: Params) -> str:
    n = p["count"]
    return ngettext(
        "%(count)s new correctable ECC error in GPU memory during the run",
        "%(count)s new correctable ECC errors in GPU memory during the run",
        n,
    ) % {"count": _count(n)}


def _pcie_replay_growth(p: Params) -> str:
    parts = []
    if p["replays"]:
        parts.append(
            ngettext("%(count)s PCIe replay", "%(count)s PCIe replays", p["replays"])
            % {"count": _count(p["replays"])}
        )
    if p["aer"]:
        parts.append(
            ngettext("%(count)s AER correctable error", "%(count)s AER correctable errors", p["aer"])
            % {"count": _count(p["aer"])}
        )
    if not parts:
        raise ValueError("no growth")
    if p["aer_per_min"] is None:
        return _("%(counts)s during the run") % {"counts": _and(parts)}
    return _("%(counts)s during the run (%(rate)s AER/min)") % {
        "counts": _and(parts),
        "rate": _fixed(p["aer_per_min"], 1),
    }


def _host_dimm_uncorrectable(p: Params) -> str:
    n = p["count"]
    return ngettext(
        "%(count)s uncorrectable ECC error in the BMC event log",
        "%(count)s uncorrectable ECC errors in the BMC event log",
        n,
    ) % {"count": _count(n)}


def _host_dimm_correctable(p: Params) -> str:
    n = p["count"]
    return ngettext(
        "%(count)s correctable ECC error in the BMC event log",
        "%(count)s correctable ECC errors in the BMC event log",
        n,
    ) % {"count": _count(n)}


def _host_ecc_logging_limit_reached(p: Params) -> str:
    n = p["count"]
    return ngettext(
        "%(count)s 'logging limit reached' record in the BMC event log: later errors are not logged, every "
        "count is a lower bound",
        "%(count)s 'logging limit reached' records in the BMC event log: later errors are not logged, every "
        "count is a lower bound",
        n,
    ) % {"count": _count(n)}


def _edac_firmware_first_blind(p: Params) -> str:
    n, variant = p["errors"], p["variant"]
    if variant == "absent":
        text = ngettext(
            "the BMC logged %(count)s memory error while Linux EDAC is absent (firmware-first): EDAC = 0 "
            "proves nothing on this host, read the BMC event log",
            "the BMC logged %(count)s memory errors while Linux EDAC is absent (firmware-first): EDAC = 0 "
            "proves nothing on this host, read the BMC event log",
            n,
        )
    elif variant == "zero":
        text = ngettext(
            "the BMC logged %(count)s memory error while Linux EDAC reads 0 (firmware-first): EDAC = 0 "
            "proves nothing on this host, read the BMC event log",
            "the BMC logged %(count)s memory errors while Linux EDAC reads 0 (firmware-first): EDAC = 0 "
            "proves nothing on this host, read the BMC event log",
            n,
        )
    else:
        raise KeyError(variant)
    return text % {"count": _count(n)}


def _sel_clock_skew(p: Params) -> str:
    offset = p["offset_s"]
    return _(
        "the BMC clock is %(offset)s s off host UTC: correct SEL times before comparing them with the GPU "
        "telemetry"
    ) % {"offset": ("-" if offset < 0 else "+") + _count(abs(offset))}


def _times(n: int) -> str:
    words = {1: _("once"), 2: _("twice"), 3: _("three times"), 4: _("four times"), 5: _("five times")}
    return words.get(n) or ngettext("%(count)s time", "%(count)s times", n) % {"count": _count(n)}


def _ecc_correlated_periodic(p: Params) -> str:
    variant = p["variant"]
    if variant == "coincident":
        return _(
            "correctable ECC in the same second, %(times)s at %(period)s intervals: a signature of an "
            "external periodic cause, not a failing module"
        ) % {"times": _times(p["bursts"]), "period": about(p["period_s"])}
    if variant == "period":
        return _(
            "correctable ECC at the same period (%(period)s) on each: a signature of an external periodic "
            "cause, not a failing module"
        ) % {"period": about(p["period_s"])}
    raise KeyError(variant)


def _ecc_periodic_single_dimm(p: Params) -> str:
    return _(
        "correctable ECC every %(period)s, strictly periodic: a scheduled or logging artefact is more likely "
        "than a decaying module"
    ) % {"period": duration(p["period_s"])}


def _telemetry_gap(p: Params) -> str:
    if not p["samples"]:
        what = _("no samples")
    else:
        parts = []
        if p["gaps"]:
            parts.append(
                ngettext(
                    "a gap over %(limit)s min (longest %(longest)s)",
                    "%(count)s gaps over %(limit)s min (longest %(longest)s)",
                    p["gaps"],
                )
                % {
                    "count": _count(p["gaps"]),
                    "limit": _count(p["gap_limit_min"]),
                    "longest": duration(p["longest_gap_s"]),
                }
            )
        if p["missing_pct"] is not None:
            parts.append(_("%(share)s%% of samples missing") % {"share": _fixed(p["missing_pct"], 1)})
        if not parts:
            raise ValueError("no gap")
        what = _and(parts)
    if p.get("variant") == "every_gpu":
        return _(
            "%(what)s in the telemetry of every GPU: no claim about throttling can be made for those periods"
        ) % {"what": what}
    return _("%(what)s in the telemetry: no claim about throttling can be made for those periods") % {
        "what": what
    }


def _stage_incomplete(p: Params) -> str:
    outcomes = {
        "interrupted": pgettext("stage outcome", "interrupted"),
        "failed": pgettext("stage outcome", "failed"),
        "skipped": pgettext("stage outcome", "skipped"),
    }
    text = _("%(outcome)s: %(reason)s") % {
        "outcome": outcomes[p["status"]],
        "reason": p["reason"] or _("no reason recorded"),
    }
    if p["not_started"]:
        text = _("%(text)s; %(stages)s not started") % {"text": text, "stages": _and(p["not_started"])}
    return text


def _burnin_too_short(p: Params) -> str:
    return _("full load under all GPUs for %(measured)s h; the order promises %(target)s h") % {
        "measured": _plain(p["measured_h"]),
        "target": _plain(p["target_h"]),
    }


_RENDERERS: dict[str, Callable[[Params], str]] = {
    "stage_incomplete": _stage_incomplete,
    "burnin_too_short": _burnin_too_short,
    "pcie_link_downtrained": _pcie_link_downtrained,
    "pcie_link_cap_limited": _pcie_link_cap_limited,
    "h2d_bandwidth_outlier": _h2d_bandwidth_outlier,
    "h2d_under_load_drop": _h2d_under_load_drop,
    "numa_misaffinity": _numa_misaffinity,
    "tflops_outlier": _tflops_outlier,
    "vram_bandwidth_low": _vram_bandwidth_low,
    "compute_errors": _compute_errors,
    "thermal_margin_low": _thermal_margin_low,
    "thermal_outlier": _thermal_outlier,
    "throttling_active": _throttling_active,
    "power_capped": _power_capped,
    "power_delivery_low": _power_delivery_low,
    "gpu_ecc_uncorrectable": _gpu_ecc_uncorrectable,
    "gpu_row_remap_failure": lambda p: _("row remapping failed (no spare rows left)"),
    "gpu_row_remap_pending": lambda p: _("a row remap is pending: reset the GPU before it ships"),
    "gpu_ecc_correctable_growth": _gpu_ecc_correctable_growth,
    "pcie_replay_growth": _pcie_replay_growth,
    "host_dimm_uncorrectable": _host_dimm_uncorrectable,
    "host_dimm_correctable": _host_dimm_correctable,
    "host_ecc_logging_limit_reached": _host_ecc_logging_limit_reached,
    "edac_firmware_first_blind": _edac_firmware_first_blind,
    "sel_clock_skew": _sel_clock_skew,
    "ecc_correlated_periodic": _ecc_correlated_periodic,
    "ecc_periodic_single_dimm": _ecc_periodic_single_dimm,
    "telemetry_gap": _telemetry_gap,
    **DRIFT_RENDERERS,
}
#: Codes whose sentence has no figures: their rows render even without params.
_WITHOUT_FIGURES = frozenset({"gpu_row_remap_failure", "gpu_row_remap_pending"})


def subject_text(subject: str) -> str:
    """A finding's subject in the active language: the analysis stores "host", "burn-in", "stage burn",
    "stages telemetry, bench", "GPU 1", "GPUs 0, 2", "DIMM A1" and "DIMMs A1, B1" in English."""
    label = subject.strip()
    fixed = {"host": _("host"), "burn-in": _("burn-in")}
    if label in fixed:
        return fixed[label]
    for prefix, word in (
        ("stages ", _("stages %(names)s")),
        ("stage ", _("stage %(names)s")),
    ):
        if label.startswith(prefix):
            return word % {"names": label.removeprefix(prefix)}
    return label
