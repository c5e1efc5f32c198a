"""The burn-in analysis (burnin.analysis): seed 003, the real H200 captures, every rule on small reports."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from burnin.analysis import RULES_VERSION, Expectations, Finding, analyze
from burnin.rules import THRESHOLDS
from probe.schema import load_schema
from probe.sel import parse_sel
from probe.validate import Validator
from tests.burnin import reports
from tests.burnin.conftest import FIXTURES, SEED003

REPO_ROOT = Path(__file__).resolve().parents[2]


def keys(findings: list[Finding]) -> set[tuple[str, str, int | str]]:
    return {(f.code, f.severity, f.subject) for f in findings}


def only(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


#: The baseline's EDAC reads 0: any SEL memory error there comes with this note (rule 16).
EDAC_BLIND = ("edac_firmware_first_blind", "info", "host")


def baseline_notes(n: int = 4) -> set[tuple[str, str, int | str]]:
    """A healthy run's findings: the software power cap note on every card, nothing else."""
    return {("power_capped", "info", i) for i in range(n)}


# ------------------------------------------------------------------------------------------- seed 003
SEED003_EXPECTED = {
    ("stage_incomplete", "fail", "stage burn"),
    ("pcie_link_downtrained", "fail", 2),
    ("pcie_link_downtrained", "fail", 4),
    ("h2d_bandwidth_outlier", "fail", 2),
    ("h2d_bandwidth_outlier", "fail", 4),
    ("thermal_margin_low", "warn", 1),
    ("ecc_correlated_periodic", "warn", "DIMMs A1, B1"),
    ("host_dimm_correctable", "warn", "DIMM A1"),
    ("host_dimm_correctable", "warn", "DIMM B1"),
    ("edac_firmware_first_blind", "info", "host"),
    *{("power_capped", "info", i) for i in range(6)},
}


def test_seed003_report_is_a_valid_probe_report(seed003_report: dict) -> None:
    assert Validator(load_schema()).errors(seed003_report) == []
    jsonschema.Draft202012Validator(load_schema()).validate(seed003_report)


def test_seed003_fixture_is_what_its_generator_writes() -> None:
    spec = importlib.util.spec_from_file_location(
        "make_seed003", FIXTURES / "burnin" / "make_seed003_report.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.render(module.build_report()) == SEED003.read_text(encoding="utf-8")


def test_seed003_yields_exactly_the_expected_findings(seed003_report: dict) -> None:
    """The platform's generation known only from the report: each Gen5 card capped at Gen4 is a warning."""
    findings = analyze(seed003_report)
    caps = {("pcie_link_cap_limited", "warn", i) for i in range(6)}
    assert keys(findings) == SEED003_EXPECTED | caps
    assert len(findings) == len(SEED003_EXPECTED | caps)  # one finding per key: nothing doubled
    # The four healthy cards have no failure; no TFLOPS outlier at a 3.5 % spread; no telemetry gap.
    assert {f.subject for f in findings if f.severity == "fail"} == {"stage burn", 2, 4}
    assert not only(findings, "tflops_outlier") and not only(findings, "telemetry_gap")
    assert [f.severity for f in findings] == sorted(
        (f.severity for f in findings), key=["fail", "warn", "info"].index
    )


def test_seed003_with_the_configurations_gen4_platform(seed003_report: dict) -> None:
    """The configuration states the EPYC 7643 platform's Gen4: the cap is by design, a note."""
    findings = analyze(seed003_report, expectations=Expectations(platform_max_gen=4))
    assert keys(findings) == SEED003_EXPECTED | {("pcie_link_cap_limited", "info", i) for i in range(6)}
    assert not any(f.code == "pcie_link_downtrained" and f.subject not in (2, 4) for f in findings)


def test_seed003_messages_in_plain_words(seed003_report: dict) -> None:
    by_key = {(f.code, f.subject): f for f in analyze(seed003_report)}
    for index in (2, 4):
        h2d = by_key["h2d_bandwidth_outlier", index]
        assert h2d.message == "H2D 13.9 GB/s, 0.50 × the median: link at x8 (expected x16)"
        assert h2d.evidence["peer_median_gbps"] == pytest.approx(27.655)  # NUMA-local figures
        link = by_key["pcie_link_downtrained", index]
        assert link.message == "PCIe link at Gen4 x8 under load (expected Gen4 x16)"
        assert link.evidence["expected"]["gen"] == 4 and link.evidence["card_max_gen"] == 5
        assert "limited by 16.0 GT/s PCIe x8 link" in link.evidence["kernel_limited_by"]
    assert by_key["thermal_margin_low", 1].message == "thermal margin 2 °C at peak (88 °C)"
    assert by_key["stage_incomplete", "stage burn"].message == (
        "interrupted: workshop power distribution failure"
    )
    ecc = by_key["ecc_correlated_periodic", "DIMMs A1, B1"]
    assert ecc.message == (
        "correctable ECC in the same second, three times at ~4 h intervals: "
        "a signature of an external periodic cause, not a failing module"
    )
    assert ecc.params == {"variant": "coincident", "dimms": ["A1", "B1"], "bursts": 3, "period_s": 15330}
    assert ecc.evidence["gaps_s"] == [16200.0, 14460.0]  # 4 h 30 m and 4 h 01 m
    assert ecc.evidence["cv"] == pytest.approx(0.0568, abs=1e-3)
    assert ecc.evidence["dimms"] == ["CPU1_DIMMA1", "CPU1_DIMMB1"]
    assert ecc.evidence["same_second_counts"] == {"A1": 3, "B1": 3}
    assert by_key["host_dimm_correctable", "DIMM A1"].evidence["count"] == 3
    # The pattern explains both DIMMs' warnings: one cause, read once.
    for dimm in ("DIMM A1", "DIMM B1"):
        assert (
            by_key["host_dimm_correctable", dimm].explained_by
            == ecc.key
            == ("ecc_correlated_periodic", "DIMMs A1, B1")
        )
    assert ecc.explained_by is None
    assert by_key["power_capped", 0].evidence["power_capped_fraction"] > 0.9


def test_findings_serialise_with_int_subjects_for_gpus(seed003_report: dict) -> None:
    data = json.loads(json.dumps([f.as_dict() for f in analyze(seed003_report)]))
    fields = {"code", "severity", "subject", "gpu_index", "message", "params", "evidence", "explained_by"}
    assert all(set(item) == fields for item in data)
    gpu_codes = {"pcie_link_downtrained", "h2d_bandwidth_outlier", "thermal_margin_low", "power_capped"}
    assert all(isinstance(item["subject"], int) for item in data if item["code"] in gpu_codes)
    assert RULES_VERSION == "2026.12.1"


# ----------------------------------------------------------------------------------------------- H200
def test_real_h200_captures_yield_no_fail_and_the_power_cap_is_info(h200_report: dict) -> None:
    assert Validator(load_schema()).errors(h200_report) == []
    findings = analyze(h200_report)
    assert keys(findings) == {("power_capped", "info", 0)}
    (capped,) = findings
    assert capped.evidence["power_capped_fraction"] == pytest.approx(0.87, abs=0.01)  # 100 of 115 samples
    assert capped.message == "software power cap active in 87% of samples (normal at full load)"


def test_h200_capture_is_judged_on_what_it_measured(h200_report: dict) -> None:
    """No pstate in the capture: a sample at >= 80 % utilisation counts as loaded, and the link is Gen5 x16.
    No T.Limit samples: the margin is the T.Limit temperature of the snapshot (39 + 48 °C) less the peak."""
    doc = reports.patched(h200_report, lambda d: d["gpus"][0]["bench"]["h2d_gbps"].update(default=30.0))
    (h2d,) = only(analyze(doc), "h2d_bandwidth_outlier")
    assert h2d.message == "H2D 30.0 GB/s, 0.55 × the 55 GB/s expected of a Gen5 x16 link"
    hot = reports.patched(h200_report, lambda d: d["gpus"][0]["thermal"].update(peak_gpu_c=84))
    (margin,) = only(analyze(hot), "thermal_margin_low")
    assert margin.message == "thermal margin 3 °C at peak (84 °C)" and margin.severity == "warn"


# ----------------------------------------------------------------------------------------- the rules
def test_a_healthy_run_has_only_the_power_cap_note() -> None:
    assert keys(analyze(reports.report())) == baseline_notes()


def test_the_module_is_pure_python_without_django() -> None:
    code = (
        "import sys, burnin.analysis, burnin.rules\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_a_gen5_card_on_a_gen4_platform_is_capped_never_downtrained() -> None:
    doc = reports.report()
    for gpu in doc["gpus"]:
        gpu["pcie"]["load"].update(gen=4, max_gen=4, host_max_gen=4)
    for i in range(4):
        reports.with_series(doc, i, pcie_gen=4)
    findings = analyze(doc)
    assert keys(findings) == baseline_notes() | {("pcie_link_cap_limited", "warn", i) for i in range(4)}
    assert only(findings, "pcie_link_cap_limited")[0].message == (
        "Gen5 card runs at the platform's Gen4 (host root port maximum)"
    )
    stated = analyze(doc, expectations=Expectations(platform_max_gen=4))
    assert keys(stated) == baseline_notes() | {("pcie_link_cap_limited", "info", i) for i in range(4)}
    # The configuration promises Gen5, the host gives Gen4: the cap itself fails, still not a downtrain.
    promised = analyze(doc, expectations=Expectations(platform_max_gen=5))
    assert keys(promised) == baseline_notes() | {("pcie_link_cap_limited", "fail", i) for i in range(4)}
    assert only(promised, "pcie_link_cap_limited")[0].message == (
        "link capped at Gen4 by the host, but the configuration promises Gen5"
    )


def test_x8_under_load_in_p0_is_downtrained() -> None:
    doc = reports.with_series(reports.report(), 1, pcie_width=lambda i: 16 if i < 10 else 8)
    findings = analyze(doc)
    (link,) = only(findings, "pcie_link_downtrained")
    assert (link.severity, link.subject) == ("fail", 1)
    assert link.message == "PCIe link at Gen5 x8 under load (expected Gen5 x16)"
    assert link.evidence["under_load"]["samples_below_expected"] == 50
    # Without telemetry the probe's own summary of the loaded samples says the same.
    summary = reports.report(telemetry=False)
    summary["gpus"][1]["pcie"]["load"]["width"] = 8
    assert ("pcie_link_downtrained", "fail", 1) in keys(analyze(summary))


def test_idle_x8_in_p8_alone_is_nothing() -> None:
    doc = reports.report()
    doc["gpus"][1]["pcie"]["idle"] = {"pstate": "P8", "gen": 1, "width": 8}
    doc["gpus"][1]["pcie"]["load"] = None
    reports.with_series(doc, 1, **dict(reports.IDLE, pcie_width=8))
    findings = analyze(doc)
    assert not [
        f for f in findings if f.code.startswith("pcie_link") or (f.subject == 1 and f.severity != "info")
    ]


def test_a_busy_sample_without_pstate_counts_as_loaded() -> None:
    doc = reports.with_series(reports.report(), 0, pstate=None, pcie_width=8)
    assert ("pcie_link_downtrained", "fail", 0) in keys(analyze(doc))
    busy_elsewhere = reports.with_series(reports.report(), 0, pstate=2, pcie_width=8)
    assert ("pcie_link_downtrained", "fail", 0) not in keys(analyze(busy_elsewhere))


def test_a_slower_generation_under_load_is_downtrained() -> None:
    doc = reports.with_series(reports.report(), 3, pcie_gen=3)
    (link,) = only(analyze(doc), "pcie_link_downtrained")
    assert link.message == "PCIe link at Gen3 x16 under load (expected Gen5 x16)"


def test_the_expected_width_follows_the_connector_and_the_cards_own_lanes() -> None:
    doc = reports.with_series(reports.report(), 2, pcie_width=8)
    assert ("pcie_link_downtrained", "fail", 2) in keys(analyze(doc))
    slot = Expectations(slot_links={"SN0002": (5, 8)})
    assert "pcie_link_downtrained" not in {f.code for f in analyze(doc, expectations=slot)}
    doc["gpus"][2]["pcie"]["sysfs"]["gpu"]["max_link_width"] = 8  # an x8 card
    assert "pcie_link_downtrained" not in {f.code for f in analyze(doc)}


def test_a_driver_maximum_below_x16_is_a_capped_slot() -> None:
    doc = reports.report(telemetry=False)
    doc["gpus"][0]["pcie"]["load"] = None
    doc["gpus"][0]["snapshots"]["start"]["pcie"] = {"max_width": 8, "max_gen": 5, "device_max_gen": 5}
    (cap,) = only(analyze(doc), "pcie_link_cap_limited")
    assert cap.severity == "fail"
    assert (
        cap.message
        == "the driver reports a maximum link width of x8 (expected x16): slot, riser or bifurcation"
    )


def test_h2d_outlier_against_the_median_and_its_cause() -> None:
    doc = reports.report()
    doc["gpus"][2]["bench"]["h2d_gbps"].update(default=27.7, local=27.7)
    (h2d,) = only(analyze(doc), "h2d_bandwidth_outlier")
    assert h2d.message == "H2D 27.7 GB/s, 0.50 × the median of 4 cards (55.4 GB/s)"
    reports.with_series(doc, 2, pcie_width=8)
    (h2d,) = only(analyze(doc), "h2d_bandwidth_outlier")
    assert h2d.message == "H2D 27.7 GB/s, 0.50 × the median: link at x8 (expected x16)"
    doc["gpus"][2]["bench"]["h2d_gbps"].update(default=50.0, local=50.0)  # 0.90 x: within DCGM's derating
    assert not only(analyze(doc), "h2d_bandwidth_outlier")


def test_h2d_with_too_few_peers_uses_the_generations_expectation() -> None:
    doc = reports.report(n_gpus=2)
    doc["gpus"][1]["bench"]["h2d_gbps"].update(default=30.0, local=30.0)
    (h2d,) = only(analyze(doc), "h2d_bandwidth_outlier")
    assert h2d.message == "H2D 30.0 GB/s, 0.55 × the 55 GB/s expected of a Gen5 x16 link"
    assert h2d.evidence["peer_median_gbps"] is None and h2d.evidence["peers"] == 2


def test_h2d_dropping_under_load_warns() -> None:
    doc = reports.report()
    doc["gpus"][0]["bench"]["h2d_gbps"]["under_load"] = 40.0
    for gpu in doc["gpus"]:
        gpu["bench"]["h2d_gbps"]["concurrent"] = 30.0
    findings = analyze(doc)
    assert ("h2d_under_load_drop", "warn", 0) in keys(findings)
    assert ("h2d_under_load_drop", "warn", "host") in keys(findings)
    (host,) = [f for f in only(findings, "h2d_under_load_drop") if f.subject == "host"]
    assert host.message == (
        "H2D to all 4 GPUs at once totals 120.0 GB/s, 0.54 × the 221.6 GB/s they reach one at a time"
    )


def test_numa_misaffinity_when_default_placement_runs_off_node() -> None:
    doc = reports.report()
    doc["gpus"][3]["bench"]["h2d_gbps"]["default"] = 44.5  # the remote figure, 44.3
    (numa,) = only(analyze(doc), "numa_misaffinity")
    assert (numa.severity, numa.subject) == ("warn", 3)
    assert "pin host buffers with numactl" in numa.message
    doc["gpus"][3]["bench"]["h2d_gbps"]["remote"] = 54.0  # no NUMA penalty at all: nothing to say
    assert not only(analyze(doc), "numa_misaffinity")


@pytest.mark.parametrize(
    ("tflops", "expected"),
    [(483.0, None), (470.0, "warn"), (440.0, "fail")],  # 3.4 % below: passes; 6 %: warns; 12 %: fails
)
def test_tflops_outlier(tflops: float, expected: str | None) -> None:
    doc = reports.report()
    doc["gpus"][1]["bench"]["fp16_tflops"] = tflops
    found = {(f.severity, f.subject) for f in only(analyze(doc), "tflops_outlier")}
    assert found == ({(expected, 1)} if expected else set())


def test_vram_bandwidth_against_the_sku_reference_and_the_peers() -> None:
    doc = reports.report()
    doc["gpus"][0]["bench"]["vram_gbps"] = 1000.0  # below 0.75 x 1,480 GB/s (DCGM, RTX PRO 6000)
    doc["gpus"][1]["bench"]["vram_gbps"] = 1350.0  # above the SKU floor, 0.90 x the median
    findings = only(analyze(doc), "vram_bandwidth_low")
    assert {(f.severity, f.subject) for f in findings} == {("fail", 0), ("warn", 1)}
    assert findings[0].message == "VRAM 1,000 GB/s, 0.68 × the 1,480 GB/s reference of this SKU"


def test_compute_errors_and_xids_during_the_run() -> None:
    doc = reports.report()
    doc["gpus"][0]["burn"].update(mismatches=12, nans=2)
    doc["gpus"][1]["xids"] = [
        {"pci": "0000:38:00", "xid": 79, "msg": "fallen off the bus", "during_run": True}
    ]
    doc["gpus"][2]["xids"] = [{"pci": "0000:58:00", "xid": 13, "msg": "old", "during_run": False}]
    findings = only(analyze(doc), "compute_errors")
    assert {(f.severity, f.subject) for f in findings} == {("fail", 0), ("fail", 1)}
    assert findings[0].message == "12 mismatching elements, 2 NaNs (10,000 matmuls checked)"
    assert findings[1].message == "Xid 79 during the run (10,000 matmuls checked)"


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


def test_thresholds_are_one_frozen_object() -> None:
    with pytest.raises(AttributeError):
        THRESHOLDS.h2d_ratio_fail = 0.5  # type: ignore[misc]
    with pytest.raises(TypeError):
        THRESHOLDS.h2d_expected_x16_gbps[4] = 1.0  # type: ignore[index]


def test_short_rows_and_missing_sections_do_not_break_the_analysis() -> None:
    doc = reports.report()
    doc["telemetry"]["gpu_series"]["0"][7] = [70.0, 71]  # cut short
    doc["telemetry"]["gpu_series"]["1"][3] = None
    assert keys(analyze(doc)) >= {("power_capped", "info", 2)}
    (gap,) = analyze({"schema": "gpu-burnin-report", "gpus": [{"index": 0}]})
    assert gap.message == (
        "no samples in the telemetry of every GPU: no claim about throttling can be made for those periods"
    )
