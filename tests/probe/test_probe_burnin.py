"""End-to-end ``python -m probe burnin`` runs against the fake nvidia-smi (no GPU, no torch)."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import jsonschema

from probe.common import gunzip_b64
from probe.schema import load_schema
from probe.validate import Validator


def _assert_valid(report: dict) -> None:
    errors = Validator(load_schema()).errors(report)
    assert errors == [], [str(e) for e in errors]
    jsonschema.Draft202012Validator(load_schema()).validate(report)


def _stage(report: dict, name: str) -> dict:
    return next(s for s in report["stages"] if s["name"] == name)


def test_burnin_with_fake_nvidia_smi_writes_valid_report(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, h200_dir: Path, run_probe
) -> None:
    out = tmp_path / "report.json"
    proc = run_probe(
        [
            "burnin",
            "--duration",
            "5s",
            "--interval",
            "1s",
            "--out",
            str(out),
            "--sysfs-root",
            str(fake_sysfs),
        ],
        env=fake_env,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    _assert_valid(report)
    assert report["schema"] == "gpu-burnin-report" and report["schema_version"] == "1.1.0"
    assert report["params"]["duration_s"] == 5.0 and report["params"]["interval_s"] == 1.0

    # The load stages are skipped, with the reason, because torch and cupy cannot be imported.
    for name in ("bench", "burn"):
        stage = _stage(report, name)
        assert stage["status"] == "skipped"
        assert stage["reason"].startswith("neither torch nor cupy is importable")
        assert "torch is hidden by the test" in stage["reason"]
    assert (
        report["load"]["available"] is False and report["load"]["reason"] == _stage(report, "burn")["reason"]
    )
    for name in ("inventory", "telemetry", "finalize"):
        assert _stage(report, name)["status"] == "ok", _stage(report, name)
    assert report["outcome"] == {"status": "ok", "exit_code": 0, "reasons": []}

    # GPU inventory comes from the H200 XML; sysfs values from the captured sysfs-pci.txt.
    (gpu,) = report["gpus"]
    assert gpu["uuid"] == "GPU-e3344502-c9fc-0416-7091-4a6968e9d3e8"
    assert gpu["serial"] == "1653924121787"
    assert gpu["pci_bus_id"] == "00000000:00:06.0"
    assert gpu["pcie"]["idle"] == {"pstate": "P0", "gen": 5, "width": 16}
    assert gpu["pcie"]["expected"]["gen"] == 5 and gpu["pcie"]["expected"]["width"] == 16
    sysfs_gpu = gpu["pcie"]["sysfs"]["gpu"]
    assert sysfs_gpu["current_link_speed"] == "32.0 GT/s PCIe" and sysfs_gpu["current_gen"] == 5
    assert sysfs_gpu["current_link_width"] == 16 and sysfs_gpu["max_link_width"] == 16
    assert gpu["pcie"]["sysfs"]["upstream"] is None  # the VM's GPU sits directly on the host bridge
    # sysfs says numa_node -1 (VM), so the NUMA node comes from `nvidia-smi topo -m` (topo.txt: 0).
    assert gpu["numa_node"] == 0 and gpu["numa_source"] == "nvidia-smi topo"
    assert gpu["cpu_affinity"] == "0-15"
    assert gpu["thermal"]["thresholds"]["source"] == "tlimit_offsets"
    assert gpu["thermal"]["thresholds"]["slowdown_offset"] == -2
    assert gpu["power"]["limit_w"] == 700.0
    assert gpu["bench"] is None and gpu["burn"] is None

    # Telemetry: columnar rows replayed from telemetry-load.csv (first row: 39 C, 79.01 W, 345 MHz, Gen5 x16).
    tel = report["telemetry"]
    assert tel["gpu_columns"][0] == "t_offset_s"
    rows = tel["gpu_series"]["0"]
    assert 4 <= len(rows) <= 7 and tel["samples"] == len(rows) and tel["samples_failed"] == 0
    first = dict(zip(tel["gpu_columns"], rows[0], strict=True))
    assert first["temp_c"] == 39 and first["power_w"] == 79.01 and first["sm_mhz"] == 345
    assert first["pcie_gen"] == 5 and first["pcie_width"] == 16 and first["clocks_event_mask"] == 1
    assert first["mem_temp_c"] == 41  # from query-idle-nounits.csv
    # temperature.gpu.tlimit is a valid field but absent from the captured CSVs, so it reads null.
    assert first["tlimit_c"] is None and tel["gpu_column_sources"]["tlimit_c"] == "temperature.gpu.tlimit"
    assert tel["gpu_column_sources"]["replay"] is None and first["replay"] is None
    offsets = [r[0] for r in rows]
    assert offsets == sorted(offsets) and offsets[0] < 1.0

    # Sources that are absent are recorded with a reason, never dropped.
    assert report["host"]["bmc"] == {
        **report["host"]["bmc"],
        "available": False,
        "reason": "ipmitool not found on PATH",
    }
    assert report["host"]["tools"]["ipmitool"] is None and report["host"]["tools"]["numactl"] is None
    assert report["host_memory"]["edac"]["present"] is False
    assert "does not exist" in report["host_memory"]["edac"]["reason"]
    assert report["dmesg"]["available"] is False and "dmesg not found on PATH" in report["dmesg"]["reason"]
    stages_with_errors = {e["stage"] for e in report["probe"]["errors"]}
    assert {"sel", "edac", "dmesg", "load"} <= stages_with_errors

    # The raw XML at start and end is embedded, gzip+base64, and is the fixture byte for byte.
    fixture_xml = (h200_dir / "nvidia-smi-q-idle.xml").read_text()
    assert report["raw"]["nvidia_smi_xml"]["encoding"] == "gzip+base64"
    assert gunzip_b64(report["raw"]["nvidia_smi_xml"]["start"]) == fixture_xml
    assert gunzip_b64(report["raw"]["nvidia_smi_xml"]["end"]) == fixture_xml
    assert gpu["snapshots"]["end"]["uuid"] == gpu["uuid"]

    validated = run_probe(["validate", str(out)])
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "valid" in validated.stdout


def test_burnin_without_nvidia_smi_still_writes_report(tmp_path: Path, fake_env: dict, run_probe) -> None:
    env = dict(fake_env, PATH=str(tmp_path / "empty"))
    out = tmp_path / "report.json"
    proc = run_probe(["burnin", "--duration", "2s", "--interval", "1s", "--out", str(out)], env=env)
    assert proc.returncode == 1
    report = json.loads(out.read_text())
    _assert_valid(report)
    inventory = _stage(report, "inventory")
    assert inventory["status"] == "failed"
    assert "nvidia-smi not found on PATH" in inventory["reason"]
    assert all(_stage(report, n)["status"] == "skipped" for n in ("telemetry", "bench", "burn"))
    assert report["outcome"]["status"] == "failed" and report["gpus"] == []


def test_sigterm_mid_run_leaves_valid_report_with_interrupted_stage(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, repo_root: Path
) -> None:
    out = tmp_path / "report.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "probe",
            "burnin",
            "--duration",
            "60s",
            "--interval",
            "1s",
            "--out",
            str(out),
            "--sysfs-root",
            str(fake_sysfs),
            "--verbose",
        ],
        cwd=repo_root,
        env=fake_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True).start()
    deadline = time.monotonic() + 15
    seen = []
    try:
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            seen.append(line)
            if "telemetry sample 2 " in line:
                break
        else:
            raise AssertionError("no telemetry samples within 15 s:\n" + "".join(seen))
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 1
    report = json.loads(out.read_text())
    _assert_valid(report)
    telemetry = _stage(report, "telemetry")
    assert telemetry["status"] == "interrupted" and telemetry["reason"] == "received SIGTERM"
    assert _stage(report, "finalize")["status"] == "ok"  # end snapshots are still taken
    assert report["raw"]["nvidia_smi_xml"]["end"] is not None
    assert report["outcome"]["status"] == "interrupted"
    assert any("SIGTERM" in r for r in report["outcome"]["reasons"])
    assert len(report["telemetry"]["gpu_series"]["0"]) >= 2
    started = report["probe"]["started_at"]
    assert report["probe"]["ended_at"] >= started


def test_bad_duration_and_interval_are_usage_errors(tmp_path: Path, run_probe) -> None:
    out = str(tmp_path / "r.json")
    for args in (["--duration", "7x"], ["--duration", "10s", "--interval", "soon"], ["--duration", "-5"]):
        proc = run_probe(["burnin", *args, "--out", out])
        assert proc.returncode == 2, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1
        assert "invalid duration" in proc.stderr or "invalid" in proc.stderr
    proc = run_probe(["burnin", "--duration", "10s", "--interval", "0", "--out", out])
    assert proc.returncode == 2 and "--interval must be greater than 0" in proc.stderr
    assert not Path(out).exists()
    Path(out).write_text("a finished report")
    proc = run_probe(["burnin", "--duration", "1s", "--out", out])
    assert proc.returncode == 2 and "exists; use --force" in proc.stderr
    assert Path(out).read_text() == "a finished report"


def test_torch_without_cuda_is_reported_as_skipped(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, repo_root: Path, run_probe
) -> None:
    """A torch that imports but has no CUDA device must skip the load stages with that reason."""
    fake = tmp_path / "fake_torch"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(
        "__version__ = '9.9.9+cpu'\n"
        "class cuda:\n"
        "    @staticmethod\n"
        "    def is_available():\n"
        "        return False\n"
    )
    env = dict(fake_env, PYTHONPATH=os.pathsep.join([str(fake), str(repo_root)]))
    out = tmp_path / "report.json"
    proc = run_probe(
        [
            "burnin",
            "--duration",
            "1s",
            "--interval",
            "1s",
            "--out",
            str(out),
            "--sysfs-root",
            str(fake_sysfs),
        ],
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    _assert_valid(report)
    reason = "torch 9.9.9+cpu is importable but torch.cuda.is_available() is False"
    assert _stage(report, "bench") == {**_stage(report, "bench"), "status": "skipped", "reason": reason}
    assert _stage(report, "burn")["reason"] == reason
    assert report["load"]["backend"] == "torch" and report["load"]["backend_version"] == "9.9.9+cpu"


def test_checkpoints_are_written_while_running(
    tmp_path: Path, fake_env: dict, fake_sysfs: Path, run_probe
) -> None:
    out = tmp_path / "report.json"
    proc = run_probe(
        [
            "burnin",
            "--duration",
            "3s",
            "--interval",
            "1s",
            "--checkpoint-interval",
            "1s",
            "--out",
            str(out),
            "--sysfs-root",
            str(fake_sysfs),
        ],
        env=fake_env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("checkpoint written to") >= 2
    report = json.loads(out.read_text())
    _assert_valid(report)
    assert report["probe"]["checkpoint"] is False and report["outcome"]["status"] == "ok"
