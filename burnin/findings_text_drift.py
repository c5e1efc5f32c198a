"""The drift findings' sentences in the reader's language: a field or post-repair run against each GPU's
baseline (`burnin.analysis.drift`, issue 25). `burnin.findings_text` looks them up by code with the others
(`DRIFT_RENDERERS`); rendered in English, each gives exactly the drift module's message
(`tests/burnin/test_findings_text_drift.py`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.utils.translation import gettext as _

from burnin.findings_text_format import Params, _and, _count, _deg, _fixed


def _card(p: Params) -> str:
    """The card as a drift sentence names it: by serial, or by UUID where it has none."""
    if p["serial"]:
        return _("serial %(serial)s") % {"serial": p["serial"]}
    return f"UUID {p['uuid']}"


def _pct(value: Any) -> str:
    """A drop in percent as the drift module writes it: whole, else one decimal."""
    return _fixed(value, 0 if float(value).is_integer() else 1)


def _drift_link(p: Params) -> str:
    return _("PCIe link at %(link)s under load, down from %(baseline_link)s at its baseline (%(card)s)") % {
        "link": p["link"],
        "baseline_link": p["baseline_link"],
        "card": _card(p),
    }


def _drift_h2d(p: Params) -> str:
    values = {
        "h2d": _fixed(p["h2d_gbps"], 1),
        "down": _pct(p["down_pct"]),
        "baseline": _fixed(p["baseline_gbps"], 1),
        "card": _card(p),
    }
    variant = p.get("variant")
    if variant == "link":
        return _(
            "H2D %(h2d)s GB/s, down %(down)s %% from %(baseline)s GB/s at its baseline (%(card)s): link at "
            "%(link)s (%(baseline_link)s at its baseline)"
        ) % dict(values, link=p["link"], baseline_link=p["baseline_link"])
    if variant is None:
        return (
            _("H2D %(h2d)s GB/s, down %(down)s %% from %(baseline)s GB/s at its baseline (%(card)s)") % values
        )
    raise KeyError(variant)


def _drift_tflops(p: Params) -> str:
    return _(
        "FP16 %(tflops)s TFLOPS, down %(down)s %% from %(baseline)s TFLOPS at its baseline (%(card)s)"
    ) % {
        "tflops": _fixed(p["tflops"], 1),
        "down": _pct(p["down_pct"]),
        "baseline": _fixed(p["baseline_tflops"], 1),
        "card": _card(p),
    }


def _drift_vram(p: Params) -> str:
    return _("VRAM %(vram)s GB/s, down %(down)s %% from %(baseline)s GB/s at its baseline (%(card)s)") % {
        "vram": _count(p["vram_gbps"]),
        "down": _pct(p["down_pct"]),
        "baseline": _count(p["baseline_gbps"]),
        "card": _card(p),
    }


def _drift_thermal(p: Params) -> str:
    return _(
        "peaks at %(peak)s, up %(rise)s from %(baseline_peak)s at its baseline (%(card)s), at %(power)s W "
        "mean power (%(baseline_power)s W at its baseline)"
    ) % {
        "peak": _deg(p["peak_c"]),
        "rise": _deg(p["rise_c"]),
        "baseline_peak": _deg(p["baseline_peak_c"]),
        "card": _card(p),
        "power": _count(p["power_w"]),
        "baseline_power": _count(p["baseline_power_w"]),
    }


def _drift_codes(codes: Sequence[str]) -> str:
    """The ordinary findings that are new since the baseline, in words (`drift.CODE_WORDS`)."""
    words = {
        "throttling_active": _("throttling"),
        "thermal_margin_low": _("low thermal margin"),
        "gpu_ecc_uncorrectable": _("uncorrectable ECC errors in GPU memory"),
        "gpu_row_remap_failure": _("failed row remapping"),
        "compute_errors": _("compute errors or Xid events"),
        "gpu_row_remap_pending": _("a pending row remap"),
        "gpu_ecc_correctable_growth": _("correctable ECC errors in GPU memory"),
        "host_dimm_correctable": _("correctable ECC errors in the BMC event log"),
        "host_ecc_logging_limit_reached": _("the BMC's correctable ECC logging limit reached"),
        "ecc_correlated_periodic": _("correctable ECC errors in the same second on several DIMMs"),
        "ecc_periodic_single_dimm": _("strictly periodic correctable ECC errors"),
    }
    if not codes:
        raise ValueError("nothing new")
    return _and([words[code] for code in codes])


def _drift_new_on_gpu(p: Params) -> str:
    return _("new since its baseline (%(card)s): %(what)s") % {
        "card": _card(p),
        "what": _drift_codes(p["codes"]),
    }


def _drift_dimm_ecc(p: Params) -> str:
    return _("new since the baseline: %(what)s") % {"what": _drift_codes(p["codes"])}


def _drift_gpu_missing(p: Params) -> str:
    return _("the baseline's card (%(card)s) is missing from this run") % {"card": _card(p)}


def _drift_no_baseline(p: Params) -> str:
    return _(
        "no baseline for this card (%(card)s) yet: not compared (a passing post-repair run becomes its "
        "baseline)"
    ) % {"card": _card(p)}


#: The drift codes' renderers, by code (`burnin.findings_text._RENDERERS` holds them with the others).
DRIFT_RENDERERS: dict[str, Callable[[Params], str]] = {
    "drift_link": _drift_link,
    "drift_h2d": _drift_h2d,
    "drift_gpu_errors": _drift_new_on_gpu,
    "drift_gpu_missing": _drift_gpu_missing,
    "drift_tflops": _drift_tflops,
    "drift_vram": _drift_vram,
    "drift_thermal": _drift_thermal,
    "drift_throttling": _drift_new_on_gpu,
    "drift_dimm_ecc": _drift_dimm_ecc,
    "drift_no_baseline": _drift_no_baseline,
}
