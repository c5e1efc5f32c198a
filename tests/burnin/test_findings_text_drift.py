"""Drift findings in the reader's language (`burnin.findings_text`): every drift code and variant rendered in
English is the drift module's own message, in German German words with decimal commas; no sentence starts
with its subject or shows a rule code; params that lack a figure read the stored English."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from django.utils import translation

from burnin.analysis.context import Finding
from burnin.analysis.drift import CODE_WORDS, GpuFigures, compare
from burnin.findings_text import _RENDERERS, finding_text
from burnin.rules import DRIFT


def _gpu(index: int, serial: str | None = None) -> GpuFigures:
    serial = serial if serial is not None else f"13240212345{index:02d}"
    return GpuFigures(
        index=index,
        key=serial or f"GPU-uuid-{index}",
        serial=serial,
        component_id=500 + index,
        load_gen=5,
        load_width=16,
        h2d_gbps=27.7,
        tflops=485.0,
        vram_gbps=1416.0,
        peak_temp_c=71.0,
        mean_power_w=450.0,
        run_id=12,
    )


@pytest.fixture(scope="module")
def findings() -> list[Finding]:
    """Runs that between them yield every drift code and variant, and every code a drift sentence names."""
    base = {g.key: g for g in (_gpu(i) for i in range(6))} | {"GPU-uuid-6": _gpu(6, serial="")}
    base["1324021234505"] = replace(base["1324021234505"], codes=frozenset({"thermal_margin_low"}))
    current = [
        replace(base["1324021234500"], load_width=8, h2d_gbps=13.9),  # link and H2D, variant "link"
        replace(base["1324021234501"], h2d_gbps=23.0, tflops=455.0, vram_gbps=1310.0),
        replace(base["1324021234502"], load_gen=4, peak_temp_c=78.5, mean_power_w=440.0),
        replace(base["1324021234503"], codes=DRIFT.gpu_error_codes | DRIFT.throttle_codes),
        replace(base["1324021234505"], codes=frozenset({"throttling_active", "thermal_margin_low"})),
        replace(base["GPU-uuid-6"], h2d_gbps=12.0),
        replace(_gpu(4, serial="NEW-9"), run_id=40),  # GPU 4 was swapped: its old card is missing
    ]
    found = compare(current=current, baseline=base)
    for host in ({"host_dimm_correctable"}, DRIFT.dimm_ce_codes):
        found += compare(current=current[:1], baseline={}, host_codes=frozenset(host))
    return found


def test_the_runs_cover_every_drift_code_and_variant(findings: list[Finding]) -> None:
    drift = {code for code in _RENDERERS if code.startswith("drift_")}
    assert {f.code for f in findings} == drift
    assert ("drift_h2d", "link") in {(f.code, f.params.get("variant")) for f in findings}
    assert ("drift_h2d", None) in {(f.code, f.params.get("variant")) for f in findings}
    named = {code for f in findings for code in f.params.get("codes", [])}
    assert named == set(CODE_WORDS)
    assert any(f.params.get("uuid") for f in findings)


def test_in_english_every_template_is_the_drift_message(findings: list[Finding]) -> None:
    with translation.override("en"):
        for finding in findings:
            assert finding_text(code=finding.code, params=finding.params, fallback="") == finding.message


def test_no_sentence_starts_with_its_subject_or_shows_a_rule_code(findings: list[Finding]) -> None:
    for language in ("en", "de"):
        with translation.override(language):
            for finding in findings:
                for text in (
                    finding.message,
                    finding_text(code=finding.code, params=finding.params, fallback=""),
                ):
                    assert text and not re.match(r"(GPUs?|DIMMs?|host)\b", text), text
                    assert not [code for code in set(_RENDERERS) | set(CODE_WORDS) if code in text], text


def test_every_drift_finding_reads_german_in_german(findings: list[Finding]) -> None:
    with translation.override("de"):
        for finding in findings:
            text = finding_text(code=finding.code, params=finding.params, fallback="")
            assert text and text != finding.message, (finding.code, text)
            assert not re.search(r"\d\.\d{1,2}(?!\d)", text), text  # a decimal comma (1.416 groups thousands)
            assert "baseline" not in text and " since " not in text, text
    by_key = {(f.code, f.subject): f for f in findings}

    def german(code: str, subject: int | str) -> str:
        finding = by_key[code, subject]
        with translation.override("de"):
            return finding_text(code=finding.code, params=finding.params, fallback="")

    assert german("drift_h2d", 0) == (
        "H2D 13,9 GB/s, 50 % weniger als die 27,7 GB/s beim Referenzlauf (Seriennummer 1324021234500): "
        "Link mit x8 (beim Referenzlauf x16)"
    )
    assert german("drift_link", 0) == (
        "PCIe-Link unter Last mit x8, beim Referenzlauf noch x16 (Seriennummer 1324021234500)"
    )
    assert german("drift_h2d", 1) == (
        "H2D 23,0 GB/s, 17 % weniger als die 27,7 GB/s beim Referenzlauf (Seriennummer 1324021234501)"
    )
    assert german("drift_vram", 1) == (
        "VRAM 1.310 GB/s, 7,5 % weniger als die 1.416 GB/s beim Referenzlauf (Seriennummer 1324021234501)"
    )
    assert german("drift_thermal", 2) == (
        "Spitze bei 78,5 °C, 7,5 °C über den 71 °C beim Referenzlauf (Seriennummer 1324021234502), "
        "bei 440 W mittlerer Leistung (beim Referenzlauf 450 W)"
    )
    assert (
        german("drift_throttling", 5) == "neu seit dem Referenzlauf (Seriennummer 1324021234505): Drosselung"
    )
    assert german("drift_gpu_missing", 4) == (
        "die Karte des Referenzlaufs (Seriennummer 1324021234504) fehlt in diesem Lauf"
    )
    assert german("drift_h2d", 6).endswith("beim Referenzlauf (UUID GPU-uuid-6)")
    assert german("drift_gpu_errors", 3) == (
        "neu seit dem Referenzlauf (Seriennummer 1324021234503): nicht korrigierbare ECC-Fehler im "
        "GPU-Speicher, fehlgeschlagenes Zeilen-Remapping, Rechenfehler oder Xid-Ereignisse, ein ausstehendes "
        "Zeilen-Remapping und korrigierbare ECC-Fehler im GPU-Speicher"
    )


@pytest.mark.parametrize(
    ("code", "params"),
    [
        ("drift_h2d", {}),
        ("drift_h2d", {"serial": "S1", "h2d_gbps": 13.9, "baseline_gbps": 27.7}),  # no down_pct
        (
            "drift_h2d",
            {"serial": "S1", "h2d_gbps": 13.9, "baseline_gbps": 27.7, "down_pct": 50, "variant": "x"},
        ),
        ("drift_gpu_errors", {"serial": "S1", "codes": ["a_code_from_the_future"]}),
        ("drift_dimm_ecc", {"codes": []}),
        ("drift_gpu_missing", {"uuid": "GPU-1"}),  # no serial key at all
    ],
)
def test_without_a_template_or_a_figure_the_stored_english_sentence_is_read(code: str, params: dict) -> None:
    with translation.override("de"):
        assert finding_text(code=code, params=params, fallback="as it was stored") == "as it was stored"
