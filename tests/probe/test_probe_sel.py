"""BMC SEL parsing: every format in ``bmc/sel_samples.txt`` plus Pre-Init, OEM and ``-c`` records."""

from __future__ import annotations

import json
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import jsonschema
import pytest

from probe.common import UTC
from probe.schema import load_schema
from probe.sel import normalise_dimm, parse_line, parse_sel, parse_sel_info, parse_sel_time
from probe.validate import Validator


@pytest.fixture(scope="module")
def sel_text(fixtures_dir: Path) -> str:
    return (fixtures_dir / "bmc" / "sel_samples.txt").read_text()


def _by_id(events: list[dict]) -> dict[str, dict]:
    return {e["id"]: e for e in events}


def _assert_schema(doc: dict) -> None:
    schema = load_schema()
    sub = {"$ref": "#/$defs/sel_document"}
    assert Validator(schema).errors(doc, sub) == []
    jsonschema.Draft202012Validator({"$defs": schema["$defs"], **sub}).validate(doc)


def test_fixture_file_parses_completely(sel_text: str) -> None:
    doc = parse_sel(sel_text)
    assert doc["unparsed"] == []
    # Fixture A (11 lines), B (2), C (3); the ipmiutil lines of B and D are commented out in the file.
    assert len(doc["events"]) == 16
    assert {e["format"] for e in doc["events"]} == {"pipe"}
    _assert_schema(doc)


def test_fixture_a_periodic_single_dimm(sel_text: str) -> None:
    events = _by_id(parse_sel(sel_text)["events"])
    ce = [e for e in events.values() if e["memory_kind"] == "ce" and e["ts_bmc"].startswith("2015")]
    assert [e["id"] for e in ce] == ["0x18", "0x1a", "0x1b", "0x1c", "0x1d", "0x1e", "0x1f", "0x20"]
    assert {e["dimm"] for e in ce} == {"CPU0_DIMM8"}
    assert sum(e["memory_kind"] == "ce" for e in events.values()) == 10  # plus the two of fixture B
    assert events["0x1b"]["ts_bmc"] == "2015-01-28T06:27:27"
    assert events["0x1b"]["tz"] is None and events["0x1b"]["ts_utc"] is None  # no zone printed, none invented
    assert events["0x1b"]["sensor_type"] == "Memory" and events["0x1b"]["dir"] == "Asserted"
    # The documented 5 h 35 m 46/47 s spacing survives parsing.
    times = [
        datetime.fromisoformat(events[i]["ts_bmc"]) for i in ("0x1b", "0x1c", "0x1d", "0x1e", "0x1f", "0x20")
    ]
    gaps = {int((b - a).total_seconds()) for a, b in pairwise(times)}
    assert gaps == {20146, 20147}
    intrusion = events["0x19"]
    assert (
        intrusion["sensor_type"] == "Physical Security" and intrusion["sensor"] == "Physical Security #0x51"
    )
    assert intrusion["event"] == "General Chassis intrusion" and intrusion["memory_kind"] is None
    assert events["0x17"]["sensor_type"] == "OS Boot" and events["0x17"]["event"] == "C: boot completed"
    vbat = events["0x3e"]  # a threshold line without Asserted/Deasserted keeps its columns
    assert vbat["sensor"] == "VBAT" and vbat["dir"] is None and vbat["extra"] == ["lcr", "7.18", "2.54 Volts"]


def test_fixture_b_two_digit_year_timezone_and_dimm_label(sel_text: str) -> None:
    events = _by_id(parse_sel(sel_text)["events"])
    ev = events["0x3a"]
    assert (
        ev["ts_bmc"] == "2022-12-14T23:09:44" and ev["tz"] == "CET" and ev["ts_utc"] == "2022-12-14T22:09:44Z"
    )
    assert ev["sensor"] == "Memory #0x88" and ev["event"] == "Correctable ECC"
    assert ev["detail"] == "CPU0_G1" and ev["dimm"] == "CPU0_G1" and ev["memory_kind"] == "ce"
    summer = events["0xe"]
    assert summer["tz"] == "CEST" and summer["ts_utc"] == "2022-06-10T17:31:43Z"
    assert summer["event"] == "Correctable ECC" and summer["detail"] is None and summer["dimm"] is None


def test_fixture_c_sdr_sensor_names(sel_text: str) -> None:
    events = _by_id(parse_sel(sel_text)["events"])
    assert events["0x30"]["sensor_type"] == "Power Unit"
    assert events["0x30"]["sensor"] == "Power Unit Pwr Unit Status" and events["0x30"]["dir"] == "Asserted"
    assert events["0x31"]["dir"] == "Deasserted"
    assert events["0x32"]["sensor_type"] == "Management Subsys Health"
    assert events["0x32"]["event"] == "State Asserted"
    assert events["0x30"]["ts_bmc"] == "2019-11-15T18:50:40"


def test_ipmiutil_lines_from_fixture(sel_text: str) -> None:
    lines = [ln[2:] for ln in sel_text.splitlines() if ln.startswith("# 003a ") or ln.startswith("# 7840 ")]
    assert len(lines) == 2
    same_as_b, fixture_d = (parse_line(ln) for ln in lines)
    assert same_as_b["format"] == "ipmiutil" and same_as_b["id"] == "0x3a"
    assert same_as_b["ts_bmc"] == "2022-12-14T23:09:44" and same_as_b["sensor"] == "Memory #88"
    assert same_as_b["event"] == "Correctable ECC" and same_as_b["raw"] == "a0 02 31"
    assert same_as_b["memory_kind"] == "ce"
    assert fixture_d["dimm"] == "P1_DIMMF1" and fixture_d["raw"] == "20 ff 50"
    assert fixture_d["ts_bmc"] == "2011-08-09T15:10:47" and fixture_d["extra"] == [
        "severity=MIN",
        "source=BMC",
    ]


# Lines in the layouts of ipmitool's ipmi_sel_print_std_entry (see probe/sel.py), pipe and -c.
@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "   5 |  Pre-Init  |0000000012| Power Supply #0x51 | Presence detected | Asserted",
            {
                "pre_init": True,
                "bmc_uptime_s": 12,
                "ts_bmc": None,
                "sensor_type": "Power Supply",
                "dir": "Asserted",
                "format": "pipe",
            },
        ),
        (
            "5, Pre-Init ,0000000012,Power Supply #0x51,Presence detected,Asserted",
            {"pre_init": True, "bmc_uptime_s": 12, "event": "Presence detected", "format": "csv"},
        ),
        (
            "  c1 | 01/28/2015 | 06:27:27 | OEM record c1 | 0002a2 | 010203040506",
            {
                "record_type": "oem_timestamped",
                "ts_bmc": "2015-01-28T06:27:27",
                "oem": {
                    "record_type": "c1",
                    "manufacturer_id": "0002a2",
                    "data": "010203040506",
                    "text": None,
                },
            },
        ),
        (
            "  e0 | OEM record e0 | 0102030405060708090a0b0c0d",
            {
                "record_type": "oem_non_timestamped",
                "ts_bmc": None,
                "oem": {
                    "record_type": "e0",
                    "manufacturer_id": None,
                    "data": "0102030405060708090a0b0c0d",
                    "text": None,
                },
            },
        ),
        (
            "e0,,,OEM record e0,0102030405060708090a0b0c0d",
            {"record_type": "oem_non_timestamped", "format": "csv"},
        ),
        ("  f0 | Linux kernel panic: Fatal excep", {"record_type": "kernel_panic", "event": "Fatal excep"}),
        (
            "3a,12/14/22,23:09:44 CET,Memory #0x88,Correctable ECC (CPU0_G1),Asserted",
            {"format": "csv", "ts_utc": "2022-12-14T22:09:44Z", "dimm": "CPU0_G1", "memory_kind": "ce"},
        ),
        (
            "1b,01/28/2015,06:27:27,Memory,Correctable ECC,Asserted,CPU 0 DIMM 8",
            {"format": "csv", "dimm": "CPU0_DIMM8", "extra": ["CPU 0 DIMM 8"]},
        ),
        (
            "  41 | 03/02/23 | 10:00:00 UTC | Memory #0xe2 | Uncorrectable ECC @DIMMA1(CPU1) | Asserted",
            {
                "memory_kind": "ue",
                "dimm": "CPU1_DIMMA1",
                "ts_utc": "2023-03-02T10:00:00Z",
                "event": "Uncorrectable ECC",
            },
        ),
        (
            "  42 | 03/02/2023 | 10:00:01 | Memory #0x01 | Correctable ECC logging limit reached | Asserted",
            {"memory_kind": "ce_logging_limit"},
        ),
        (
            "  43 | 03/02/2023 | 10:00:02 | Temperature CPU1 Temp | Upper Critical going high | Asserted | "
            "Reading 95 > Threshold 90 degrees C",
            {
                "sensor_type": "Temperature",
                "extra": ["Reading 95 > Threshold 90 degrees C"],
                "memory_kind": None,
            },
        ),
    ],
)
def test_ipmitool_record_layouts(line: str, expected: dict) -> None:
    ev = parse_line(line)
    assert ev is not None
    for key, value in expected.items():
        assert ev[key] == value, key


def test_garbage_is_reported_not_dropped() -> None:
    doc = parse_sel("SEL has no entries\n  zz | nonsense\n# comment\n\n")
    assert doc["events"] == []
    assert doc["unparsed"] == ["SEL has no entries", "  zz | nonsense"]


def test_dimm_normalisation() -> None:
    assert normalise_dimm("@DIMMA1(CPU1)") == "CPU1_DIMMA1"
    assert normalise_dimm("CPU 0 DIMM 8") == "CPU0_DIMM8"
    assert normalise_dimm("CPU0_G1") == "CPU0_G1"
    assert normalise_dimm("") is None and normalise_dimm(None) is None


def test_sel_info_and_time() -> None:
    info = parse_sel_info(
        "SEL Information\nVersion          : 1.5 (v1.5, v2 compliant)\nEntries          : 54\n"
        "Free Space       : 15440 bytes\nOverflow         : false\n"
    )
    assert info == {"entries": 54, "overflow": False}
    assert parse_sel_time("12/14/2022 23:09:44 UTC\n") == datetime(2022, 12, 14, 23, 9, 44, tzinfo=UTC)
    assert parse_sel_time("12/14/22 23:09:44 CET") == datetime(2022, 12, 14, 22, 9, 44, tzinfo=UTC)
    assert parse_sel_time("garbage") is None


def test_parse_sel_cli(fixtures_dir: Path, sel_text: str, run_probe) -> None:
    proc = run_probe(["parse-sel", str(fixtures_dir / "bmc" / "sel_samples.txt")])
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == parse_sel(sel_text)
    csv_proc = run_probe(
        ["parse-sel", "-"], stdin="3a,12/14/22,23:09:44 CET,Memory #0x88,Correctable ECC (CPU0_G1),Asserted\n"
    )
    (event,) = json.loads(csv_proc.stdout)["events"]
    assert event["format"] == "csv" and event["dimm"] == "CPU0_G1"
    assert run_probe(["parse-sel", "/nonexistent/sel.txt"]).returncode == 2
