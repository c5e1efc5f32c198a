"""The burn-in analysis (burnin.analysis): seed 003, the real H200 captures, and the rules of the links and
the throughput (PCIe, host-to-device bandwidth, NUMA, TFLOPS, VRAM, compute errors) on small reports.

Heat, power, memory errors and the run's completeness: test_analysis_health.py.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from burnin.analysis import RULES_VERSION, Expectations, analyze
from burnin.rules import THRESHOLDS
from probe.schema import load_schema
from probe.validate import Validator
from tests.burnin import reports_rig as reports
from tests.burnin.reports_rig import FIXTURES, SEED003, baseline_notes, keys, only

REPO_ROOT = Path(__file__).resolve().parents[2]


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
