"""`manage.py burnin-analyze`: a report file in, the findings out, no database."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from burnin.rules import RULES_VERSION
from tests.burnin.reports_rig import SEED003

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_json_output_lists_the_findings_with_int_gpu_subjects(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("burnin-analyze", str(SEED003), "--json")
    findings = json.loads(capsys.readouterr().out)
    assert {(f["code"], f["severity"], f["subject"]) for f in findings} >= {
        ("pcie_link_downtrained", "fail", 2),
        ("pcie_link_downtrained", "fail", 4),
        ("thermal_margin_low", "warn", 1),
        ("ecc_correlated_periodic", "warn", "DIMMs A1, B1"),
        ("stage_incomplete", "fail", "stage burn"),
    }
    fields = {"code", "severity", "subject", "gpu_index", "message", "params", "evidence", "explained_by"}
    assert all(set(f) == fields for f in findings)
    # The per-DIMM warnings that the correlated pattern explains name it.
    dimm = next(f for f in findings if f["code"] == "host_dimm_correctable")
    assert dimm["explained_by"] == {"code": "ecc_correlated_periodic", "subject": "DIMMs A1, B1"}
    gpu_findings = [f for f in findings if f["code"].startswith(("pcie_", "h2d_", "thermal_", "power_"))]
    assert gpu_findings and all(type(f["subject"]) is int for f in gpu_findings)


def test_platform_generation_option_and_gzip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packed = tmp_path / "report.json.gz"
    packed.write_bytes(gzip.compress(SEED003.read_bytes()))
    call_command("burnin-analyze", str(packed), "--json", "--platform-gen", "4")
    caps = {
        f["severity"] for f in json.loads(capsys.readouterr().out) if f["code"] == "pcie_link_cap_limited"
    }
    assert caps == {"info"}


def test_table_output(capsys: pytest.CaptureFixture[str]) -> None:
    call_command("burnin-analyze", str(SEED003))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["severity", "code", "subject", "message"]
    assert lines[1].split(None, 3) == [
        "fail",
        "stage_incomplete",
        "stage",
        "burn    interrupted: workshop power distribution failure",
    ]
    assert any("GPU 2" in line and "0.50 × the median: link at x8 (expected x16)" in line for line in lines)
    assert lines[-1] == f"5 fail, 10 warn, 7 info (rules {RULES_VERSION})."


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read"),
        (b"{not json", "not JSON"),
        (b"\x1f\x8b\x08\x00broken", "not a readable gzip file"),
        (b'{"schema": "something else"}', "not a probe burn-in report"),
        (b'{"schema": "gpu-burnin-report", "schema_version": "1.0.0"}', "invalid report at $: "),
    ],
)
def test_a_bad_file_is_one_line_and_exit_2(tmp_path: Path, content: bytes | None, says: str) -> None:
    path = tmp_path / "report.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(CommandError) as raised:
        call_command("burnin-analyze", str(path), "--json")
    assert raised.value.returncode == 2
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_a_schema_error_names_its_json_path(tmp_path: Path) -> None:
    report = json.loads(SEED003.read_text())
    report["gpus"][2]["pcie"]["idle"]["width"] = "x8"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    with pytest.raises(
        CommandError, match=r"invalid report at \$\.gpus\[2\]\.pcie\.idle\.width: 'x8' is not"
    ):
        call_command("burnin-analyze", str(path))


def test_from_the_shell_a_bad_file_prints_one_line_on_stderr(tmp_path: Path) -> None:
    """Without a database: the settings point at one that does not exist, and nothing tries to reach it."""
    path = tmp_path / "broken.json"
    path.write_text("[1, 2")
    env = {
        "PATH": "/usr/bin:/bin",
        "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none",
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        [sys.executable, "manage.py", "burnin-analyze", str(path), "--json"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "not JSON" in proc.stderr
    ok = subprocess.run(
        [sys.executable, "manage.py", "burnin-analyze", str(SEED003), "--json"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert len(json.loads(ok.stdout)) == 22


def test_telemetry_rows_are_checked_past_the_first(tmp_path: Path) -> None:
    """The series are checked apart from the schema (for speed), with the same rule and a JSON path."""
    report = json.loads(SEED003.read_text())
    report["telemetry"]["gpu_series"]["3"][5][1] = "hot"
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    with pytest.raises(CommandError) as raised:
        call_command("burnin-analyze", str(path))
    assert str(raised.value).endswith(
        "invalid report at $.telemetry.gpu_series['3'][5][1]: 'hot' is not of type 'number', 'null'"
    )
    report["telemetry"]["gpu_series"]["3"][5] = {"t": 600}
    path.write_text(json.dumps(report))
    with pytest.raises(
        CommandError, match=r"\$\.telemetry\.gpu_series\['3'\]\[5\]: dict is not of type 'array'"
    ):
        call_command("burnin-analyze", str(path))
