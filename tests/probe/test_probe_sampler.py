"""``--query-gpu`` field discovery, CSV parsing and columnar telemetry on the H200 fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from probe.sampler import (
    FALLBACK_FIELDS,
    GPU_COLUMNS,
    Telemetry,
    convert,
    parse_help_query_gpu,
    parse_query_csv,
    select_fields,
    summarize,
)


@pytest.fixture(scope="module")
def supported(h200_dir: Path) -> set[str]:
    return parse_help_query_gpu((h200_dir / "help-query-gpu.txt").read_text())


def test_help_query_gpu_lists_fields_and_aliases(supported: set[str]) -> None:
    assert {"temperature.gpu", "temperature.gpu.tlimit", "pstate", "pcie.link.width.current"} <= supported
    # Both spellings of the renamed clocks-event fields are listed by driver 580.
    assert {
        "clocks_event_reasons.active",
        "clocks_throttle_reasons.active",
        "clocks.sm",
        "clocks.current.sm",
    } <= supported
    assert "compute_mode" in supported and "0: Default" not in supported
    assert len(supported) > 250


def test_select_fields_prefers_new_names_and_falls_back(supported: set[str]) -> None:
    fields, sources = select_fields(supported)
    assert fields[0] == "index"
    assert sources["clocks_event_mask"] == "clocks_event_reasons.active"
    assert sources["tlimit_c"] == "temperature.gpu.tlimit"
    assert sources["replay"] is None  # not a --query-gpu field at all
    old_fields, old_sources = select_fields(FALLBACK_FIELDS)
    assert old_sources["clocks_event_mask"] == "clocks_throttle_reasons.active"
    assert old_sources["tlimit_c"] is None and "temperature.gpu.tlimit" not in old_fields
    assert old_sources["sm_mhz"] == "clocks.sm"


def test_query_idle_csv_with_header_and_units(h200_dir: Path) -> None:
    (row,) = parse_query_csv((h200_dir / "query-idle.csv").read_text())
    assert row["uuid"] == "GPU-e3344502-c9fc-0416-7091-4a6968e9d3e8"
    assert row["power.draw"] == "79.03 W" and convert("power.draw", row["power.draw"]) == 79.03
    assert convert("clocks.current.sm", row["clocks.current.sm"]) == 345
    assert convert("clocks_event_reasons.active", row["clocks_event_reasons.active"]) == 1
    assert convert("retired_pages.pending", row["retired_pages.pending"]) is None  # [N/A]
    assert row["ecc.mode.current"] == "Enabled"


def test_query_idle_nounits_with_given_fields(h200_dir: Path) -> None:
    header = (h200_dir / "query-idle.csv").read_text().splitlines()[0]
    fields = [f.split(" [")[0].strip() for f in header.split(",")]
    (row,) = parse_query_csv((h200_dir / "query-idle-nounits.csv").read_text(), fields)
    assert convert("power.draw", row["power.draw"]) == 79.04
    assert convert("enforced.power.limit", row["enforced.power.limit"]) == 700.0
    assert convert("clocks.max.sm", row["clocks.max.sm"]) == 1980
    assert convert("temperature.memory", row["temperature.memory"]) == 41
    assert convert("pcie.link.width.max", row["pcie.link.width.max"]) == 16


def test_convert_special_values() -> None:
    assert (
        convert("pstate", "P0") == 0 and convert("pstate", "P8") == 8 and convert("pstate", "[N/A]") is None
    )
    assert convert("clocks_event_reasons.active", "0x0000000000000004") == 4
    assert convert("power.draw", "[Not Supported]") is None


def test_telemetry_load_capture_into_columns_and_summary(h200_dir: Path) -> None:
    """Replay the 115 samples of telemetry-load.csv (10 idle, 100 under FP16 GEMM at ~692 W, 5 ramp)."""
    lines = (h200_dir / "telemetry-load.csv").read_text().splitlines()
    names = [n.split(" [")[0].strip() for n in lines[0].split(",")]
    _, sources = select_fields(set(names))
    tel = Telemetry(1.0, names, sources)
    tel.start_clock()
    for i, line in enumerate(lines[1:]):
        assert tel.add(line, tel._t0_mono + i) == 1
    assert tel.samples == 115
    rows = tel.series["0"]
    assert len(rows) == 115 and all(len(r) == len(GPU_COLUMNS) for r in rows)
    first = dict(zip(GPU_COLUMNS, rows[0], strict=True))
    assert first == {
        **first,
        "t_offset_s": 0.0,
        "temp_c": 39,
        "power_w": 79.01,
        "sm_mhz": 345,
        "util_pct": 0,
        "pcie_gen": 5,
        "pcie_width": 16,
        "clocks_event_mask": 1,
        "mem_used_mib": 0,
    }
    loaded = dict(
        zip(GPU_COLUMNS, rows[18], strict=True)
    )  # 21:38:59.037: 60 C, 691.50 W, 1425 MHz, 100 %, mask 0x4
    assert loaded == {
        **loaded,
        "temp_c": 60,
        "power_w": 691.5,
        "sm_mhz": 1425,
        "util_pct": 100,
        "clocks_event_mask": 4,
        "mem_used_mib": 9903,
    }
    summary = summarize(tel, "0")
    assert summary["samples"] == 115
    assert summary["peak_gpu_c"] == 61 and summary["max_w"] == 693.75
    assert summary["mask_seen"] == 0x1 | 0x4
    assert summary["sw_power_cap_fraction"] == round(100 / 115, 4)
    # No pstate column in this capture, so "P0 and >= 80 % utilisation" cannot be established.
    assert summary["loaded_samples"] == 0 and summary["loaded_min_width"] is None
    report = tel.to_report()
    assert report["gpu_columns"] == GPU_COLUMNS and report["samples"] == 115 and report["t0"].endswith("Z")


def test_link_under_load_uses_p0_and_utilisation() -> None:
    """Seed 003: a card trained at x8 only shows it while loaded; idle rows at x16/Gen1 must not mask it."""
    fields = ["index", "pstate", "utilization.gpu", "pcie.link.gen.current", "pcie.link.width.current"]
    _, sources = select_fields(set(fields))
    tel = Telemetry(10.0, fields, sources)
    tel.start_clock()
    for i, line in enumerate(
        [
            "0, P8, 0, 1, 16\n1, P8, 0, 1, 16",
            "0, P0, 100, 4, 16\n1, P0, 100, 4, 8",
            "0, P0, 97, 4, 16\n1, P0, 55, 4, 8",
            "0, P0, 99, 4, 16\n1, P0, 99, 4, 8",
        ]
    ):
        assert tel.add(line, tel._t0_mono + 10 * i) == 2
    good, bad = summarize(tel, "0"), summarize(tel, "1")
    assert (good["loaded_samples"], good["loaded_min_gen"], good["loaded_min_width"]) == (3, 4, 16)
    assert (bad["loaded_samples"], bad["loaded_min_gen"], bad["loaded_min_width"]) == (2, 4, 8)


def test_failures_are_counted_and_bounded() -> None:
    tel = Telemetry(1.0, ["index"], {})
    for i in range(30):
        tel.record_failure(f"error {i % 25}")
    assert tel.failed == 30 and len(tel.errors) == 20


def test_series_follow_the_pci_bus_id_when_numbering_shifts() -> None:
    """If GPU 0 falls off the bus, nvidia-smi renumbers: the former GPU 1 reports as index 0."""
    fields = ["index", "pci.bus_id", "temperature.gpu"]
    _, sources = select_fields(set(fields))
    tel = Telemetry(10.0, fields, sources, {"00000000:18:00.0": 0, "00000000:3B:00.0": 1})
    tel.start_clock()
    assert tel.add("0, 00000000:18:00.0, 40\n1, 00000000:3B:00.0, 50", tel._t0_mono) == 2
    assert tel.add("0, 00000000:3B:00.0, 51", tel._t0_mono + 10) == 1
    assert tel.add("0, 00000000:3B:00.0, 52\n1, 00000000:AF:00.0, 30", tel._t0_mono + 20) == 1
    assert tel.column("0", "temp_c") == [40] and tel.column("1", "temp_c") == [50, 51, 52]
    assert tel.errors == [
        "GPU 00000000:AF:00.0 was not present at the start of the run; its samples are ignored"
    ]
