"""The burn-in analysis (burnin.analysis) on small reports: heat, power, GPU and host memory errors and
their patterns, and the run's completeness (EDAC, SEL clock, telemetry gaps, interrupted stages)."""

from __future__ import annotations

import pytest

from burnin.analysis import analyze
from probe.sel import parse_sel
from tests.burnin import reports_rig as reports
from tests.burnin.reports_rig import EDAC_BLIND, FIXTURES, baseline_notes, keys, only


def test_thermal_margin_warns_below_5_and_fails_at_0() -> None:
    warm = reports.with_series(reports.report(), 0, tlimit_c=lambda i: 3 if i == 30 else 20)
    reports.with_series(warm, 2, tlimit_c=5)  # 5 °C: just enough
    (margin,) = only(analyze(warm), "thermal_margin_low")
    assert (margin.severity, margin.subject, margin.gpu_index) == ("warn", 0, 0)
    assert margin.message == "thermal margin 3 °C at peak (70 °C)"
    hot = reports.with_series(reports.report(), 1, tlimit_c=lambda i: 0 if i == 30 else 20)
    (margin,) = only(analyze(hot), "thermal_margin_low")
    assert (margin.severity, margin.subject) == ("fail", 1)
    assert margin.message == "no thermal margin at peak (0 °C at 70 °C)"


def test_one_thermal_finding_per_machine_names_the_worst_gpu_and_lists_the_others() -> None:
    """One chassis, one airflow: four low margins are one finding, filed under the worst GPU."""
    doc = reports.report()
    for index, margin in ((0, 3), (1, 0), (2, 4), (3, 2)):
        reports.with_series(doc, index, tlimit_c=lambda i, m=margin: m if i == 30 else 20)
    (margin,) = only(analyze(doc), "thermal_margin_low")
    assert (margin.severity, margin.subject, margin.gpu_index) == ("fail", "GPUs 0, 1, 2, 3", 1)
    assert margin.message == (
        "no thermal margin at peak (0 °C at 70 °C) on GPU 1, the worst; also on GPU 0 (3 °C), GPU 2 (4 °C), "
        "GPU 3 (2 °C)"
    )
    assert margin.params["others"] == [
        {"gpu": 0, "variant": "low", "margin_c": 3},
        {"gpu": 2, "variant": "low", "margin_c": 4},
        {"gpu": 3, "variant": "low", "margin_c": 2},
    ]
    assert {i: e["severity"] for i, e in margin.evidence["gpus"].items()} == {
        "0": "warn",
        "1": "fail",
        "2": "warn",
        "3": "warn",
    }
    assert margin.evidence["margin_c"] == 0  # the worst GPU's own evidence, as for a single GPU
    # Warnings only: the smallest margin is the worst.
    for index, margin_c in ((0, 3), (1, 2)):
        reports.with_series(doc, index, tlimit_c=lambda i, m=margin_c: m if i == 30 else 20)
    reports.with_series(doc, 3, tlimit_c=20)
    (margin,) = only(analyze(doc), "thermal_margin_low")
    assert (margin.severity, margin.subject, margin.gpu_index) == ("warn", "GPUs 0, 1, 2", 1)
    assert margin.message.startswith("thermal margin 2 °C at peak (70 °C) on GPU 1, the worst; also on GPU 0")


def test_thermal_margin_from_thresholds_when_no_tlimit_is_reported() -> None:
    """Older drivers (A100, driver 535) give absolute thresholds: GPU_MAX 85 °C, peak 87 °C."""
    doc = reports.with_series(reports.report(), 0, tlimit_c=None, temp_c=lambda i: 87 if i == 5 else 70)
    doc["gpus"][0]["snapshots"]["start"] = {"temp_c": 35, "tlimit_c": None, "pcie": {}}
    doc["gpus"][0]["thermal"]["thresholds"].update(source="absolute", max_op_c=85, slowdown_c=89)
    (margin,) = only(analyze(doc), "thermal_margin_low")
    assert (margin.severity, margin.evidence["margin_c"]) == ("fail", -2)


def test_thermal_slowdown_fails_margin_and_throttling() -> None:
    doc = reports.with_series(reports.report(), 2, clocks_event_mask=lambda i: 0x44 if i == 12 else 0x4)
    findings = analyze(doc)
    assert {("thermal_margin_low", "fail", 2), ("throttling_active", "fail", 2)} <= keys(findings)
    (throttle,) = only(findings, "throttling_active")
    assert throttle.message == "HW thermal slowdown active (first at 2026-11-29T10:02:30Z; 10 s in total)"


def test_one_card_much_hotter_than_the_others_warns() -> None:
    doc = reports.with_series(reports.report(), 3, temp_c=lambda i: 80 if i == 7 else 70)
    (hot,) = only(analyze(doc), "thermal_outlier")
    assert hot.message == (
        "peaks at 80 °C, 10 °C above the other cards' median (70 °C): check airflow and slot position"
    )


def test_power_brake_fails_and_points_at_power_delivery() -> None:
    doc = reports.with_series(reports.report(), 1, clocks_event_mask=lambda i: 0x84 if i in (20, 21) else 0x4)
    (brake,) = only(analyze(doc), "throttling_active")
    assert (brake.severity, brake.subject) == ("fail", 1)
    assert brake.message == (
        "HW power brake active (first at 2026-11-29T10:03:50Z; 20 s in total) with the GPU cool "
        "(peak 70 °C): points at the PSU or power cabling"
    )
    counters = reports.report()
    counters["gpus"][0]["clocks_events"]["counters_delta_us"]["hw_power_brake"] = 3_000_000
    (brake,) = only(analyze(counters), "throttling_active")
    assert brake.evidence["seconds"] == 3.0 and brake.subject == 0


def test_the_software_power_cap_alone_is_only_a_note() -> None:
    findings = analyze(reports.report())
    assert {f.severity for f in only(findings, "power_capped")} == {"info"}
    assert not only(findings, "throttling_active")
    uncapped = reports.report()
    for i, gpu in enumerate(uncapped["gpus"]):
        gpu["clocks_events"] = {"seen_active": [], "sw_power_cap_fraction": 0.0, "counters_delta_us": None}
        reports.with_series(uncapped, i, clocks_event_mask=0)
    assert not analyze(uncapped)


def test_power_delivery_low() -> None:
    (low,) = only(analyze(reports.with_series(reports.report(), 0, power_w=400.0)), "power_delivery_low")
    assert (low.severity, low.subject) == ("warn", 0)
    assert low.message == (
        "400 W mean under load, 0.67 × its 600 W limit and 0.67 × the median of 4 cards (595 W)"
    )
    (below,) = only(analyze(reports.with_series(reports.report(), 1, power_w=550.0)), "power_delivery_low")
    assert below.message == "550 W mean under load, 0.92 × the median of 4 cards (595 W)"
    idle = reports.with_series(reports.report(), 2, **reports.IDLE)  # idle samples are not "under load"
    assert not only(analyze(idle), "power_delivery_low")


def test_gpu_ecc_and_row_remapping() -> None:
    doc = reports.report()
    doc["gpus"][0]["ecc"]["end"].update(unc_total=1, dram_unc=1)
    doc["gpus"][1]["ecc"]["remap"]["failure"] = True
    doc["gpus"][2]["ecc"]["remap"]["pending"] = True
    doc["gpus"][3]["ecc"]["end"].update(corr_total=7, dram_corr=7)
    assert keys(analyze(doc)) - baseline_notes() == {
        ("gpu_ecc_uncorrectable", "fail", 0),
        ("gpu_row_remap_failure", "fail", 1),
        ("gpu_row_remap_pending", "warn", 2),
        ("gpu_ecc_correctable_growth", "warn", 3),
    }
    growth = reports.with_series(reports.report(), 0, ecc_dram_corr=lambda i: i // 20)  # 0 -> 2 in the series
    assert ("gpu_ecc_correctable_growth", "warn", 0) in keys(analyze(growth))


def test_pcie_replays_warn_and_fail_above_dcgms_limit() -> None:
    doc = reports.report()
    doc["gpus"][0]["pcie"]["replay_counter"] = {"start": 3, "end": 8}
    doc["gpus"][1]["pcie"]["replay_counter"] = {"start": 0, "end": 120}
    doc["gpus"][2]["pcie"]["replay_counter"] = {"start": 50, "end": 0}  # a reset, not growth
    findings = only(analyze(doc), "pcie_replay_growth")
    assert {(f.severity, f.subject) for f in findings} == {("warn", 0), ("fail", 1)}


def test_host_dimm_errors_per_dimm_and_history_is_left_out() -> None:
    events = [
        reports.sel_event(1, "11/29/2026 10:01:00", "A1", "Uncorrectable ECC"),
        reports.sel_event(2, "11/29/2026 10:02:00", "C1"),
        reports.sel_event(3, "11/29/2026 10:05:17", "C1"),
        reports.sel_event(4, "11/29/2026 10:06:00", "C1", "Correctable ECC logging limit reached"),
        reports.sel_event(5, "11/20/2026 09:00:00", "D1", during_run=False),  # in the SEL before the run
    ]
    findings = analyze(reports.report(sel_events=events))
    assert keys(findings) - baseline_notes() == {
        ("host_dimm_uncorrectable", "fail", "DIMM A1"),
        ("host_dimm_correctable", "warn", "DIMM C1"),
        ("host_ecc_logging_limit_reached", "warn", "DIMM C1"),
        EDAC_BLIND,
    }
    (ce,) = only(findings, "host_dimm_correctable")
    assert ce.message == "2 correctable ECC errors in the BMC event log"
    assert ce.explained_by is None  # no pattern: the DIMM's errors stand for themselves
    (ue,) = only(findings, "host_dimm_uncorrectable")
    assert ue.message == "1 uncorrectable ECC error in the BMC event log"
    assert ce.evidence == {
        "dimm": "CPU1_DIMMC1",
        "count": 2,
        "times": ["2026-11-29T10:02:00", "2026-11-29T10:05:17"],
    }


def test_ecc_correlated_periodic_fires_on_the_seed_pattern() -> None:
    """Two DIMMs in the same second, three times, 4 h 30 m and 4 h 01 m apart (CV 0.057, two gaps)."""
    events = reports.dimm_bursts("11/29/2026 01:05:41", "11/29/2026 05:35:41", "11/29/2026 09:36:41")
    events[-1]["ts_bmc"] = "2026-11-29T09:36:42"  # logged across a second boundary: still the same burst
    findings = analyze(reports.report(sel_events=events))
    (ecc,) = only(findings, "ecc_correlated_periodic")
    assert (ecc.severity, ecc.subject) == ("warn", "DIMMs A1, B1")
    assert ecc.evidence["coincident"] is True and ecc.evidence["gaps_s"] == [16200.0, 14460.0]
    assert {
        ("host_dimm_correctable", "warn", "DIMM A1"),
        ("host_dimm_correctable", "warn", "DIMM B1"),
    } <= keys(findings)
    assert not only(findings, "ecc_periodic_single_dimm")


def test_ecc_correlated_needs_regular_gaps_and_three_bursts() -> None:
    irregular = reports.dimm_bursts("11/29/2026 01:00:00", "11/29/2026 02:00:00", "11/29/2026 09:00:00")
    assert not only(analyze(reports.report(sel_events=irregular)), "ecc_correlated_periodic")
    two = reports.dimm_bursts("11/29/2026 01:00:00", "11/29/2026 05:00:00")
    assert not only(analyze(reports.report(sel_events=two)), "ecc_correlated_periodic")
    # ±15 % around the median: 4 h 00 m and 4 h 40 m (±7.7 %) pass, 3 h and 5 h (±25 %) do not.
    rough = reports.dimm_bursts("11/29/2026 00:00:00", "11/29/2026 04:00:00", "11/29/2026 08:40:00")
    assert only(analyze(reports.report(sel_events=rough)), "ecc_correlated_periodic")
    loose = reports.dimm_bursts("11/29/2026 00:00:00", "11/29/2026 03:00:00", "11/29/2026 08:00:00")
    assert not only(analyze(reports.report(sel_events=loose)), "ecc_correlated_periodic")


def test_ecc_patterns_do_not_fire_on_random_events() -> None:
    """A decaying module: random, single-DIMM arrivals; and two DIMMs with errors at unrelated times."""
    single = [
        reports.sel_event(i + 1, when, "A1")
        for i, when in enumerate(
            ["11/29/2026 00:13:07", "11/29/2026 01:02:55", "11/29/2026 04:41:12", "11/29/2026 05:00:40",
             "11/29/2026 09:27:03", "11/29/2026 10:11:59", "11/29/2026 16:45:30"]
        )
    ]  # fmt: skip
    findings = analyze(reports.report(sel_events=single))
    assert keys(findings) - baseline_notes() == {("host_dimm_correctable", "warn", "DIMM A1"), EDAC_BLIND}
    apart = [
        reports.sel_event(1, "11/29/2026 01:00:00", "A1"),
        reports.sel_event(2, "11/29/2026 01:00:07", "B1"),
        reports.sel_event(3, "11/29/2026 05:12:00", "A1"),
        reports.sel_event(4, "11/29/2026 07:40:30", "B1"),
        reports.sel_event(5, "11/29/2026 09:30:00", "A1"),
        reports.sel_event(6, "11/29/2026 13:03:13", "B1"),
    ]
    codes = {f.code for f in analyze(reports.report(sel_events=apart))}
    assert "ecc_correlated_periodic" not in codes and "ecc_periodic_single_dimm" not in codes


def test_fixture_a_is_periodic_on_one_dimm() -> None:
    """Reference fixture A: CPU 0 DIMM 8, five consecutive gaps of 20146-20147 s among seven."""
    events = [
        e
        for e in parse_sel((FIXTURES / "bmc" / "sel_samples.txt").read_text())["events"]
        if (e["ts_bmc"] or "").startswith("2015")
    ]
    findings = analyze(reports.report(sel_events=events))
    (periodic,) = only(findings, "ecc_periodic_single_dimm")
    assert (periodic.severity, periodic.subject) == ("warn", "DIMM 8")
    assert periodic.evidence["period_s"] == pytest.approx(20146.5, abs=0.5)
    assert periodic.message.startswith("correctable ECC every 5 h 35 m 4")
    assert ("host_dimm_correctable", "warn", "DIMM 8") in keys(findings)
    assert not only(findings, "ecc_correlated_periodic")
    (dimm,) = only(findings, "host_dimm_correctable")
    assert dimm.explained_by == periodic.key


def test_two_dimms_at_the_same_strict_period_are_correlated() -> None:
    events, record = [], 1
    for hour in range(0, 20, 4):
        events.append(reports.sel_event(record, f"11/29/2026 {hour:02d}:00:00", "A1"))
        events.append(reports.sel_event(record + 1, f"11/29/2026 {hour:02d}:17:30", "B1"))
        record += 2
    (ecc,) = only(analyze(reports.report(sel_events=events)), "ecc_correlated_periodic")
    assert ecc.evidence["coincident"] is False and ecc.subject == "DIMMs A1, B1"


def test_edac_blind_and_sel_clock_skew() -> None:
    events = [reports.sel_event(1, "11/29/2026 10:01:00", "A1")]
    blind = reports.report(sel_events=events)
    blind["host_memory"]["edac"] = {"present": False, "reason": "no EDAC driver", "mc": []}
    assert ("edac_firmware_first_blind", "info", "host") in keys(analyze(blind))
    zero = reports.report(sel_events=events)  # EDAC present but at 0 while the BMC logs: just as blind
    assert ("edac_firmware_first_blind", "info", "host") in keys(analyze(zero))
    seen = reports.report(sel_events=events)
    seen["host_memory"]["edac"]["mc"][0]["ce"] = 1
    assert ("edac_firmware_first_blind", "info", "host") not in keys(analyze(seen))
    skewed = reports.report()
    skewed["host"]["bmc"]["sel_time_offset_s"] = -95
    (skew,) = only(analyze(skewed), "sel_clock_skew")
    assert skew.message.startswith("the BMC clock is -95 s off host UTC")


def test_telemetry_gaps() -> None:
    holes = reports.report()
    for series in holes["telemetry"]["gpu_series"].values():  # 10 min without a sample on every GPU
        for row in series[30:]:
            row[0] += 600
    (gap,) = only(analyze(holes), "telemetry_gap")
    assert (gap.severity, gap.subject) == ("warn", "host")
    assert gap.message == (
        "a gap over 5 min (longest 10 min 10 s) and 50.0% of samples missing in the telemetry of every GPU: "
        "no claim about throttling can be made for those periods"
    )
    assert gap.evidence["gpus"]["0"]["gaps"] == [{"from": "2026-11-29T10:05:20Z", "seconds": 610.0}]
    sparse = reports.report()
    series = sparse["telemetry"]["gpu_series"]["2"]
    del series[10], series[20]  # 2 of 60 samples
    (gap,) = only(analyze(sparse), "telemetry_gap")
    assert (gap.subject, gap.evidence["missing"]) == (2, 2)
    assert (
        gap.message
        == "3.3% of samples missing in the telemetry: no claim about throttling can be made for those periods"
    )
    drift = reports.report()  # a sampler a little late each time misses nothing
    for i, row in enumerate(drift["telemetry"]["gpu_series"]["1"]):
        row[0] += i * 0.04
    assert not only(analyze(drift), "telemetry_gap")
    none = reports.report(telemetry=False)
    assert ("telemetry_gap", "warn", "host") in keys(analyze(none))


def test_stage_incomplete_is_a_failure_with_its_reason() -> None:
    doc = reports.report()
    doc["stages"][3].update(status="interrupted", reason="received SIGTERM")
    doc["stages"][2].update(status="skipped", reason="neither torch nor cupy is importable")
    findings = only(analyze(doc), "stage_incomplete")
    assert [(f.severity, f.subject, f.message) for f in findings] == [
        ("fail", "stage bench", "skipped: neither torch nor cupy is importable"),
        ("fail", "stage burn", "interrupted: received SIGTERM"),
    ]
    assert findings[1].evidence["stage"] == "burn" and findings[1].evidence["stages"] == ["burn"]


def test_one_stage_incomplete_per_interruption_however_many_stages_it_cut() -> None:
    """A SIGTERM during the bench stops the telemetry and the bench; the probe then skips the burn
    ("not started: run interrupted (...)", probe/burnin.py): one interruption, one finding."""
    doc = reports.report()
    doc["stages"][1].update(status="interrupted", reason="received SIGTERM")
    doc["stages"][2].update(status="interrupted", reason="received SIGTERM")
    doc["stages"][3].update(status="skipped", reason="not started: run interrupted (received SIGTERM)")
    (stage,) = only(analyze(doc), "stage_incomplete")
    assert (stage.severity, stage.subject) == ("fail", "stages telemetry, bench, burn")
    assert stage.message == "interrupted: received SIGTERM; burn not started"
    assert stage.evidence["stage"] == "telemetry"  # the first stage it cut (burnin.services.gate reads it)
    assert stage.evidence["stages"] == ["telemetry", "bench", "burn"]
    assert [s["status"] for s in stage.evidence["by_stage"]] == ["interrupted", "interrupted", "skipped"]
    assert stage.params == {
        "status": "interrupted",
        "reason": "received SIGTERM",
        "stages": ["telemetry", "bench", "burn"],
        "not_started": ["burn"],
    }
    # A checkpoint of a probe that died: every stage still running is written as interrupted, one note.
    died = reports.report()
    for index in (1, 3):
        died["stages"][index].update(status="interrupted", reason="stage did not finish")
    (stage,) = only(analyze(died), "stage_incomplete")
    assert stage.subject == "stages telemetry, burn" and stage.message == "interrupted: stage did not finish"
    # Two stages without a reason are not known to share a cause.
    unknown = reports.report()
    for index in (2, 3):
        unknown["stages"][index].update(status="failed", reason=None)
    assert [f.message for f in only(analyze(unknown), "stage_incomplete")] == [
        "failed: no reason recorded",
        "failed: no reason recorded",
    ]
