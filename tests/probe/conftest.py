"""Fixtures for the probe tests: the captured hardware fixtures, a fake ``nvidia-smi`` and a fake sysfs.

The captures live in the repository under ``tests/fixtures/`` (``gpu/h200``, ``gpu/telegraf``, ``bmc``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES_DIR = REPO_ROOT / "tests" / "fixtures"

# The probe runs from a checkout (it is copied to GPU servers with scp), so make it importable for the
# in-process tests whatever the working directory or pytest import mode.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """``tests/fixtures/`` of this repository."""
    return FIXTURES_DIR


@pytest.fixture(scope="session")
def h200_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "gpu" / "h200"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


def _parse_sysfs_capture(text: str) -> dict[str, dict[str, str]]:
    """Read ``sysfs-pci.txt`` (``/sys/bus/pci/devices/<bdf> speed=… width=… max=… numa=… class=…``)."""
    devices = {}
    for line in text.splitlines():
        match = re.match(
            r"^/sys/bus/pci/devices/(\S+) speed=(.+?) width=(\d+) max=(.+?)x(\d+) numa=(-?\d+) "
            r"class=(\S+)$",
            line.strip(),
        )
        if match:
            bdf, speed, width, max_speed, max_width, numa, cls = match.groups()
            devices[bdf] = {
                "current_link_speed": speed,
                "current_link_width": width,
                "max_link_speed": max_speed,
                "max_link_width": max_width,
                "numa_node": numa,
                "class": cls,
            }
    return devices


def _build_sysfs(root: Path, devices: dict[str, dict[str, str]], parent: str = "pci0000:00") -> Path:
    """Create a minimal sysfs tree: ``devices/<parent>/<bdf>/…`` plus the ``bus/pci/devices`` symlinks."""
    for bdf, attrs in devices.items():
        dev_dir = root / "devices" / parent / bdf
        dev_dir.mkdir(parents=True, exist_ok=True)
        for name, value in attrs.items():
            (dev_dir / name).write_text(value + "\n")
        link_dir = root / "bus" / "pci" / "devices"
        link_dir.mkdir(parents=True, exist_ok=True)
        (link_dir / bdf).symlink_to(dev_dir)
    return root


@pytest.fixture
def fake_sysfs(tmp_path: Path, h200_dir: Path) -> Path:
    """A sysfs root holding the H200 exactly as captured in ``sysfs-pci.txt`` (a VM: no upstream bridge)."""
    devices = _parse_sysfs_capture((h200_dir / "sysfs-pci.txt").read_text())
    assert devices, "sysfs-pci.txt could not be read"
    return _build_sysfs(tmp_path / "sys", devices)


@pytest.fixture
def sysfs_builder():
    """``build(root, {bdf: {attr: value}}, parent=...)`` for tests that need other sysfs layouts."""
    return _build_sysfs


@pytest.fixture
def fake_env(tmp_path: Path, h200_dir: Path) -> dict[str, str]:
    """Environment for ``python -m probe`` with only the fake ``nvidia-smi`` on PATH (see _make_fake_env)."""
    return _make_fake_env(tmp_path, h200_dir)


@pytest.fixture(scope="session")
def sample_report(tmp_path_factory: pytest.TempPathFactory, h200_dir: Path) -> dict:
    """A real report from a 2 s fake burn-in, produced once per session (a known-good document)."""
    base = tmp_path_factory.mktemp("sample")
    env = _make_fake_env(base, h200_dir)
    sysfs = _build_sysfs(base / "sys", _parse_sysfs_capture((h200_dir / "sysfs-pci.txt").read_text()))
    out = base / "report.json"
    proc = _run_probe(
        ["burnin", "--duration", "2s", "--interval", "1s", "--out", str(out), "--sysfs-root", str(sysfs)],
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def _make_fake_env(tmp_path: Path, h200_dir: Path) -> dict[str, str]:
    """Environment for ``python -m probe`` with only the fake ``nvidia-smi`` on PATH.

    No ipmitool, numactl, dmesg or journalctl is reachable, so the report must record those sources as
    unavailable, with the reason. torch and cupy are shadowed by packages that raise ImportError, so the
    load stages are skipped even on a machine where they are installed.
    """
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "nvidia-smi"
    script.write_text(
        f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = 'nvidia-smi'\n"
        f"runpy.run_path({str(Path(__file__).with_name('fake_nvidia_smi.py'))!r}, run_name='__main__')\n"
    )
    script.chmod(0o755)
    # Shadow torch and cupy so the run is the same on a machine that has them installed.
    blocked = tmp_path / "blocked"
    for name in ("torch", "cupy"):
        (blocked / name).mkdir(parents=True)
        (blocked / name / "__init__.py").write_text(f"raise ImportError('{name} is hidden by the test')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CUDA"))}
    env.update(
        PATH=str(bin_dir),
        PYTHONPATH=os.pathsep.join([str(blocked), str(REPO_ROOT)]),
        PYTHONNOUSERSITE="1",
        FAKE_NVSMI_FIXTURES=str(h200_dir),
        FAKE_NVSMI_STATE=str(tmp_path / "nvsmi-calls"),
    )
    return env


def _run_probe(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 60, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    if env is None:
        env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.run(
        [sys.executable, "-m", "probe", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
    )


@pytest.fixture(scope="session")
def run_probe():
    """``run_probe(args, env=None, timeout=60, stdin=None)``: run ``python -m probe …`` from the repo root."""
    return _run_probe
