"""Reports for the analysis tests: seed 003's fixture, and a report built from the real H200 captures
(both from tests/burnin/reports_rig.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.burnin.reports_rig import H200, SEED003, build_h200_report
from tests.probe.probe_rig import build_sysfs, parse_sysfs_capture


@pytest.fixture(scope="session")
def seed003_report() -> dict:
    return json.loads(SEED003.read_text())


@pytest.fixture
def h200_report(tmp_path: Path) -> dict:
    """The H200 report; its sysfs is the captured ``sysfs-pci.txt`` (a VM: no upstream port, NUMA -1)."""
    devices = parse_sysfs_capture((H200 / "sysfs-pci.txt").read_text())
    return build_h200_report(build_sysfs(tmp_path / "sys", devices))
