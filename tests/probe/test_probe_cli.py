"""Command-line surface: help, usage errors and ``inspect`` against the fake nvidia-smi."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

COMMANDS = ["inspect", "parse-xml", "parse-sel", "burnin", "field-check", "validate", "upload"]


def test_top_level_help_lists_the_commands(run_probe) -> None:
    proc = run_probe(["--help"])
    assert proc.returncode == 0
    for command in COMMANDS:
        assert command in proc.stdout
    assert "_h2d" not in proc.stdout and "Exit codes" in proc.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_has_help(command: str, run_probe) -> None:
    proc = run_probe([command, "--help"])
    assert proc.returncode == 0 and f"python -m probe {command}" in proc.stdout


def test_usage_errors_exit_2(run_probe) -> None:
    assert run_probe([]).returncode == 2
    unknown = run_probe(["frobnicate"])
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1
    assert run_probe(["burnin", "--duration", "5s"]).returncode == 2  # --out missing
    assert (
        run_probe(
            ["upload", "r.json", "--url", "http://x", "--server", "1", "--token", "t", "--max-attempts", "0"]
        ).returncode
        == 2
    )


def test_inspect_prints_gpus_with_sysfs(fake_env: dict, fake_sysfs: Path, run_probe) -> None:
    proc = run_probe(["inspect", "--sysfs-root", str(fake_sysfs)], env=fake_env)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (gpu,) = data["gpus"]
    assert data["driver_version"] == "580.159.04" and gpu["name"] == "NVIDIA H200"
    assert gpu["pcie"]["current_width"] == 16 and gpu["sysfs"]["gpu"]["max_link_speed"] == "32.0 GT/s PCIe"
    assert gpu["topo"] == {"cpu_affinity": "0-15", "numa_affinity": "0", "gpu_numa_id": None}
    assert data["generated_at"].endswith("Z")


def test_inspect_without_nvidia_smi_fails_with_reason(tmp_path: Path, fake_env: dict, run_probe) -> None:
    proc = run_probe(["inspect"], env=dict(fake_env, PATH=str(tmp_path)))
    assert proc.returncode == 1 and "nvidia-smi not found on PATH" in proc.stderr
