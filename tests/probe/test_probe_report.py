"""Report assembly: stages, per-GPU entries, outcome rules, checkpoints and atomic writing."""

from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path

import pytest

from probe import report
from probe.burnin import BurnIn
from probe.nvxml import parse_xml
from probe.schema import load_schema
from probe.sel import parse_line
from probe.validate import Validator


@pytest.fixture(scope="module")
def h200(h200_dir: Path) -> dict:
    return parse_xml((h200_dir / "nvidia-smi-q-idle.xml").read_text())["gpus"][0]


@pytest.fixture(scope="module")
def a100(fixtures_dir: Path) -> dict:
    return parse_xml((fixtures_dir / "gpu" / "telegraf" / "a100-sxm4-v12.xml").read_text())["gpus"][0]


def _entry(start: dict, end: dict | None = None, **kw) -> dict:
    args = {
        "pci_start": None,
        "pci_end": None,
        "topo": None,
        "summary": None,
        "bench": None,
        "burn": None,
        "xids": [],
    }
    args.update(kw)
    return report.gpu_entry(start, end, **args)


def test_stages_first_verdict_wins_and_checkpoint_marks_running() -> None:
    stages = report.Stages()
    stages.begin("inventory")
    stages.end("inventory", "ok")
    stages.end("inventory", "failed", "late")  # ignored: already decided
    stages.skip("bench", "no backend")
    stages.begin("telemetry")
    snap = stages.snapshot("checkpoint written at X")
    assert [(s["name"], s["status"], s["reason"]) for s in snap] == [
        ("inventory", "ok", None),
        ("bench", "skipped", "no backend"),
        ("telemetry", "interrupted", "checkpoint written at X"),
    ]
    assert stages.get("telemetry")["status"] == "running"  # the live record is untouched


def test_gpu_entry_link_under_load_counters_and_thresholds(h200: dict, a100: dict) -> None:
    summary = {
        "samples": 30,
        "peak_gpu_c": 61,
        "min_tlimit_c": 24,
        "peak_mem_c": 70,
        "mean_w": 691.7,
        "max_w": 693.75,
        "mask_seen": 0x4,
        "mask_samples": 30,
        "sw_power_cap_fraction": 0.87,
        "loaded_samples": 20,
        "loaded_min_gen": 5,
        "loaded_min_width": 8,
    }
    end = json.loads(json.dumps(h200))
    end["clocks_event_reasons_counters_us"]["sw_power_cap"] = 25168530
    end["pcie"]["replay_counter"] = 4
    gpu = _entry(h200, end, summary=summary, topo={"cpu_affinity": "0-15", "numa_affinity": "0"})
    assert gpu["pcie"]["load"] == {
        "pstate": "P0",
        "gen": 5,
        "width": 8,
        "max_gen": 5,
        "max_width": 16,
        "device_max_gen": 5,
        "host_max_gen": None,
        "samples": 20,
    }
    assert gpu["pcie"]["replay_counter"] == {"start": 0, "end": 4}
    assert gpu["clocks_events"]["counters_delta_us"]["sw_power_cap"] == 25168530
    assert gpu["clocks_events"]["seen_active"] == ["gpu_idle", "sw_power_cap"]
    assert gpu["thermal"]["peak_gpu_c"] == 61 and gpu["thermal"]["min_tlimit_c"] == 24
    assert gpu["power"] == {"mean_w": 691.7, "max_w": 693.75, "limit_w": 700.0}
    assert gpu["numa_node"] == 0 and gpu["numa_source"] == "nvidia-smi topo"
    old = _entry(a100)
    assert old["thermal"]["thresholds"] == {
        "source": "absolute",
        "shutdown_offset": None,
        "slowdown_offset": None,
        "max_op_offset": None,
        "shutdown_c": 92,
        "slowdown_c": 89,
        "max_op_c": 85,
    }
    assert old["pcie"]["load"] is None and old["clocks_events"]["counters_delta_us"] is None


def test_xids_are_matched_to_their_gpu(h200: dict) -> None:
    xids = [
        {"pci": "0000:00:06", "xid": 79, "during_run": True},
        {"pci": "0000:41:00", "xid": 48, "during_run": True},
    ]
    assert report.xids_for(h200, xids) == [xids[0]]


def test_outcome_rules(h200: dict) -> None:
    ok_gpu = _entry(h200, h200)
    stages_ok = [{"name": "inventory", "status": "ok", "reason": None}]
    assert report.outcome(stages_ok, [ok_gpu], []) == {"status": "ok", "exit_code": 0, "reasons": []}

    xid = {"pci": "0000:00:06", "xid": 79, "msg": "fallen off the bus", "during_run": True}
    with_xid = _entry(h200, h200, xids=[xid], burn={"mismatches": 0, "nans": 2, "cuda_errors": 0})
    result = report.outcome(stages_ok, [with_xid], [])
    assert result["status"] == "failed" and result["exit_code"] == 1
    assert result["reasons"] == ["GPU 0: 2 nans during burn", "GPU 0: Xid [79] during the run"]
    assert with_xid["burn"]["xids"] == [79]

    old_xid = _entry(h200, h200, xids=[dict(xid, during_run=False)])
    assert report.outcome(stages_ok, [old_xid], [])["status"] == "ok"

    grown = json.loads(json.dumps(h200))
    grown["ecc_volatile_uncorrected"] = 2
    assert report.outcome(stages_ok, [_entry(h200, grown)], [])["reasons"] == [
        "GPU 0: uncorrectable ECC errors grew from 0 to 2"
    ]

    ue = parse_line(
        "  41 | 03/02/2023 | 10:00:00 | Memory #0xe2 | Uncorrectable ECC @DIMMA1(CPU1) | Asserted"
    )
    assert report.outcome(stages_ok, [], [dict(ue, during_run=False)])["status"] == "ok"
    assert report.outcome(stages_ok, [], [dict(ue, during_run=True)])["status"] == "failed"

    interrupted = [{"name": "telemetry", "status": "interrupted", "reason": "received SIGINT"}]
    assert report.outcome(interrupted, [ok_gpu], []) == {
        "status": "interrupted",
        "exit_code": 1,
        "reasons": ["stage telemetry interrupted: received SIGINT"],
    }
    failed = [{"name": "bench", "status": "failed", "reason": "boom"}, *interrupted]
    assert report.outcome(failed, [ok_gpu], [])["status"] == "failed"


def test_non_finite_numbers_become_null(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    report.write(str(out), {"a": math.nan, "b": [math.inf, 1.5], "c": {"d": -math.inf}})
    assert json.loads(out.read_text()) == {"a": None, "b": [None, 1.5], "c": {"d": None}}
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temp file left behind


def test_checkpoint_report_is_valid_and_marks_running_stages(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("PATH", "FAKE_NVSMI_FIXTURES", "FAKE_NVSMI_STATE"):
        monkeypatch.setenv(key, fake_env[key])
    run = BurnIn(str(tmp_path / "r.json"), 3600, 10, sysfs_root=str(fake_sysfs))
    run._inventory()
    run.stages.begin("telemetry")
    doc = run.build_report(checkpoint=True)
    assert Validator(load_schema()).errors(doc) == []
    assert doc["probe"]["checkpoint"] is True and doc["probe"]["ended_at"] is None
    telemetry = next(s for s in doc["stages"] if s["name"] == "telemetry")
    assert telemetry["status"] == "interrupted" and "checkpoint written at" in telemetry["reason"]
    assert doc["outcome"]["status"] == "interrupted"
    assert doc["gpus"][0]["serial"] == "1653924121787" and doc["telemetry"] is None
