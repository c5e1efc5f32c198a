"""Fixtures for the probe tests: the captured hardware fixtures, a fake ``nvidia-smi`` and a fake sysfs
(built by tests/probe/probe_rig.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.probe import probe_rig

# The probe runs from a checkout (it is copied to GPU servers with scp), so make it importable for the
# in-process tests whatever the working directory or pytest import mode.
if str(probe_rig.REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(probe_rig.REPO_ROOT))


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """``tests/fixtures/`` of this repository."""
    return probe_rig.FIXTURES_DIR


@pytest.fixture(scope="session")
def h200_dir(fixtures_dir: Path) -> Path:
    return fixtures_dir / "gpu" / "h200"


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return probe_rig.REPO_ROOT


@pytest.fixture
def fake_sysfs(tmp_path: Path, h200_dir: Path) -> Path:
    """A sysfs root holding the H200 exactly as captured in ``sysfs-pci.txt`` (a VM: no upstream bridge)."""
    devices = probe_rig.parse_sysfs_capture((h200_dir / "sysfs-pci.txt").read_text())
    assert devices, "sysfs-pci.txt could not be read"
    return probe_rig.build_sysfs(tmp_path / "sys", devices)


@pytest.fixture
def sysfs_builder():
    """``build(root, {bdf: {attr: value}}, parent=...)`` for tests that need other sysfs layouts."""
    return probe_rig.build_sysfs


@pytest.fixture
def fake_env(tmp_path: Path, h200_dir: Path) -> dict[str, str]:
    """Environment for ``python -m probe`` with only the fake ``nvidia-smi`` on PATH (see make_fake_env)."""
    return probe_rig.make_fake_env(tmp_path, h200_dir)


@pytest.fixture(scope="session")
def sample_report(tmp_path_factory: pytest.TempPathFactory, h200_dir: Path) -> dict:
    """A real report from a 2 s fake burn-in, produced once per session (a known-good document)."""
    base = tmp_path_factory.mktemp("sample")
    env = probe_rig.make_fake_env(base, h200_dir)
    sysfs = probe_rig.build_sysfs(
        base / "sys", probe_rig.parse_sysfs_capture((h200_dir / "sysfs-pci.txt").read_text())
    )
    out = base / "report.json"
    proc = probe_rig.run_probe(
        ["burnin", "--duration", "2s", "--interval", "1s", "--out", str(out), "--sysfs-root", str(sysfs)],
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="session")
def run_probe():
    """``run_probe(args, env=None, timeout=60, stdin=None)``: run ``python -m probe …`` from the repo root."""
    return probe_rig.run_probe
