"""Drift (burnin.analysis.drift, pure): a field or post-repair run against each GPU's own baseline. A healthy
run gives no warning; a link fallen to x8 fails naming the GPU, its serial, the baseline and the new figure;
every threshold holds at its edge; cards are matched by serial; temperature is compared at the same power
only; findings of the ordinary analysis count only when the baseline did not have them."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from burnin.analysis.context import Finding
from burnin.analysis.drift import DRIFT_RULES_VERSION, GpuFigures, compare
from burnin.rules import DRIFT

BASELINE_RUN, FIELD_RUN = 12, 40


def _gpu(index: int, **change: Any) -> GpuFigures:
    figures = GpuFigures(
        index=index,
        key=f"13240212345{index:02d}",
        serial=f"13240212345{index:02d}",
        component_id=500 + index,
        load_gen=5,
        load_width=16,
        h2d_gbps=27.7,
        tflops=485.0,
        vram_gbps=1416.0,
        peak_temp_c=71.0,
        mean_power_w=450.0,
        run_id=BASELINE_RUN,
    )
    return replace(figures, **change)


def _baseline(n: int = 8) -> dict[str, GpuFigures]:
    return {g.key: g for g in (_gpu(i) for i in range(n))}


def _field(baseline: dict[str, GpuFigures], **per_gpu: dict[str, Any]) -> list[GpuFigures]:
    """The same cards measured again in the field; ``per_gpu["g3"] = {...}`` changes GPU 3's figures."""
    return [replace(g, run_id=FIELD_RUN, **per_gpu.get(f"g{g.index}", {})) for g in baseline.values()]


def _one(baseline: dict[str, GpuFigures], **change: Any) -> list[Finding]:
    """The findings when GPU 0 alone has ``change``."""
    return compare(current=_field(baseline, g0=change), baseline=baseline)


def _codes(findings: list[Finding]) -> list[tuple[str, str, int | str]]:
    return [(f.code, f.severity, f.subject) for f in findings]


def test_a_healthy_field_run_has_no_warning_and_no_failure() -> None:
    baseline = _baseline()
    # A field site's figures wander by a few percent: within every threshold, on every card.
    wander = (-0.03, 0.02, -0.045, 0.0, 0.01, -0.02, 0.035, -0.01)
    field = [
        replace(
            g,
            run_id=FIELD_RUN,
            h2d_gbps=g.h2d_gbps * (1 + w),  # type: ignore[operator]
            tflops=g.tflops * (1 + w),  # type: ignore[operator]
            vram_gbps=g.vram_gbps * (1 + w),  # type: ignore[operator]
            peak_temp_c=g.peak_temp_c + 3,  # type: ignore[operator]
            mean_power_w=g.mean_power_w * 1.02,  # type: ignore[operator]
            codes=frozenset({"power_delivery_low"}),  # an ordinary warning that no drift rule watches
        )
        for g, w in zip(baseline.values(), wander, strict=True)
    ]
    assert compare(current=field, baseline=baseline) == []
    same_host = frozenset({"host_dimm_correctable"})
    assert (
        compare(current=field, baseline=baseline, host_codes=same_host, baseline_host_codes=same_host) == []
    )
    assert DRIFT_RULES_VERSION and isinstance(DRIFT_RULES_VERSION, str)


def test_one_gpu_fallen_to_x8_fails_naming_the_gpu_its_serial_the_baseline_and_the_new_figure() -> None:
    baseline = _baseline()
    findings = compare(current=_field(baseline, g3={"load_width": 8, "h2d_gbps": 13.9}), baseline=baseline)
    assert _codes(findings) == [("drift_link", "fail", 3), ("drift_h2d", "fail", 3)]
    link, h2d = findings
    assert h2d.message == (
        "H2D 13.9 GB/s, down 50 % from 27.7 GB/s at its baseline (serial 1324021234503): "
        "link at x8 (x16 at its baseline)"
    )
    assert link.message == "PCIe link at x8 under load, down from x16 at its baseline (serial 1324021234503)"
    assert h2d.gpu_index == link.gpu_index == 3
    assert h2d.evidence == {
        "serial": "1324021234503",
        "key": "1324021234503",
        "component_id": 503,
        "baseline_run": BASELINE_RUN,
        "baseline_index": 3,
        "baseline": 27.7,
        "value": 13.9,
        "unit": "GB/s",
        "threshold_drop": DRIFT.h2d_drop_fail,
    }
    assert (link.evidence["baseline"], link.evidence["value"], link.evidence["component_id"]) == (
        "Gen5 x16",
        "Gen5 x8",
        503,
    )
    assert (link.evidence["baseline_width"], link.evidence["width"]) == (16, 8)
    assert h2d.params == {
        "serial": "1324021234503",
        "h2d_gbps": 13.9,
        "baseline_gbps": 27.7,
        "down_pct": 50,
        "variant": "link",
        "link": "x8",
        "baseline_link": "x16",
    }


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"h2d_gbps": 27.7 * 0.901}, []),  # down 9.9 %
        ({"h2d_gbps": 27.7 * 0.899}, [("drift_h2d", "fail", 0)]),  # down 10.1 %
        ({"tflops": 485.0 * 0.951}, []),
        ({"tflops": 485.0 * 0.949}, [("drift_tflops", "warn", 0)]),
        ({"vram_gbps": 1416.0 * 0.951}, []),
        ({"vram_gbps": 1416.0 * 0.949}, [("drift_vram", "warn", 0)]),
        ({"peak_temp_c": 76.0}, []),  # up exactly 5 °C: not more than 5
        ({"peak_temp_c": 76.2}, [("drift_thermal", "warn", 0)]),
        ({"peak_temp_c": 80.0, "mean_power_w": 450.0 * 1.049}, [("drift_thermal", "warn", 0)]),  # same power
        ({"peak_temp_c": 80.0, "mean_power_w": 450.0 * 1.051}, []),  # more power: not comparable
        ({"peak_temp_c": 80.0, "mean_power_w": 300.0}, [("drift_thermal", "warn", 0)]),  # hotter on less
        ({"peak_temp_c": 80.0, "mean_power_w": None}, []),
        ({"load_gen": 4}, [("drift_link", "fail", 0)]),
        ({"load_width": 16, "load_gen": 5}, []),
        ({"load_gen": None, "load_width": None}, []),  # not measured: nothing to say
        ({"h2d_gbps": None, "tflops": None, "vram_gbps": None, "peak_temp_c": None}, []),
        ({"h2d_gbps": 60.0, "tflops": 600.0, "vram_gbps": 2000.0, "peak_temp_c": 50.0}, []),  # better
    ],
)
def test_each_threshold_at_its_edge(change: dict[str, Any], expected: list[tuple[str, str, int]]) -> None:
    assert _codes(_one(_baseline(), **change)) == expected


def test_the_figures_of_each_sentence() -> None:
    baseline = _baseline()
    (tflops,) = _one(baseline, tflops=455.0)
    assert tflops.message == (
        "FP16 455.0 TFLOPS, down 6.2 % from 485.0 TFLOPS at its baseline (serial 1324021234500)"
    )
    assert (tflops.evidence["baseline"], tflops.evidence["value"], tflops.evidence["unit"]) == (
        485.0,
        455.0,
        "TFLOPS",
    )
    (vram,) = _one(baseline, vram_gbps=1310.0)
    assert (
        vram.message == "VRAM 1,310 GB/s, down 7.5 % from 1,416 GB/s at its baseline (serial 1324021234500)"
    )
    (hot,) = _one(baseline, peak_temp_c=79.0, mean_power_w=452.4)
    assert hot.message == (
        "peaks at 79 °C, up 8 °C from 71 °C at its baseline (serial 1324021234500), "
        "at 452 W mean power (450 W at its baseline)"
    )
    assert (hot.evidence["baseline"], hot.evidence["value"], hot.evidence["unit"]) == (71.0, 79.0, "°C")
    assert (hot.evidence["power_w"], hot.evidence["baseline_power_w"]) == (452.4, 450.0)
    (gen,) = _one(baseline, load_gen=4)
    assert (
        gen.message == "PCIe link at Gen4 under load, down from Gen5 at its baseline (serial 1324021234500)"
    )
    (h2d,) = _one(baseline, h2d_gbps=24.0)
    assert h2d.message == "H2D 24.0 GB/s, down 13.4 % from 27.7 GB/s at its baseline (serial 1324021234500)"
    assert "variant" not in h2d.params


def test_cards_are_matched_by_serial_not_by_slot() -> None:
    baseline = _baseline(2)
    first, second = baseline.values()
    # The two cards swapped slots; the one now at index 0 (the baseline's GPU 1) lost its link.
    field = [
        replace(second, index=0, run_id=FIELD_RUN, load_width=8, h2d_gbps=13.9),
        replace(first, index=1, run_id=FIELD_RUN),
    ]
    findings = compare(current=field, baseline=baseline)
    assert _codes(findings) == [("drift_link", "fail", 0), ("drift_h2d", "fail", 0)]
    assert findings[1].evidence["serial"] == second.serial and findings[1].evidence["baseline_index"] == 1


def test_a_gpu_of_the_baseline_missing_from_the_run_fails_under_its_baseline_index() -> None:
    baseline = _baseline(4)
    field = [g for g in _field(baseline) if g.index != 2]
    (missing,) = compare(current=field, baseline=baseline)
    assert (missing.code, missing.severity, missing.subject) == ("drift_gpu_missing", "fail", 2)
    assert missing.message == "the baseline's card (serial 1324021234502) is missing from this run"
    assert missing.evidence["serial"] == "1324021234502" and missing.evidence["component_id"] == 502
    assert missing.evidence["baseline_run"] == BASELINE_RUN and missing.evidence["value"] is None
    assert missing.evidence["baseline"]["h2d_gbps"] == 27.7
    assert missing.params == {"serial": "1324021234502", "baseline_run": BASELINE_RUN}


def test_a_replacement_without_baseline_is_a_note_and_is_not_compared() -> None:
    baseline = _baseline(4)
    old = baseline.pop("1324021234502")  # the card swapped under warranty is no longer the server's
    new = replace(
        old, key="NEW-9", serial="NEW-9", component_id=777, run_id=FIELD_RUN, h2d_gbps=1.0, load_width=1
    )
    field = [g for g in _field(baseline)] + [new]
    (note,) = compare(current=field, baseline=baseline)
    assert (note.code, note.severity, note.subject) == ("drift_no_baseline", "info", 2)
    assert note.message == (
        "no baseline for this card (serial NEW-9) yet: not compared (a passing post-repair run becomes its "
        "baseline)"
    )
    assert note.evidence["component_id"] == 777 and note.evidence["baseline_run"] is None
    assert note.evidence["baseline"] is None and note.evidence["value"] is None


def test_a_card_without_serial_is_named_by_its_uuid() -> None:
    card = _gpu(0, key="GPU-6f1e2d3c", serial="")
    (finding,) = compare(current=[replace(card, h2d_gbps=13.9)], baseline={card.key: card})
    assert finding.message == "H2D 13.9 GB/s, down 50 % from 27.7 GB/s at its baseline (UUID GPU-6f1e2d3c)"
    assert finding.params["uuid"] == "GPU-6f1e2d3c" and finding.params["serial"] == ""


def test_gpu_errors_and_throttling_count_only_when_the_baseline_did_not_have_them() -> None:
    baseline = _baseline(3)
    baseline["1324021234501"] = replace(
        baseline["1324021234501"], codes=frozenset({"gpu_ecc_correctable_growth", "thermal_margin_low"})
    )
    field = _field(
        baseline,
        g0={"codes": frozenset({"gpu_ecc_uncorrectable", "compute_errors", "throttling_active"})},
        # GPU 1 had both already; only the throttling is new.
        g1={"codes": frozenset({"gpu_ecc_correctable_growth", "thermal_margin_low", "throttling_active"})},
        g2={"codes": frozenset({"pcie_replay_growth", "power_delivery_low"})},  # not watched by drift
    )
    findings = compare(current=field, baseline=baseline)
    assert _codes(findings) == [
        ("drift_gpu_errors", "fail", 0),
        ("drift_throttling", "warn", 0),
        ("drift_throttling", "warn", 1),
    ]
    errors, throttling, only_new = findings
    assert errors.message == (
        "new since its baseline (serial 1324021234500): uncorrectable ECC errors in GPU memory and "
        "compute errors or Xid events"
    )
    assert errors.params["codes"] == ["gpu_ecc_uncorrectable", "compute_errors"]
    assert errors.evidence["baseline"] == [] and errors.evidence["new"] == errors.params["codes"]
    assert throttling.message == "new since its baseline (serial 1324021234500): throttling"
    assert only_new.params["codes"] == ["throttling_active"]
    assert only_new.evidence["baseline"] == ["thermal_margin_low"]
    assert only_new.evidence["value"] == ["throttling_active", "thermal_margin_low"]


def test_new_correctable_dimm_ecc_warns_on_the_host() -> None:
    baseline = _baseline(2)
    field = _field(baseline)
    (dimm,) = compare(
        current=field,
        baseline=baseline,
        host_codes=frozenset({"host_dimm_correctable", "ecc_correlated_periodic", "sel_clock_skew"}),
        baseline_host_codes=frozenset({"ecc_correlated_periodic"}),
    )
    assert (dimm.code, dimm.severity, dimm.subject, dimm.gpu_index) == (
        "drift_dimm_ecc",
        "warn",
        "host",
        None,
    )
    assert dimm.message == "new since the baseline: correctable ECC errors in the BMC event log"
    assert dimm.evidence["baseline_run"] == BASELINE_RUN and dimm.evidence["serial"] is None
    assert dimm.evidence["value"] == ["host_dimm_correctable", "ecc_correlated_periodic"]
    # Uncorrectable DIMM errors fail the ordinary rules on the same report; drift watches correctable ones.
    assert compare(current=field, baseline=baseline, host_codes=frozenset({"host_dimm_uncorrectable"})) == []


def test_failures_come_first_then_warnings_then_notes() -> None:
    baseline = _baseline(4)
    newcomer = _gpu(9, key="NEW-1", serial="NEW-1", run_id=FIELD_RUN)
    field = _field(baseline, g0={"tflops": 400.0}, g1={"peak_temp_c": 90.0}, g3={"h2d_gbps": 10.0})
    field = [g for g in field if g.index != 2] + [newcomer]
    findings = compare(current=field, baseline=baseline, host_codes=frozenset({"host_dimm_correctable"}))
    assert _codes(findings) == [
        ("drift_h2d", "fail", 3),
        ("drift_gpu_missing", "fail", 2),
        ("drift_tflops", "warn", 0),
        ("drift_thermal", "warn", 1),
        ("drift_dimm_ecc", "warn", "host"),
        ("drift_no_baseline", "info", 9),
    ]
    for finding in findings:
        assert {"serial", "component_id", "baseline_run", "baseline", "value", "unit"} <= set(
            finding.evidence
        )
        assert finding.code.startswith("drift_")
