"""The sample systemd units in probe/systemd/: they parse, their commands are the probe's own commands and
options, the environment file names every variable they use, and ``systemd-analyze verify`` accepts them
where it is installed."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from probe.__main__ import build_parser
from tests.probe.probe_rig import REPO_ROOT

UNITS = REPO_ROOT / "probe" / "systemd"
SERVICE, TIMER = UNITS / "werkbank-field-check.service", UNITS / "werkbank-field-check.timer"
ENV_EXAMPLE = UNITS / "werkbank-probe.env.example"


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """systemd's unit syntax: [Section], Key=Value (a key may repeat), # and ; comments."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for number, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        assert current is not None and sep and key.strip(), f"{path.name}:{number}: not Key=Value: {raw!r}"
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def env_example() -> dict[str, str]:
    pairs = (line.split("=", 1) for line in ENV_EXAMPLE.read_text().splitlines() if "=" in line)
    return {k.strip(): v.strip() for k, v in pairs if not k.lstrip().startswith("#")}


def probe_commands() -> list[list[str]]:
    """The probe's arguments of each ExecStart, with ${VAR} replaced from the environment example."""
    env = env_example()
    commands = []
    for line in parse_unit(SERVICE)["Service"]["ExecStart"]:
        argv = shlex.split(line)
        exe = argv[0].lstrip("-@:+!")  # systemd's prefixes: "-" ignores the exit status
        assert exe.endswith("python3") and argv[1:3] == ["-m", "probe"], line
        used = re.findall(r"\$\{(\w+)\}", line)
        assert set(used) <= set(env), f"{line}: {set(used) - set(env)} not in {ENV_EXAMPLE.name}"
        commands.append([re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], a) for a in argv[3:]])
    return commands


def test_the_service_runs_field_check_then_upload_with_real_options() -> None:
    commands = probe_commands()
    assert [c[0] for c in commands] == ["field-check", "upload"]
    parser = build_parser()
    parsed = []
    for argv in commands:
        try:
            parsed.append(parser.parse_args(argv))
        except SystemExit as exc:  # argparse's answer to an unknown command or option
            pytest.fail(f"python -m probe {' '.join(argv)} is refused by the parser (exit {exc.code})")
    check, upload = parsed
    assert check.duration == 900.0 and check.force and check.state_dir == "/var/lib/werkbank-probe"
    # The upload sends the report the field check wrote, to the server named in the environment file.
    assert upload.file == check.out and upload.url == env_example()["WERKBANK_URL"]
    assert upload.server == env_example()["WERKBANK_SERVER"]
    # The token comes from the environment (WERKBANK_TOKEN), never from the command line.
    assert upload.token is None and "WERKBANK_TOKEN" in env_example()
    service = parse_unit(SERVICE)["Service"]
    assert service["Type"] == ["oneshot"] and service["EnvironmentFile"] == ["/etc/werkbank-probe.env"]
    assert service["StateDirectory"] == ["werkbank-probe"]
    # A measured failure (exit 1) must still be uploaded: the field check's exit status is ignored.
    assert service["ExecStart"][0].startswith("-") and not service["ExecStart"][1].startswith("-")


def test_the_timer_starts_the_service_weekly() -> None:
    timer = parse_unit(TIMER)
    assert timer["Timer"]["Unit"] == [SERVICE.name]
    assert timer["Timer"]["OnCalendar"] == ["Sun *-*-* 03:00:00"]
    assert timer["Timer"]["Persistent"] == ["true"]
    assert timer["Install"]["WantedBy"] == ["timers.target"]


def test_systemd_analyze_verify_accepts_the_units(tmp_path: Path) -> None:
    tool = shutil.which("systemd-analyze")
    if tool is None:
        pytest.skip("systemd-analyze is not installed")
    for unit in (SERVICE, TIMER):
        shutil.copy(unit, tmp_path / unit.name)
    proc = subprocess.run(
        [tool, "verify", str(tmp_path / SERVICE.name), str(tmp_path / TIMER.name)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = proc.stdout + proc.stderr
    # verify only warns (exit 0) about an unknown key; any line naming the units is a complaint.
    assert proc.returncode == 0 and "werkbank-field-check" not in output, output
