"""Findings in the reader's language (`burnin.findings_text`, `Finding.text`): every code rendered in English
is the analysis' own message, in German with German words and decimal commas; no sentence starts with its
subject or shows a rule code; a stored row without params reads its English message. Through the API and
the burn-in page: the per-DIMM warnings a correlated pattern explains are linked to it, and a German reader
reads German sentences."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from django.utils import translation

from burnin.analysis import Expectations, Finding, analyze
from burnin.findings_text import _RENDERERS, finding_text
from burnin.models import Finding as FindingRow
from probe.sel import parse_sel
from tests.burnin import reports_rig as reports
from tests.burnin.ingest_rig import Rig, make_rig, post_report, seed003_bytes
from tests.burnin.reports_rig import FIXTURES
from tests.tenants_rig import api_client


def _patched(change: Any, n_gpus: int = 4, telemetry: bool = True) -> dict:
    doc = reports.report(n_gpus, telemetry=telemetry)
    change(doc)
    return doc


def _margins(doc: dict, margins: dict[int, float]) -> None:
    for index, margin in margins.items():
        reports.with_series(doc, index, tlimit_c=lambda i, m=margin: m if i == 30 else 20)


def _reports(seed003: dict) -> list[tuple[dict, Expectations | None]]:
    """Reports that between them yield every code and variant the analysis words."""

    def stage_cut(doc: dict) -> None:
        doc["stages"][1].update(status="interrupted", reason="received SIGTERM")
        doc["stages"][2].update(status="interrupted", reason="received SIGTERM")
        doc["stages"][3].update(status="skipped", reason="not started: run interrupted (received SIGTERM)")
        doc["stages"][4].update(status="failed", reason=None)

    def driver_width(doc: dict) -> None:
        doc["gpus"][0]["pcie"]["load"] = None
        doc["gpus"][0]["snapshots"]["start"]["pcie"] = {"max_width": 8, "max_gen": 5, "device_max_gen": 5}
        doc["gpus"][1]["pcie"]["load"].update(width=8, max_width=8)  # downtrained, and the driver says x8

    def h2d(doc: dict) -> None:
        doc["gpus"][2]["bench"]["h2d_gbps"].update(default=27.7, local=27.7)
        doc["gpus"][0]["bench"]["h2d_gbps"]["under_load"] = 40.0
        doc["gpus"][3]["bench"]["h2d_gbps"]["default"] = 44.5
        for gpu in doc["gpus"]:
            gpu["bench"]["h2d_gbps"]["concurrent"] = 30.0
        doc["gpus"][1]["bench"]["fp16_tflops"] = 470.0
        doc["gpus"][0]["bench"]["vram_gbps"] = 1000.0
        doc["gpus"][3]["bench"]["vram_gbps"] = 1350.0

    def few_peers(doc: dict) -> None:
        doc["gpus"][1]["bench"]["h2d_gbps"].update(default=12.1, local=12.1)
        doc["gpus"][0]["bench"]["h2d_gbps"].update(default=30.0, local=30.0)
        reports.with_series(doc, 0, pcie_width=8)

    def errors(doc: dict) -> None:
        doc["gpus"][0]["burn"].update(mismatches=12, nans=2, reference_nans=1, cuda_errors=1)
        doc["gpus"][1]["xids"] = [{"pci": "0000:38:00", "xid": 79, "msg": "off the bus", "during_run": True}]
        doc["gpus"][1]["burn"]["matmuls_checked"] = None
        doc["gpus"][0]["ecc"]["end"].update(unc_total=1, dram_unc=1)
        doc["gpus"][1]["ecc"]["remap"]["failure"] = True
        doc["gpus"][2]["ecc"]["remap"]["pending"] = True
        doc["gpus"][3]["ecc"]["end"].update(corr_total=7, dram_corr=7)
        doc["gpus"][0]["pcie"]["replay_counter"] = {"start": 3, "end": 8}
        doc["gpus"][1]["pcie"]["aer_correctable"] = {"start": 0, "end": 12000}
        doc["host"]["bmc"]["sel_time_offset_s"] = -95

    def hot(doc: dict) -> None:
        _margins(doc, {0: 3, 1: 0, 2: 4})
        reports.with_series(  # hotter than the others, and slowed down once
            doc, 3, temp_c=lambda i: 80 if i == 7 else 70, clocks_event_mask=lambda i: 0x44 if i == 7 else 0x4
        )

    def throttled(doc: dict) -> None:
        reports.with_series(doc, 2, clocks_event_mask=lambda i: 0x44 if i == 12 else 0x4)
        reports.with_series(doc, 1, clocks_event_mask=lambda i: 0x84 if i in (20, 21) else 0x4)
        reports.with_series(doc, 0, power_w=400.0)
        reports.with_series(doc, 3, power_w=550.0)

    def power_cap_counter(doc: dict) -> None:
        for i, gpu in enumerate(doc["gpus"]):
            gpu["clocks_events"]["sw_power_cap_fraction"] = None
            reports.with_series(doc, i, clocks_event_mask=0)

    def gaps(doc: dict) -> None:
        for series in doc["telemetry"]["gpu_series"].values():
            for row in series[30:]:
                row[0] += 600
        del doc["telemetry"]["gpu_series"]["2"][40]

    sparse = reports.report()
    del sparse["telemetry"]["gpu_series"]["2"][10], sparse["telemetry"]["gpu_series"]["2"][20]

    memory = [
        reports.sel_event(1, "11/29/2026 10:01:00", "C1", "Uncorrectable ECC"),
        reports.sel_event(2, "11/29/2026 10:02:00", "C1"),
        reports.sel_event(3, "11/29/2026 10:06:00", "C1", "Correctable ECC logging limit reached"),
    ]
    strict = []
    for hour in range(0, 20, 4):
        strict.append(reports.sel_event(len(strict) + 1, f"11/29/2026 {hour:02d}:00:00", "A1"))
        strict.append(reports.sel_event(len(strict) + 1, f"11/29/2026 {hour:02d}:17:30", "B1"))
    fixture_a = [
        e
        for e in parse_sel((FIXTURES / "bmc" / "sel_samples.txt").read_text())["events"]
        if (e["ts_bmc"] or "").startswith("2015")
    ]
    zero_edac = reports.report(sel_events=memory)
    gen4 = _patched(
        lambda d: [g["pcie"]["load"].update(gen=4, max_gen=4, host_max_gen=4) for g in d["gpus"]],
        telemetry=False,
    )
    return [
        (seed003, None),
        (seed003, Expectations(platform_max_gen=4)),
        (gen4, Expectations(platform_max_gen=5)),
        (_patched(stage_cut), None),
        (_patched(driver_width, telemetry=False), None),
        (_patched(h2d), None),
        (_patched(few_peers, n_gpus=2), None),
        (_patched(errors), None),
        (_patched(hot), None),
        (_patched(throttled), None),
        (_patched(power_cap_counter), None),
        (_patched(gaps), None),
        (sparse, None),
        (reports.report(telemetry=False), None),
        (zero_edac, None),
        (
            reports.report(
                sel_events=reports.dimm_bursts(
                    "11/29/2026 01:05:41", "11/29/2026 05:35:41", "11/29/2026 09:36:41"
                )
            ),
            None,
        ),
        (reports.report(sel_events=strict), None),
        (reports.report(sel_events=fixture_a), None),
    ]


@pytest.fixture(scope="module")
def findings(seed003_report: dict) -> list[Finding]:
    found = []
    for doc, expectations in _reports(seed003_report):
        found += analyze(doc, expectations=expectations)
    return found


def _variants(findings: list[Finding]) -> set[tuple[str, str | None]]:
    return {(f.code, f.params.get("variant")) for f in findings}


def _subject(finding: Finding) -> str:
    return f"GPU {finding.subject}" if isinstance(finding.subject, int) else str(finding.subject)


def test_the_reports_cover_every_code_the_renderer_knows(findings: list[Finding]) -> None:
    # `burnin_too_short` comes from `burnin.analysis.duration`, applied by the ingest: rendered below. The
    # drift codes come from `burnin.analysis.drift`: tests/burnin/test_findings_text_drift.py.
    drift = {code for code in _RENDERERS if code.startswith("drift_")}
    assert {f.code for f in findings} == set(_RENDERERS) - {"burnin_too_short"} - drift
    assert {
        ("pcie_link_downtrained", None),
        ("pcie_link_downtrained", "driver_width"),
        ("pcie_link_cap_limited", "promised"),
        ("pcie_link_cap_limited", "stated"),
        ("pcie_link_cap_limited", "host"),
        ("pcie_link_cap_limited", "driver_width"),
        ("h2d_bandwidth_outlier", "peers"),
        ("h2d_bandwidth_outlier", "peers_link"),
        ("h2d_bandwidth_outlier", "expected"),
        ("h2d_bandwidth_outlier", "expected_link"),
        ("h2d_under_load_drop", "gpu"),
        ("h2d_under_load_drop", "concurrent"),
        ("vram_bandwidth_low", "reference"),
        ("vram_bandwidth_low", "peers"),
        ("thermal_margin_low", "none"),
        ("thermal_margin_low", "slowdown"),
        ("thermal_margin_low", "low"),
        ("throttling_active", "cool"),
        ("throttling_active", None),
        ("edac_firmware_first_blind", "absent"),
        ("edac_firmware_first_blind", "zero"),
        ("ecc_correlated_periodic", "coincident"),
        ("ecc_correlated_periodic", "period"),
        ("telemetry_gap", "every_gpu"),
        ("telemetry_gap", None),
    } <= _variants(findings)


def test_in_english_every_template_is_the_analysis_message(findings: list[Finding]) -> None:
    with translation.override("en"):
        for finding in findings:
            assert finding_text(code=finding.code, params=finding.params, fallback="") == finding.message


def test_no_sentence_starts_with_its_subject_or_shows_a_rule_code(findings: list[Finding]) -> None:
    codes = set(_RENDERERS)
    for language in ("en", "de"):
        with translation.override(language):
            for finding in findings:
                for text in (
                    finding.message,
                    finding_text(code=finding.code, params=finding.params, fallback=""),
                ):
                    assert text and not text.startswith(_subject(finding)), text
                    assert not re.match(r"(GPUs?|DIMMs?|stages?|host|telemetry)\b", text), text
                    assert "`" not in text, text
                    assert not [code for code in codes if code in text], text


def test_every_finding_reads_german_in_german(findings: list[Finding]) -> None:
    with translation.override("de"):
        for finding in findings:
            text = finding_text(code=finding.code, params=finding.params, fallback="")
            assert text and text != finding.message, (finding.code, text)
            assert not re.search(r"\d\.\d{1,2}(?!\d)", text), text  # a decimal comma (1.480 groups thousands)
    by_key: dict[tuple[str, Any], Finding] = {}
    for finding in findings:  # the first report that has it: seed 003 where it does
        by_key.setdefault((finding.code, finding.subject), finding)

    def german(code: str, subject: Any) -> str:
        finding = by_key[code, subject]
        with translation.override("de"):
            return finding_text(code=finding.code, params=finding.params, fallback="")

    assert (
        german("h2d_bandwidth_outlier", 2) == "H2D 13,9 GB/s, 0,50 × der Median: Link mit x8 (erwartet x16)"
    )
    assert german("pcie_link_downtrained", 2) == "PCIe-Link unter Last mit Gen4 x8 (erwartet Gen4 x16)"
    assert german("thermal_margin_low", "GPUs 0, 1, 2, 3") == (
        "kein Abstand zur Temperaturgrenze bei der Spitze (0 °C bei 70 °C) auf GPU 1, der schlechtesten; "
        "außerdem auf GPU 0 (3 °C), GPU 2 (4 °C), GPU 3 (thermische Drosselung)"
    )
    assert german("stage_incomplete", "stages telemetry, bench, burn") == (
        "abgebrochen: received SIGTERM; burn nicht gestartet"
    )
    assert german("stage_incomplete", "stage finalize") == "fehlgeschlagen: kein Grund aufgezeichnet"
    assert german("ecc_correlated_periodic", "DIMMs A1, B1").startswith(
        "korrigierbare ECC-Fehler in derselben Sekunde, dreimal in Abständen von ~4 h"
    )
    assert (
        german("vram_bandwidth_low", 0) == "VRAM 1.000 GB/s, 0,68 × der Referenz von 1.480 GB/s für diese SKU"
    )
    assert german("compute_errors", 0) == (
        "12 abweichende Elemente, 2 NaNs, 1 NaN im Referenzprodukt, 1 CUDA-Fehler "
        "(10.000 Matrixmultiplikationen geprüft)"
    )
    assert german("host_dimm_uncorrectable", "DIMM C1") == (
        "1 nicht korrigierbarer ECC-Fehler im BMC-Ereignisprotokoll"
    )
    assert german("sel_clock_skew", "host").startswith(
        "die BMC-Uhr weicht -95 s von der UTC-Zeit des Hosts ab"
    )
    assert (
        german("power_capped", 0)
        == "Software-Leistungsbegrenzung in 92 % der Messwerte aktiv (normal bei Volllast)"
    )


def test_the_full_load_finding_of_the_ingest_is_rendered_too() -> None:
    params = {"measured_h": 9.5, "target_h": 72.0}
    with translation.override("en"):
        assert finding_text(code="burnin_too_short", params=params, fallback="") == (
            "full load under all GPUs for 9.5 h; the order promises 72 h"
        )
    with translation.override("de"):
        assert finding_text(code="burnin_too_short", params=params, fallback="") == (
            "Volllast auf allen GPUs für 9,5 h; der Auftrag verspricht 72 h"
        )


@pytest.mark.parametrize(
    ("code", "params"),
    [
        ("h2d_bandwidth_outlier", {}),  # a row stored before findings carried params
        ("h2d_bandwidth_outlier", {"variant": "peers", "h2d_gbps": 13.9}),  # a figure missing
        ("h2d_bandwidth_outlier", {"variant": "sideways", "h2d_gbps": 13.9, "ratio": 0.5}),
        ("pcie_link_cap_limited", {"variant": "host", "gen": 4}),
        ("a_code_from_the_future", {"value": 1}),
        ("stage_incomplete", {"status": "running", "reason": None, "stages": ["burn"], "not_started": []}),
        ("tflops_outlier", None),
    ],
)
def test_without_a_template_the_stored_english_sentence_is_read(code: str, params: Any) -> None:
    with translation.override("de"):
        text = finding_text(code=code, params=params, fallback="GPU 2: as it was stored")
    assert text == "GPU 2: as it was stored"
    with translation.override("de"):
        assert finding_text(code="h2d_bandwidth_outlier", params={}, fallback="old") == "old"
        # A sentence without figures needs no params.
        assert finding_text(code="gpu_row_remap_pending", params={}, fallback="old") == (
            "ein Zeilen-Remapping steht aus: die GPU vor dem Versand zurücksetzen"
        )


def test_the_rows_text_is_rendered_in_the_active_language() -> None:
    row = FindingRow(
        code="tflops_outlier",
        severity="warn",
        subject="GPU 1",
        message="FP16 470.0 TFLOPS, 0.94 × the median of 4 cards (500.0 TFLOPS)",
        params={"tflops": 470.0, "ratio": 0.94, "peers": 4, "median_tflops": 500.0},
    )
    with translation.override("de"):
        assert row.text == "FP16 470,0 TFLOPS, 0,94 × der Median von 4 Karten (500,0 TFLOPS)"
    with translation.override("en"):
        assert row.text == row.message
    old = FindingRow(
        code="tflops_outlier", severity="warn", subject="GPU 1", message="GPU 1: FP16 470.0 TFLOPS"
    )
    with translation.override("de"):  # an old row's stored English, without the subject shown beside it
        assert old.text == "FP16 470.0 TFLOPS"


# --- through the ingest ------------------------------------------------------------------------------------


@pytest.fixture
def ingested(tenants, django_capture_on_commit_callbacks) -> Rig:
    rig = make_rig(tenants)
    with django_capture_on_commit_callbacks(execute=True):
        response = post_report(rig.t.user_p, rig.url(), seed003_bytes())
    assert response.status_code == 201, response.content
    return rig


@pytest.mark.django_db
def test_the_explained_dimm_warnings_are_linked_to_the_pattern_after_an_ingest(ingested: Rig) -> None:
    pattern = FindingRow.objects.get(code="ecc_correlated_periodic")
    dimms = FindingRow.objects.filter(code="host_dimm_correctable").order_by("subject")
    assert [(f.subject, f.explained_by_id) for f in dimms] == [
        ("DIMM A1", pattern.pk),
        ("DIMM B1", pattern.pk),
    ]
    assert set(pattern.explains.all()) == set(dimms)
    assert not FindingRow.objects.exclude(code="host_dimm_correctable").filter(explained_by__isnull=False)
    assert pattern.params["variant"] == "coincident" and dimms[0].params == {"dimm": "A1", "count": 3}
    # The API says which finding explains which. It speaks English to everyone (werkbank.i18n: its texts are
    # part of its contract), so `text` is the English sentence there; `code` and `params` let a client word
    # it in its own language.
    run = pattern.run
    client = api_client(ingested.t.pm)
    detail = client.get(f"/api/v1/burnin/runs/{run.pk}/", HTTP_ACCEPT_LANGUAGE="de")
    assert detail["Content-Language"] == "en"
    by_id = {f["id"]: f for f in detail.json()["findings"]}
    assert by_id[dimms[0].pk]["explained_by"] == pattern.pk and by_id[pattern.pk]["explained_by"] is None
    assert (
        by_id[dimms[0].pk]["text"]
        == by_id[dimms[0].pk]["message"]
        == "3 correctable ECC errors in the BMC event log"
    )
    assert by_id[dimms[0].pk]["params"] == {"dimm": "A1", "count": 3}
    assert all(f["text"] == f["message"] for f in by_id.values() if f["params"])
    listed = client.get("/api/v1/burnin/findings/", {"code": "host_dimm_correctable"}).json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    assert {f["explained_by"] for f in rows if f["code"] == "host_dimm_correctable"} == {pattern.pk}


@pytest.mark.django_db
def test_a_german_reader_reads_the_burn_in_page_in_german(ingested: Rig) -> None:
    client = Client()
    client.force_login(ingested.t.pm)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"
    html = client.get(f"/burnin/servers/{ingested.server.pk}/").content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))
    assert "GPU 2: H2D 13,9 GB/s, 0,50 × der Median: Link mit x8 (erwartet x16)" in text
    assert "Stufe burn: abgebrochen: workshop power distribution failure" in text
    assert "GPU 1: Abstand zur Temperaturgrenze 2 °C bei der Spitze (88 °C)" in text
    assert "DIMM A1: 3 korrigierbare ECC-Fehler im BMC-Ereignisprotokoll" in text
    assert "Erklärt durch den Befund zu DIMMs A1, B1: korrigierbare ECC-Fehler in derselben Sekunde" in text
    assert text.count("Erklärt durch den Befund zu DIMMs A1, B1") == 2
    assert "GPU 2: GPU 2" not in text and "in the BMC event log" not in text
    # The cell flags' titles read the same sentences.
    assert 'title="H2D 13,9 GB/s' in html or 'title="PCIe-Link unter Last mit Gen4 x8' in html
