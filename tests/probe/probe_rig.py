"""Helpers of the probe tests: the captured hardware fixtures, a fake ``nvidia-smi``, a fake sysfs, and the
probe's command line run as a process.

The captures live in the repository under ``tests/fixtures/`` (``gpu/h200``, ``gpu/telegraf``, ``bmc``).
tests/probe/conftest.py turns these into fixtures; the burn-in tests use them too.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
FIXTURES_DIR = REPO_ROOT / "tests" / "fixtures"


def parse_sysfs_capture(text: str) -> dict[str, dict[str, str]]:
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


def build_sysfs(root: Path, devices: dict[str, dict[str, str]], parent: str = "pci0000:00") -> Path:
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


def make_fake_env(tmp_path: Path, h200_dir: Path) -> dict[str, str]:
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


def run_probe(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 60, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m probe …`` from the repository root; by default with the checkout on PYTHONPATH."""
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


def add_fake_ipmitool(env: dict[str, str], sel_file: Path) -> Path:
    """Put a fake ``ipmitool`` (tests/probe/fake_ipmitool.py) serving ``sel_file`` on ``env``'s PATH."""
    bin_dir = Path(env["PATH"].split(os.pathsep)[0])
    script = bin_dir / "ipmitool"
    script.write_text(
        f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = 'ipmitool'\n"
        f"runpy.run_path({str(Path(__file__).with_name('fake_ipmitool.py'))!r}, run_name='__main__')\n"
    )
    script.chmod(0o755)
    env["FAKE_IPMITOOL_SEL"] = str(sel_file)
    return script
