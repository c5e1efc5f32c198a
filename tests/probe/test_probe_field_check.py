"""``python -m probe field-check``: a time-boxed burn-in with purpose field_check and the BMC SEL since the
last run, on the fake nvidia-smi (and a fake ipmitool); the time box with a scripted load backend."""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from probe import load
from probe.fieldcheck import FieldCheck
from probe.schema import load_schema
from probe.validate import Validator
from tests.probe import probe_rig
from tests.probe.test_probe_load import FakeOps, H200Ops

SEL_WEEK_1 = [
    "17 | 01/27/2015 | 11:31:21 | OS Boot | C: boot completed | Asserted",
    "18 | 01/27/2015 | 11:41:08 | Memory | Correctable ECC | Asserted | CPU 0 DIMM 8",
    "19 | 01/27/2015 | 12:07:14 | Physical Security #0x51 | General Chassis intrusion | Asserted",
]
SEL_WEEK_2 = [
    "1a | 02/03/2015 | 17:37:46 | Memory | Correctable ECC | Asserted | CPU 0 DIMM 8",
    "1b | 02/04/2015 | 06:27:27 | Memory | Correctable ECC | Asserted | CPU 0 DIMM 8",
]


def _assert_valid(report: dict) -> None:
    assert [str(e) for e in Validator(load_schema()).errors(report)] == []
    jsonschema.Draft202012Validator(load_schema()).validate(report)


def _stages(report: dict) -> dict[str, dict]:
    return {s["name"]: s for s in report["stages"]}


def _field_check(
    run_probe: Any, env: dict, out: Path, sysfs: Path, state: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    args = ["field-check", "--duration", "3s", "--interval", "1s", "--out", str(out), "--force"]
    return run_probe([*args, "--sysfs-root", str(sysfs), "--state-dir", str(state), *extra], env=env)


def test_field_check_writes_a_valid_report_with_purpose_field_check(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, run_probe: Any
) -> None:
    out, state = tmp_path / "field.json", tmp_path / "state"
    state.mkdir()
    started = time.monotonic()
    proc = _field_check(run_probe, fake_env, out, fake_sysfs, state)
    elapsed = time.monotonic() - started

    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    _assert_valid(report)
    validated = run_probe(["validate", str(out)])
    assert validated.returncode == 0 and validated.stdout.strip() == f"{out}: valid (gpu-burnin-report 1.1.0)"
    assert report["purpose"] == "field_check" and report["schema_version"] == "1.1.0"
    params = report["params"]
    assert params["time_box_s"] == 3.0 and params["state_dir"] == str(state)
    # Without a load backend the monitoring gets the burn's share: the time box less the finalize reserve.
    assert params["burn_floor_s"] == 0.6 and 0.6 <= params["duration_s"] <= 3.0
    assert elapsed < 3.0 + 5.0  # the time box plus interpreter start-up and the fake tools
    stages = _stages(report)
    assert stages["bench"]["status"] == stages["burn"]["status"] == "skipped"
    assert [stages[n]["status"] for n in ("inventory", "telemetry", "finalize")] == ["ok"] * 3
    assert report["telemetry"]["samples"] >= 1 and report["gpus"][0]["serial"] == "1653924121787"
    # No ipmitool: no SEL, so no state to save, and the report says why.
    window = report["host_memory"]["sel_window"]
    assert window == {
        "state_file": str(state / "field-check-state.json"),
        "first_run": True,
        "since_id": None,
        "since_ts_utc": None,
        "since_found": None,
        "left_out": 0,
        "saved": False,
    }
    assert {"stage": "sel", "msg": "ipmitool not found on PATH"} in report["probe"]["errors"]
    assert not (state / "field-check-state.json").exists()


def test_the_sel_state_carries_over_so_the_second_run_reports_only_new_events(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, run_probe: Any
) -> None:
    sel_file, state, out = tmp_path / "sel.txt", tmp_path / "state", tmp_path / "field.json"
    state.mkdir()
    probe_rig.add_fake_ipmitool(fake_env, sel_file)
    sel_file.write_text("\n".join(SEL_WEEK_1) + "\n")

    first = _field_check(run_probe, fake_env, out, fake_sysfs, state)

    assert first.returncode == 0, first.stderr
    report = json.loads(out.read_text())
    _assert_valid(report)
    events = report["host_memory"]["sel_events"]
    # The first run reports the whole SEL, as history: nothing in it happened during a field check.
    assert [e["id"] for e in events] == ["0x17", "0x18", "0x19"]
    assert [e["during_run"] for e in events] == [False, False, False]
    assert report["host_memory"]["sel_window"]["first_run"] is True
    assert report["host_memory"]["sel_window"]["saved"] is True
    saved = json.loads((state / "field-check-state.json").read_text())
    assert saved["format"] == 1 and saved["sel"]["last"]["id"] == "0x19" and saved["sel"]["entries"] == 3
    assert saved["report"] == str(out)

    # A week later the BMC has logged two correctable DIMM errors.
    sel_file.write_text("\n".join(SEL_WEEK_1 + SEL_WEEK_2) + "\n")

    second = _field_check(run_probe, fake_env, out, fake_sysfs, state)

    assert second.returncode == 0, second.stderr
    report = json.loads(out.read_text())
    _assert_valid(report)
    events = report["host_memory"]["sel_events"]
    assert [(e["id"], e["memory_kind"], e["during_run"]) for e in events] == [
        ("0x1a", "ce", True),
        ("0x1b", "ce", True),
    ]
    window = report["host_memory"]["sel_window"]
    assert window["first_run"] is False and window["since_id"] == "0x19" and window["since_found"] is True
    assert window["left_out"] == 3 and window["saved"] is True
    assert report["host_memory"]["sel_snapshots"][0]["new_events"] == 2
    assert json.loads((state / "field-check-state.json").read_text())["sel"]["last"]["id"] == "0x1b"

    # Nothing new since: the third run reports no event at all.
    third = _field_check(run_probe, fake_env, out, fake_sysfs, state)
    assert third.returncode == 0, third.stderr
    assert json.loads(out.read_text())["host_memory"]["sel_events"] == []


def test_a_cleared_sel_keeps_the_events_after_the_last_one_seen_by_time(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, run_probe: Any
) -> None:
    sel_file, state, out = tmp_path / "sel.txt", tmp_path / "state", tmp_path / "field.json"
    state.mkdir()
    probe_rig.add_fake_ipmitool(fake_env, sel_file)
    sel_file.write_text("\n".join(SEL_WEEK_1) + "\n")
    assert _field_check(run_probe, fake_env, out, fake_sysfs, state).returncode == 0
    # Someone cleared the SEL: the ids start again, one old-dated entry survives, one is new.
    sel_file.write_text(
        "1 | 01/20/2015 | 08:00:00 | OS Boot | C: boot completed | Asserted\n"
        "2 | 02/03/2015 | 17:37:46 | Memory | Correctable ECC | Asserted | CPU 0 DIMM 8\n"
    )

    proc = _field_check(run_probe, fake_env, out, fake_sysfs, state)

    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert [e["id"] for e in report["host_memory"]["sel_events"]] == ["0x2"]
    window = report["host_memory"]["sel_window"]
    assert window["since_found"] is False and window["left_out"] == 1
    assert any("no longer in the SEL" in e["msg"] for e in report["probe"]["errors"])


@pytest.mark.parametrize("kind", ["missing", "unwritable"])
def test_a_missing_or_unwritable_state_dir_is_not_fatal(
    kind: str, tmp_path: Path, fake_env: dict, fake_sysfs: Path, run_probe: Any
) -> None:
    sel_file, out = tmp_path / "sel.txt", tmp_path / "field.json"
    probe_rig.add_fake_ipmitool(fake_env, sel_file)
    sel_file.write_text("\n".join(SEL_WEEK_1) + "\n")
    if kind == "missing":
        state = tmp_path / "no" / "such" / "dir"
    else:
        # A file where the directory's parent should be: mkdir fails even for root (ENOTDIR).
        (tmp_path / "a-file").write_text("")
        state = tmp_path / "a-file" / "state"

    proc = _field_check(run_probe, fake_env, out, fake_sysfs, state)

    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    _assert_valid(report)
    msgs = [e["msg"] for e in report["probe"]["errors"] if e["stage"] == "sel_state"]
    assert msgs[0] == f"state directory {state} does not exist: the whole SEL is reported as history"
    assert msgs[1].startswith(f"cannot write {state / 'field-check-state.json'}: ")
    assert "the next field check reports the whole SEL again" in msgs[1]
    assert report["host_memory"]["sel_window"]["saved"] is False
    assert len(report["host_memory"]["sel_events"]) == 3


def test_a_state_dir_that_is_missing_once_is_created_for_the_next_run(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, run_probe: Any
) -> None:
    sel_file, out, state = tmp_path / "sel.txt", tmp_path / "field.json", tmp_path / "state"
    probe_rig.add_fake_ipmitool(fake_env, sel_file)
    sel_file.write_text("\n".join(SEL_WEEK_1) + "\n")
    assert _field_check(run_probe, fake_env, out, fake_sysfs, state).returncode == 0
    assert json.loads(out.read_text())["host_memory"]["sel_window"]["saved"] is True
    assert json.loads((state / "field-check-state.json").read_text())["sel"]["last"]["id"] == "0x19"


def test_a_corrupt_state_file_reads_as_a_first_run(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, run_probe: Any
) -> None:
    sel_file, out, state = tmp_path / "sel.txt", tmp_path / "field.json", tmp_path / "state"
    state.mkdir()
    (state / "field-check-state.json").write_text("{not json")
    probe_rig.add_fake_ipmitool(fake_env, sel_file)
    sel_file.write_text("\n".join(SEL_WEEK_1) + "\n")
    assert _field_check(run_probe, fake_env, out, fake_sysfs, state).returncode == 0
    report = json.loads(out.read_text())
    assert [e["during_run"] for e in report["host_memory"]["sel_events"]] == [False] * 3
    assert any(e["msg"].startswith("cannot read ") for e in report["probe"]["errors"])
    assert json.loads((state / "field-check-state.json").read_text())["format"] == 1  # repaired


def test_field_check_usage_errors(tmp_path: Path, run_probe: Any) -> None:
    out = tmp_path / "field.json"
    proc = run_probe(["field-check", "--duration", "1s", "--out", str(out)])
    assert proc.returncode == 2 and "--duration must be at least 2s" in proc.stderr
    out.write_text("last week's report")
    proc = run_probe(["field-check", "--duration", "15m", "--out", str(out)])
    assert proc.returncode == 2 and "exists; use --force" in proc.stderr
    assert out.read_text() == "last week's report"


def test_burnin_purpose_post_repair_is_written_and_other_purposes_are_refused(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, run_probe: Any
) -> None:
    out = tmp_path / "repair.json"
    args = ["burnin", "--duration", "1s", "--interval", "1s", "--sysfs-root", str(fake_sysfs)]
    proc = run_probe([*args, "--out", str(out), "--purpose", "post_repair"], env=fake_env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    _assert_valid(report)
    assert report["purpose"] == "post_repair" and "time_box_s" not in report["params"]
    assert "sel_window" not in report["host_memory"]
    # field_check is the field-check command's purpose; burnin does not take it.
    refused = run_probe([*args, "--out", str(tmp_path / "x.json"), "--purpose", "field_check"], env=fake_env)
    assert refused.returncode == 2 and "invalid choice" in refused.stderr


def test_burnin_writes_purpose_burn_in_by_default(sample_report: dict) -> None:
    assert sample_report["purpose"] == "burn_in" and sample_report["schema_version"] == "1.1.0"


def test_reports_of_schema_1_0_0_still_validate(sample_report: dict, fixtures_dir: Path) -> None:
    fixtures = sorted((fixtures_dir / "burnin").glob("*.json"))
    assert fixtures
    for path in fixtures:
        old = json.loads(path.read_text())
        assert old["schema_version"] == "1.0.0" and "purpose" not in old
        _assert_valid(old)
    # A report as the 1.0.0 probe wrote it: no purpose, version 1.0.0.
    legacy = copy.deepcopy(sample_report)
    legacy["schema_version"] = "1.0.0"
    del legacy["purpose"]
    _assert_valid(legacy)
    validator = Validator(load_schema())
    for key, value, where in (
        ("schema_version", "1.2.0", "$.schema_version"),
        ("purpose", "warranty", "$.purpose"),
    ):
        bad = dict(legacy, **{key: value})
        assert [e.path for e in validator.errors(bad)] == [where]


# --- The time box, with a scripted load backend (in process) -------------------------------------------


class SlowCopyOps(FakeOps):
    """Each H2D/D2H measurement takes ``seconds``: a bench that overruns a small time box."""

    def __init__(self, seconds: float) -> None:
        super().__init__(["00000000:00:06.0"])
        self.seconds = seconds

    def copy_bandwidth(self, dev: int) -> tuple[float, float]:
        time.sleep(self.seconds)
        return super().copy_bandwidth(dev)


def _run_in_process(
    tmp_path: Path,
    fake_env: dict,
    fake_sysfs: Path,
    monkeypatch: pytest.MonkeyPatch,
    ops: FakeOps,
    time_box_s: float,
) -> tuple[int, dict, float]:
    for key in ("PATH", "FAKE_NVSMI_FIXTURES", "FAKE_NVSMI_STATE"):
        monkeypatch.setenv(key, fake_env[key])
    monkeypatch.setattr(load, "LOAD_RAMP_S", 0.0)
    monkeypatch.setattr(load, "detect", lambda: load.Backend(True, "torch", "0.0-fake", None, 1, ops))
    out = tmp_path / "field.json"
    started = time.monotonic()
    rc = FieldCheck(str(out), time_box_s, 0.5, state_dir=str(tmp_path), sysfs_root=str(fake_sysfs)).run()
    elapsed = time.monotonic() - started
    report = json.loads(out.read_text())
    _assert_valid(report)
    return rc, report, elapsed


def test_bench_first_then_the_burn_gets_what_remains_of_the_time_box(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch, h200_dir: Path
) -> None:
    measured = json.loads((h200_dir / "load-result.json").read_text())
    rc, report, elapsed = _run_in_process(
        tmp_path, fake_env, fake_sysfs, monkeypatch, H200Ops(measured), time_box_s=4.0
    )
    assert rc == 0, report["outcome"]
    stages = _stages(report)
    assert all(s["status"] == "ok" for s in stages.values()), stages
    bench = report["gpus"][0]["bench"]
    assert bench["h2d_gbps"]["default"] == 54.918 and bench["fp16_tflops"] == 761.55
    assert bench["vram_gbps"] == 4289.4
    # The burn ran for the rest of the box less the finalize reserve (0.4 s), and the whole run fit.
    assert report["params"]["duration_s"] > 2.5 and report["gpus"][0]["burn"]["matmuls_checked"] > 0
    assert elapsed < 4.0 + 1.0


def test_a_bench_that_overruns_its_share_stops_and_the_burn_keeps_its_floor(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Box 5 s: reserve 0.5 s, floor 1 s, so the bench may take ~3.4 s; each copy measurement takes 2 s.
    rc, report, elapsed = _run_in_process(
        tmp_path, fake_env, fake_sysfs, monkeypatch, SlowCopyOps(2.0), time_box_s=5.0
    )
    stages = _stages(report)
    bench_stage = stages["bench"]
    assert bench_stage["status"] == "interrupted"
    assert bench_stage["reason"].startswith("stopped when its share of the run (")
    assert bench_stage["reason"].endswith("s) was spent; not fully measured: GPU 0")
    bench = report["gpus"][0]["bench"]
    assert bench["h2d_gbps"]["default"] == 27.7 and bench["h2d_gbps"]["under_load"] == 27.7
    assert bench["fp16_tflops"] is None and bench["vram_gbps"] is None  # what the box left out
    # The burn still ran, for at least its floor.
    assert stages["burn"]["status"] == "ok" and report["params"]["duration_s"] >= 1.0
    assert report["gpus"][0]["burn"]["matmuls_checked"] > 0
    assert rc == 1 and report["outcome"]["status"] == "interrupted"
    # Over the box by at most the measurement that was running when the share ran out.
    assert elapsed < 5.0 + 2.0 + 1.0


def test_busy_gpus_are_not_loaded_unless_allowed(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch, h200_dir: Path
) -> None:
    busy_dir = tmp_path / "busy-h200"
    shutil.copytree(h200_dir, busy_dir)
    xml = busy_dir / "nvidia-smi-q-idle.xml"
    xml.write_text(xml.read_text().replace("<gpu_util>0 %</gpu_util>", "<gpu_util>97 %</gpu_util>", 1))
    env = dict(fake_env, FAKE_NVSMI_FIXTURES=str(busy_dir))
    ops = FakeOps(["00000000:00:06.0"])

    rc, report, _elapsed = _run_in_process(tmp_path, env, fake_sysfs, monkeypatch, ops, time_box_s=2.0)

    assert rc == 0
    reason = (
        "in use at the start: GPU 0 (97 %) utilisation; a field check does not load busy GPUs "
        "(--allow-busy loads them anyway)"
    )
    stages = _stages(report)
    assert stages["bench"] == {**stages["bench"], "status": "skipped", "reason": reason}
    assert stages["burn"]["reason"] == reason and ops.copy_calls == []

    for key in ("PATH", "FAKE_NVSMI_FIXTURES", "FAKE_NVSMI_STATE"):
        monkeypatch.setenv(key, env[key])
    out = tmp_path / "allowed.json"
    run = FieldCheck(str(out), 2.0, 0.5, state_dir=str(tmp_path), sysfs_root=str(fake_sysfs), allow_busy=True)
    assert run.run() == 0
    assert _stages(json.loads(out.read_text()))["bench"]["status"] == "ok" and ops.copy_calls
