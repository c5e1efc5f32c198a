"""A report is bounded by what a server can have (issue #26): at most 16 GPUs, each of the 5 stages once,
604,800 samples per GPU, 64 memory controllers of 64 DIMMs (the schema's `maxItems`, reasons in its
`$comment`s). These cheap structural checks, and the duplicates (a GPU index or serial, a stage), run before
the full validation, so that a costly report is refused without being parsed and validated whole (its time
is measured by `python -m bench burnin_refusals`, not here)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from typing import Any

import pytest

from burnin.services import ingest, upload
from probe.schema import load_schema
from probe.validate import Validator
from tests.burnin.ingest_rig import Rig, _ingest, _seed, counts, encode, make_rig, stored_files
from werkbank.errors import InvalidInput

pytestmark = pytest.mark.django_db


@pytest.fixture
def rig(tenants) -> Rig:
    return make_rig(tenants)


def _with_gpus(report: dict, count: int) -> dict:
    """`count` copies of the report's first GPU, each with its own index and serial."""
    template = report["gpus"][0]
    report["gpus"] = [dict(template, index=i, serial=f"1793024{i:06}") for i in range(count)]
    return report


def test_one_gpu_repeated_10000_times_is_refused_by_its_count_and_stores_nothing(
    rig, django_capture_on_commit_callbacks
):
    report = _seed()
    report["gpus"] = [report["gpus"][0]] * 10_000  # the audit's report: 61 MB of JSON
    raw = encode(report)
    assert len(raw) > 60_000_000 and len(gzip.compress(raw, compresslevel=1)) < 5_000_000
    before = counts()

    response = _ingest(rig, django_capture_on_commit_callbacks, raw=raw)

    assert response.status_code == 400, response.content[:300]
    assert response.json() == {
        "report": ["$.gpus: expected at most 16 items (a server holds at most 16 GPUs), got more than 16."]
    }
    assert counts() == before and stored_files() == []


def test_a_partners_report_of_1000_gpus_for_a_six_gpu_server_is_refused(
    rig, django_capture_on_commit_callbacks
):
    """The audit's case, accepted with a 201 before: past the schema's bound it is a 400; within the bound
    but more GPUs than the server has, the hardware binding (issue #22) refuses it with its 409."""
    before = counts()
    response = _ingest(rig, django_capture_on_commit_callbacks, raw=encode(_with_gpus(_seed(), 1000)))
    assert response.status_code == 400, response.content[:300]
    assert response.json()["report"][0].startswith("$.gpus: expected at most 16 items")

    report = _seed()
    report["gpus"] += [dict(report["gpus"][0], index=i, serial=f"1793024{i:06}") for i in (6, 7)]
    response = _ingest(rig, django_capture_on_commit_callbacks, raw=encode(report))
    assert response.status_code == 409, response.content[:300]
    assert response.json()["code"] == "hardware_mismatch"
    assert "8 GPUs reported, 6 installed." in response.json()["missing"]
    assert counts() == before and stored_files() == []


def _dimms(count: int) -> dict:
    dimm = {"name": "dimm0", "label": None, "ce": 0, "ue": 0}
    return {"name": "mc0", "ce": 0, "ue": 0, "ce_noinfo": 0, "ue_noinfo": 0, "dimms": [dimm] * count}


def _set(path: list[Any], value: Callable[[dict], Any]) -> Callable[[dict], None]:
    def change(report: dict) -> None:
        node = report
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value(report)

    return change


BOUNDS = {
    "gpus": (
        lambda report: _with_gpus(report, 17),
        "$.gpus: expected at most 16 items (a server holds at most 16 GPUs), got more than 16.",
    ),
    "stages": (
        _set(["stages"], lambda report: report["stages"] + report["stages"][:1]),
        "$.stages: expected at most 5 items (each of the probe's 5 stages at most once), got 6.",
    ),
    "series": (
        _set(["telemetry", "gpu_series"], lambda report: {str(i): [] for i in range(17)}),
        "$.telemetry.gpu_series: expected at most 16 properties (one series per GPU), got 17.",
    ),
    "samples": (
        _set(
            ["telemetry", "gpu_series", "2"],
            lambda report: [report["telemetry"]["gpu_series"]["2"][0]] * 604_801,
        ),
        "$.telemetry.gpu_series['2']: expected at most 604800 items (7 days sampled every second), "
        "got 604801.",
    ),
    "controllers": (
        _set(["host_memory", "edac", "mc_start"], lambda report: [_dimms(1)] * 65),
        "$.host_memory.edac.mc_start: expected at most 64 items (a server has at most 64 memory "
        "controllers), got 65.",
    ),
    "dimms": (
        _set(["host_memory", "edac", "mc"], lambda report: [_dimms(2), _dimms(65)]),
        "$.host_memory.edac.mc[1].dimms: expected at most 64 items (at most 64 DIMMs per memory "
        "controller), got 65.",
    ),
}


@pytest.mark.parametrize("case", list(BOUNDS))
def test_each_bound_is_a_400_naming_the_field_and_the_rule_and_the_schema_says_it_too(case):
    change, message = BOUNDS[case]
    report = _seed()
    change(report)
    with pytest.raises(InvalidInput) as refused:
        ingest.parse_report(encode(report))
    assert refused.value.field_message == message
    # The same bound is the schema's, so `python -m probe validate` refuses the report too.
    path, rule = message.split(" (")[0].split(": ")
    if case != "samples":  # the probe's validator reads every row: the fast path below, for them
        assert f"{path}: {rule}" in {
            str(e).split(", got")[0] for e in Validator(load_schema()).errors(report)
        }
    assert f"{path}: {rule}" in {str(e).split(", got")[0] for e in ingest.validation_errors(report)}


def test_a_gpu_index_or_serial_twice_is_refused_before_the_validation_and_na_serials_are_no_serials():
    report = _seed()
    report["gpus"][4]["serial"] = report["gpus"][1]["serial"].lower()
    report["gpus"][4]["thermal"] = "not checked yet"  # a schema error: the duplicate is found first
    with pytest.raises(InvalidInput) as refused:
        ingest.parse_report(encode(report))
    assert refused.value.field_message == (
        f"$.gpus[4].serial: GPU serial {report['gpus'][4]['serial']!r} appears twice."
    )
    geforce = _seed()  # GeForce cards report no serial: "N/A", as many times as there are cards
    for gpu in geforce["gpus"]:
        gpu["serial"] = "N/A"
    assert ingest.parse_report(encode(geforce))["gpus"][5]["serial"] == "N/A"


@pytest.mark.parametrize(
    "text",
    [
        b' \n{ "gpus" : [ 1 , {"a": [2]} ] , "x" : { } , "x" : 3 }\r\n',
        b'{"gpus": []}',
        b'{"gpus": 3, "b": null}',
        b"{}",
        b"[1, 2]",
        b'"text"',
        b'\xef\xbb\xbf{"a": "\xc3\xa4"}',
        b'{"a": 1,}',
        b'{"gpus": [1,]}',
        b'{"gpus": [1 2]}',
        b'{"a": 1} x',
        b'{"a" 1}',
        b"{",
        b"",
        b'{"a": "\xff"}',
    ],
)
def test_the_report_is_parsed_as_json_loads_parses_it(text):
    """The parse that counts the GPUs as it goes gives `json.loads`' document, or its error."""
    try:
        expected: Any = json.loads(text)
    except ValueError as exc:
        expected = f"{type(exc).__name__}: {exc}"
    try:
        got: Any = upload._load(text)
    except ValueError as exc:
        got = f"{type(exc).__name__}: {exc}"
    assert got == expected


def test_the_seed_report_is_parsed_as_json_loads_parses_it():
    raw = encode(_seed())
    assert upload._load(raw) == json.loads(raw)
