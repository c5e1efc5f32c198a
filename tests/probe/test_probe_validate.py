"""The report schema and the stdlib validator, cross-checked against ``jsonschema``."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from probe.schema import SCHEMA_PATH, load_schema
from probe.sel import parse_line
from probe.validate import ValidationError, Validator, check_keywords


def _set(path: list, value) -> Callable[[dict], None]:
    def mutate(doc: dict) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


def _delete(path: list) -> Callable[[dict], None]:
    def mutate(doc: dict) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return mutate


def _add_sel_event(**changes) -> Callable[[dict], None]:
    def mutate(doc: dict) -> None:
        ev = parse_line(
            "  3a | 12/14/22 | 23:09:44 CET | Memory #0x88 | Correctable ECC (CPU0_G1) | Asserted"
        )
        ev["during_run"] = True
        ev.update(changes)
        doc["host_memory"]["sel_events"].append(ev)

    return mutate


# (name, mutation, valid?, expected error paths of the probe validator)
CASES = [
    ("unchanged", lambda d: None, True, set()),
    ("integral float is an integer", _set(["gpus", 0, "telemetry_samples"], 4.0), True, set()),
    ("with a SEL event", _add_sel_event(), True, set()),
    (
        "wrong type deep",
        _set(["gpus", 0, "pcie", "idle", "width"], "16"),
        False,
        {"$.gpus[0].pcie.idle.width"},
    ),
    ("missing field", _delete(["probe", "version"]), False, {"$.probe"}),
    ("missing top-level field", _delete(["stages"]), False, {"$"}),
    ("unexpected field", _set(["host", "colour"], "blue"), False, {"$.host"}),
    ("enum", _set(["stages", 0, "status"], "done"), False, {"$.stages[0].status"}),
    ("const", _set(["schema_version"], "2.0.0"), False, {"$.schema_version"}),
    ("null not allowed", _set(["gpus", 0, "index"], None), False, {"$.gpus[0].index"}),
    ("bool is not an integer", _set(["gpus", 0, "index"], True), False, {"$.gpus[0].index"}),
    ("minimum", _set(["telemetry", "samples"], -1), False, {"$.telemetry.samples"}),
    ("pattern", _set(["probe", "started_at"], "yesterday"), False, {"$.probe.started_at"}),
    ("anyOf", _set(["gpus", 0, "snapshots", "end"], "gone"), False, {"$.gpus[0].snapshots.end"}),
    ("patternProperties", _set(["telemetry", "gpu_series", "gpu0"], []), False, {"$.telemetry.gpu_series"}),
    (
        "items",
        _set(["telemetry", "gpu_series", "0", 0, 1], "hot"),
        False,
        {"$.telemetry.gpu_series['0'][0][1]"},
    ),
    ("minItems", _set(["stages"], []), False, {"$.stages"}),
    (
        "maximum",
        _set(["gpus", 0, "clocks_events", "sw_power_cap_fraction"], 1.5),
        False,
        {"$.gpus[0].clocks_events.sw_power_cap_fraction"},
    ),
    ("SEL id pattern", _add_sel_event(id="58"), False, {"$.host_memory.sel_events[0].id"}),
    (
        "nested nvsmi type",
        _set(["gpus", 0, "snapshots", "start", "pcie", "current_width"], "16x"),
        False,
        {"$.gpus[0].snapshots.start.pcie.current_width"},
    ),
    (
        "several at once",
        lambda d: (_set(["outcome", "exit_code"], 3)(d), _delete(["gpus", 0, "uuid"])(d)),
        False,
        {"$.outcome.exit_code", "$.gpus[0]"},
    ),
]


@pytest.mark.parametrize(("name", "mutate", "valid", "paths"), CASES, ids=[c[0] for c in CASES])
def test_probe_validator_agrees_with_jsonschema(
    sample_report: dict, name: str, mutate, valid: bool, paths: set[str]
) -> None:
    doc = copy.deepcopy(sample_report)
    mutate(doc)
    schema = load_schema()
    ours = Validator(schema).errors(doc)
    theirs = list(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    assert (not ours) is valid, [str(e) for e in ours]
    assert (not theirs) is valid, [e.message for e in theirs]
    assert {e.path for e in ours} == paths
    assert {e.json_path for e in theirs} == paths


def test_error_messages_name_the_json_path(sample_report: dict) -> None:
    doc = copy.deepcopy(sample_report)
    doc["gpus"][0]["pcie"]["idle"]["width"] = "16"
    del doc["probe"]["version"]
    errors = [str(e) for e in Validator(load_schema()).errors(doc)]
    assert "$.gpus[0].pcie.idle.width: expected integer or null, got string" in errors
    assert "$.probe: required property 'version' is missing" in errors


def test_validate_cli(tmp_path: Path, sample_report: dict, run_probe) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(sample_report))
    proc = run_probe(["validate", str(good)])
    assert proc.returncode == 0 and proc.stdout.strip() == f"{good}: valid (gpu-burnin-report 1.1.0)"

    bad = copy.deepcopy(sample_report)
    bad["gpus"][0]["pcie"]["idle"]["width"] = "16"
    del bad["telemetry"]["gpu_columns"]
    bad_file = tmp_path / "bad.json"
    bad_file.write_text(json.dumps(bad))
    proc = run_probe(["validate", str(bad_file)])
    assert proc.returncode == 1
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == f"{bad_file}: invalid (2 errors)"
    assert set(lines[1:]) == {
        "$.gpus[0].pcie.idle.width: expected integer or null, got string",
        "$.telemetry: required property 'gpu_columns' is missing",
    }

    not_json = tmp_path / "broken.json"
    not_json.write_text('{"schema": ')
    proc = run_probe(["validate", str(not_json)])
    assert proc.returncode == 1 and "$: not valid JSON" in proc.stdout
    assert run_probe(["validate", str(tmp_path / "missing.json")]).returncode == 2
    assert run_probe(["validate"]).returncode == 2


def test_schema_is_package_data_and_well_formed() -> None:
    schema = load_schema()
    assert SCHEMA_PATH.name == "report-v1.schema.json" and SCHEMA_PATH.is_file()
    assert json.loads(SCHEMA_PATH.read_text()) == schema
    assert json.loads(resources.files("probe.schema").joinpath("report-v1.schema.json").read_text()) == schema
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema_version"]["enum"] == ["1.0.0", "1.1.0"]
    assert schema["properties"]["purpose"]["enum"] == ["burn_in", "field_check", "post_repair"]
    jsonschema.Draft202012Validator.check_schema(schema)
    check_keywords(schema)  # every keyword used is implemented by probe.validate
    assert load_schema() is not load_schema()  # callers get their own copy


def test_unsupported_keywords_are_refused() -> None:
    with pytest.raises(ValueError, match="unsupported keyword 'uniqueItems'"):
        Validator({"type": "array", "uniqueItems": True})
    with pytest.raises(ValueError, match="unsupported keyword 'if'"):
        check_keywords({"properties": {"a": {"if": {}}}})


def test_validator_semantics_match_jsonschema_on_small_cases() -> None:
    schema = {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "x": {"type": "number", "minimum": 0, "maximum": 1},
            "e": {"enum": [1, "a", None]},
            "c": {"const": 1},
            "s": {"type": "string", "minLength": 2, "pattern": "^a"},
            "o": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
            "a": {"type": "array", "maxItems": 1},
            "m": {"type": "object", "maxProperties": 1},
        },
        "additionalProperties": {"type": "boolean"},
    }
    instances = [
        {"n": 1.0},
        {"n": 1.5},
        {"n": False},
        {"x": True},
        {"x": 2},
        {"e": 1.0},
        {"e": True},
        {"c": 1.0},
        {"c": True},
        {"s": "a"},
        {"s": "ba"},
        {"s": "ab"},
        {"o": 1},
        {"o": 1.5},
        {"a": [1, 2]},
        {"m": {"p": 1}},
        {"m": {"p": 1, "q": 2}},
        {"zzz": 1},
        {"zzz": True},
    ]
    ours, theirs = Validator(schema), jsonschema.Draft202012Validator(schema)
    for inst in instances:
        assert {e.path for e in ours.errors(inst)} == {e.json_path for e in theirs.iter_errors(inst)}, inst
    assert str(ValidationError("$.a", "bad")) == "$.a: bad"
