"""``nvidia-smi -q -x`` parser: every XML fixture, every driver generation, true values from the files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from probe.nvxml import clean, integer, mask_to_reasons, number, parse_xml
from probe.schema import load_schema
from probe.validate import Validator

# Expected values, read off the fixture files by hand.
EXPECTED = {
    "gpu/h200/nvidia-smi-q-idle.xml": {
        "doc": {
            "driver_version": "580.159.04",
            "cuda_version": "13.0",
            "dtd": "nvsmi_device_v13.dtd",
            "attached_gpus": 1,
        },
        "gpu": {
            "index": 0,
            "name": "NVIDIA H200",
            "serial": "1653924121787",
            "uuid": "GPU-e3344502-c9fc-0416-7091-4a6968e9d3e8",
            "pci_bus_id": "00000000:00:06.0",
            "pstate": "P0",
            "pcie": {
                "current_gen": 5,
                "current_width": 16,
                "max_gen": 5,
                "max_width": 16,
                "device_max_gen": 5,
                "host_max_gen": None,
                "device_current_gen": 5,
                "replay_counter": 0,
                "replay_rollover_counter": 0,
            },
            "temp_c": 39,
            "tlimit_c": 48,
            "slowdown_offset_c": -2,
            "shutdown_offset_c": -8,
            "max_op_offset_c": 0,
            "mem_max_offset_c": 0,
            "slowdown_temp_c": None,
            "mem_temp_c": 41,
            "power_w": 79.06,
            "power_instant_w": 78.61,
            "power_limit_w": 700.0,
            "sm_mhz": 345,
            "sm_max_mhz": 1980,
            "clocks_event_reasons_active": ["gpu_idle"],
            "clocks_event_reasons_counters_us": {
                "sw_power_cap": 0,
                "sync_boost": 0,
                "sw_therm_slowdown": 0,
                "hw_therm_slowdown": 0,
                "hw_power_brake": 0,
            },
            "ecc_mode": "Enabled",
            "ecc_volatile_corrected": 0,
            "ecc_volatile_uncorrected": 0,
            "remapped_rows_pending": False,
            "remapped_rows_failure": False,
            "remapped_rows_corrected": 0,
            "fb_total_mib": 143771,
            "vbios_version": "96.00.A5.00.1A",
            "pci_device_id": "233510DE",
        },
    },
    "gpu/telegraf/pro-6000-maxq-blackwell-v13.trimmed.xml": {
        "doc": {
            "driver_version": "590.44.01",
            "cuda_version": "13.1",
            "dtd": "nvsmi_device_v13.dtd",
            "attached_gpus": 1,
        },
        "gpu": {
            "index": 0,
            "name": "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
            "serial": "0123456789012",
            "uuid": "GPU-12345678-aaaa-bbbb-cccc-0123456789ab",
            "pci_bus_id": "00000000:61:00.0",
            "pstate": "P8",
            # A Gen5 card in a Gen4-capped slot, idling at Gen1: current 1, max 4, device 5, host 4.
            "pcie": {
                "current_gen": 1,
                "current_width": 16,
                "max_gen": 4,
                "max_width": 16,
                "device_max_gen": 5,
                "host_max_gen": 4,
                "device_current_gen": 1,
                "replay_counter": 0,
                "replay_rollover_counter": 0,
            },
            "temp_c": 24,
            "tlimit_c": 68,
            "slowdown_offset_c": -2,
            "shutdown_offset_c": -5,
            "max_op_offset_c": 0,
            "mem_max_offset_c": None,
            "slowdown_temp_c": None,
            "mem_temp_c": None,
            "power_w": 3.97,
            "power_instant_w": 3.99,
            "power_limit_w": 300.0,
            "power_max_limit_w": 325.0,
            "sm_mhz": 180,
            "sm_max_mhz": 3090,
            "clocks_event_reasons_active": [],
            "clocks_event_reasons_counters_us": {
                "sw_power_cap": 25483012608,
                "sync_boost": 0,
                "sw_therm_slowdown": 0,
                "hw_therm_slowdown": 0,
                "hw_power_brake": 0,
            },
            "ecc_mode": "Disabled",
            "ecc_volatile_corrected": None,
            "ecc_volatile_uncorrected": None,
            "remapped_rows_pending": False,
            "remapped_rows_failure": False,
            "fan_pct": 30,
        },
    },
    "gpu/telegraf/a100-sxm4-v12.xml": {
        "doc": {
            "driver_version": "535.54.03",
            "cuda_version": "12.2",
            "dtd": "nvsmi_device_v12.dtd",
            "attached_gpus": 4,
        },
        "gpu": {
            "index": 0,
            "minor_number": 1,
            "name": "NVIDIA A100-SXM4-80GB",
            "serial": "1650522003820",
            "uuid": "GPU-513536b6-7d19-9063-b049-1e69664bb298",
            "pci_bus_id": "00000000:01:00.0",
            "pstate": "P0",
            "pcie": {
                "current_gen": 4,
                "current_width": 16,
                "max_gen": 4,
                "max_width": 16,
                "device_max_gen": 4,
                "host_max_gen": 4,
                "device_current_gen": 4,
                "replay_counter": 0,
                "replay_rollover_counter": 0,
            },
            # Driver 535: absolute thresholds, no T.Limit.
            "temp_c": 27,
            "tlimit_c": None,
            "slowdown_offset_c": None,
            "slowdown_temp_c": 89,
            "shutdown_temp_c": 92,
            "max_op_temp_c": 85,
            "mem_max_temp_c": 95,
            "mem_temp_c": 44,
            "power_w": 67.03,
            "power_instant_w": None,
            "power_limit_w": 500.0,
            "sm_mhz": 1275,
            "sm_max_mhz": 1410,
            "util_pct": None,
            "clocks_event_reasons_active": [],
            "clocks_event_reasons_counters_us": None,
            "ecc_mode": "Enabled",
            "ecc_volatile_corrected": 0,
            "ecc_volatile_uncorrected": 0,
            # <remapped_rows>N/A</remapped_rows>
            "remapped_rows_pending": None,
            "remapped_rows_failure": None,
            "remapped_rows_corrected": None,
        },
    },
    "gpu/telegraf/rtx-3090-v12.xml": {
        "doc": {
            "driver_version": "525.147.05",
            "cuda_version": "12.0",
            "dtd": "nvsmi_device_v12.dtd",
            "attached_gpus": 1,
        },
        "gpu": {
            "index": 0,
            "name": "NVIDIA GeForce RTX 3090",
            "serial": None,
            "uuid": "GPU-12345678-aaaa-bbbb-cccc-0123456789ab",
            "pci_bus_id": "00000000:00:10.0",
            "pstate": "P8",
            "pcie": {
                "current_gen": 1,
                "current_width": 16,
                "max_gen": 4,
                "max_width": 16,
                "device_max_gen": 4,
                "host_max_gen": None,
                "device_current_gen": 1,
                "replay_counter": 0,
                "replay_rollover_counter": 0,
            },
            "temp_c": 37,
            "tlimit_c": None,
            "slowdown_temp_c": 95,
            "shutdown_temp_c": 98,
            "max_op_temp_c": 93,
            "target_temp_c": 83,
            "slowdown_offset_c": None,
            # Driver 525: <power_readings>/<power_draw>; <enforced_power_limit> 200 W, not the 350 W default.
            "power_w": 27.23,
            "power_limit_w": 200.0,
            "power_default_limit_w": 350.0,
            "sm_mhz": 0,
            "sm_max_mhz": 2100,
            # <clocks_throttle_reasons> (old tag) with gpu_idle Active.
            "clocks_event_reasons_active": ["gpu_idle"],
            "clocks_event_reasons_counters_us": None,
            "ecc_mode": None,
            "ecc_volatile_corrected": None,
            "ecc_volatile_uncorrected": None,
            "remapped_rows_pending": None,
            "pci_device_id": None,
            "fan_pct": 0,
        },
    },
}

REQUIRED_GPU_FIELDS = {
    "index",
    "name",
    "serial",
    "uuid",
    "pci_bus_id",
    "pstate",
    "pcie",
    "temp_c",
    "tlimit_c",
    "power_w",
    "power_limit_w",
    "sm_mhz",
    "sm_max_mhz",
    "clocks_event_reasons_active",
    "ecc_mode",
    "ecc_volatile_corrected",
    "ecc_volatile_uncorrected",
    "remapped_rows_pending",
}


def test_every_xml_fixture_is_covered(fixtures_dir: Path) -> None:
    found = {str(p.relative_to(fixtures_dir)) for p in fixtures_dir.glob("gpu/**/*.xml")}
    assert found == set(EXPECTED)


@pytest.mark.parametrize("relpath", sorted(EXPECTED))
def test_parse_xml_fixture_values(fixtures_dir: Path, relpath: str) -> None:
    doc = parse_xml((fixtures_dir / relpath).read_text())
    expected = EXPECTED[relpath]
    for key, value in expected["doc"].items():
        assert doc[key] == value, key
    assert len(doc["gpus"]) == 1
    gpu = doc["gpus"][0]
    assert set(gpu) >= REQUIRED_GPU_FIELDS
    assert {"current_gen", "current_width", "max_gen", "max_width", "device_max_gen", "host_max_gen"} <= set(
        gpu["pcie"]
    )
    assert "slowdown_offset_c" in gpu and "slowdown_temp_c" in gpu
    for key, value in expected["gpu"].items():
        assert gpu[key] == value, key
        assert type(gpu[key]) is type(value), key  # 700.0 stays a float, 16 an int


@pytest.mark.parametrize("relpath", sorted(EXPECTED))
def test_parse_xml_cli_prints_normalised_json(fixtures_dir: Path, relpath: str, run_probe) -> None:
    proc = run_probe(["parse-xml", str(fixtures_dir / relpath)])
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed == parse_xml((fixtures_dir / relpath).read_text())
    # The same definition the report uses for its GPU snapshots.
    sub = {"$ref": "#/$defs/nvsmi_document"}
    schema = load_schema()
    assert Validator(schema).errors(printed, sub) == []
    jsonschema.Draft202012Validator({"$defs": schema["$defs"], **sub}).validate(printed)


def test_parse_xml_cli_errors(tmp_path: Path, run_probe) -> None:
    missing = run_probe(["parse-xml", str(tmp_path / "nope.xml")])
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    bad = tmp_path / "bad.xml"
    bad.write_text("<nvidia_smi_log><gpu>")
    proc = run_probe(["parse-xml", str(bad)])
    assert proc.returncode == 1 and "not well-formed XML" in proc.stderr
    other = tmp_path / "other.xml"
    other.write_text("<html/>")
    proc = run_probe(["parse-xml", str(other)])
    assert proc.returncode == 1 and "expected <nvidia_smi_log>" in proc.stderr
    stdin = run_probe(
        ["parse-xml", "-"], stdin="<nvidia_smi_log><driver_version>1</driver_version></nvidia_smi_log>"
    )
    assert stdin.returncode == 0 and json.loads(stdin.stdout)["gpus"] == []


@pytest.mark.parametrize(
    "raw",
    [
        "N/A",
        "[N/A]",
        "[Not Supported]",
        "Not Supported",
        "[Unknown Error]",
        "Requested functionality has been deprecated",
        "",
        "   ",
        None,
    ],
)
def test_null_spellings(raw: str | None) -> None:
    assert clean(raw) is None
    assert number(raw) is None


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("79.06 W", 79.06),
        ("16x", 16),
        ("-8 C", -8),
        ("0 us", 0),
        ("25483012608 us", 25483012608),
        ("3072 bank(s)", 3072),
        ("959 KB/s", 959),
        ("143771 MiB", 143771),
        ("912.500 mV", 912.5),
        ("30 %", 30),
    ],
)
def test_units_are_stripped(raw: str, value: float) -> None:
    assert number(raw) == value and type(number(raw)) is type(value)


def test_integer_and_mask_helpers() -> None:
    assert integer("16x") == 16 and integer("1.5 W") is None and integer("P0") is None
    assert mask_to_reasons(0x4) == ["sw_power_cap"]
    assert mask_to_reasons(0x1 | 0x8 | 0x80) == ["gpu_idle", "hw_slowdown", "hw_power_brake_slowdown"]
    assert mask_to_reasons(None) == []


def test_v11_single_double_bit_ecc_layout() -> None:
    """Pre-Ampere drivers nest ECC counts as single_bit/double_bit with a total."""
    xml = """<nvidia_smi_log><gpu id="00000000:3B:00.0"><ecc_errors><volatile>
      <single_bit><device_memory>3</device_memory><total>5</total></single_bit>
      <double_bit><device_memory>0</device_memory><total>1</total></double_bit>
    </volatile></ecc_errors></gpu></nvidia_smi_log>"""
    gpu = parse_xml(xml)["gpus"][0]
    assert gpu["ecc_volatile_corrected"] == 5 and gpu["ecc_volatile_uncorrected"] == 1
    assert gpu["ecc_volatile_dram_corrected"] == 3 and gpu["ecc_volatile_dram_uncorrected"] == 0
    assert gpu["pci_bus_id"] == "00000000:3B:00.0"  # from the id attribute when <pci> is absent
