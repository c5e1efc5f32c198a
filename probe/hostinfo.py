"""Host-side readers: PCIe links from sysfs, NUMA, ``nvidia-smi topo -m``, EDAC, rasdaemon, dmesg, CPU.

Every reader returns data *and* a reason when the source is unavailable, so the report can say why a
value is missing instead of dropping it silently. sysfs paths are resolved under a configurable root
(``--sysfs-root``) so containers and tests can point the probe at a copy of ``/sys``.
"""

from __future__ import annotations

import os
import platform
import re
import socket
import sqlite3
import sys
from pathlib import Path
from typing import Any

from probe.common import run_cmd, which

_BDF_RE = re.compile(r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_SPEED_GEN = {
    "2.5": 1,
    "5.0": 2,
    "5": 2,
    "8.0": 3,
    "8": 3,
    "16.0": 4,
    "16": 4,
    "32.0": 5,
    "32": 5,
    "64.0": 6,
    "64": 6,
}

# Kernel pcie_print_link_status(): "%u.%03u Gb/s available PCIe bandwidth, limited by %s x%d link at %s
# (capable of %u.%03u Gb/s with %s x%d link)".
_LIMITED_RE = re.compile(
    r"(?:pci\s+)?(?P<bdf>[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):\s+"
    r"(?P<avail>[\d.]+) Gb/s available PCIe bandwidth, limited by (?P<speed>[\d.]+ GT/s(?: PCIe)?) "
    r"x(?P<width>\d+) link at (?P<at>\S+) \(capable of (?P<cap>[\d.]+) Gb/s with "
    r"(?P<cap_speed>[\d.]+ GT/s(?: PCIe)?) x(?P<cap_width>\d+) link\)"
)
# NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.
_XID_RE = re.compile(r"NVRM: Xid \(PCI:(?P<bdf>[0-9a-fA-F:.]+)\): (?P<xid>\d+),?\s*(?P<msg>.*)$")
_DMESG_TS_RE = re.compile(r"^\[\s*(?P<ts>\d+\.\d+)\]\s*(?P<msg>.*)$")


def sysfs_bdf(pci_bus_id: str | None) -> str | None:
    """Convert nvidia-smi's ``00000000:18:00.0`` to the sysfs form ``0000:18:00.0``."""
    if not pci_bus_id:
        return None
    domain, _, rest = pci_bus_id.lower().partition(":")
    bdf = f"{domain[-4:].rjust(4, '0')}:{rest}"
    return bdf if _BDF_RE.match(bdf) else None


def speed_to_gen(speed: str | None) -> int | None:
    """``"32.0 GT/s PCIe"`` → 5 (PCIe generation of a link speed string)."""
    if not speed:
        return None
    match = re.match(r"^\s*([\d.]+)\s*GT/s", speed)
    return _SPEED_GEN.get(match.group(1)) if match else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _read_int(path: Path) -> int | None:
    text = _read(path)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def parse_aer(text: str | None) -> int | None:
    """Total from ``aer_dev_correctable`` (``TOTAL_ERR_COR n``)."""
    for line in (text or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "TOTAL_ERR_COR" and parts[1].isdigit():
            return int(parts[1])
    return None


def read_link(dev_dir: Path) -> dict[str, Any]:
    """Link speed/width of one PCI function directory."""
    cur_speed, max_speed = _read(dev_dir / "current_link_speed"), _read(dev_dir / "max_link_speed")
    return {
        "bdf": dev_dir.name,
        "current_link_speed": cur_speed,
        "current_link_width": _read_int(dev_dir / "current_link_width"),
        "max_link_speed": max_speed,
        "max_link_width": _read_int(dev_dir / "max_link_width"),
        "current_gen": speed_to_gen(cur_speed),
        "max_gen": speed_to_gen(max_speed),
        "aer_correctable": parse_aer(_read(dev_dir / "aer_dev_correctable")),
    }


def read_pci(pci_bus_id: str | None, sysfs_root: str = "/sys") -> dict[str, Any]:
    """Read the GPU's own link, its upstream port's link, NUMA node and local CPUs from sysfs.

    The GPU's ``max_link_width`` is its LnkCap: a x16 card in a x8 slot still says 16 here, which is
    why it serves as the *expected* width where nvidia-smi's "max" (device and system) would say 8.
    """
    out: dict[str, Any] = {
        "available": False,
        "reason": None,
        "gpu": None,
        "upstream": None,
        "numa_node": None,
        "cpu_affinity": None,
    }
    bdf = sysfs_bdf(pci_bus_id)
    if bdf is None:
        out["reason"] = f"cannot map PCI bus id {pci_bus_id!r} to a sysfs address"
        return out
    link = Path(sysfs_root) / "bus" / "pci" / "devices" / bdf
    if not link.exists():
        out["reason"] = f"{link} does not exist"
        return out
    dev_dir = link.resolve()
    out["available"] = True
    out["gpu"] = read_link(dev_dir)
    out["gpu"]["bdf"] = bdf
    numa = _read_int(dev_dir / "numa_node")
    out["numa_node"] = numa
    out["cpu_affinity"] = _read(dev_dir / "local_cpulist")
    parent = dev_dir.parent
    # The parent directory is the upstream bridge port unless the GPU hangs directly off a host bridge
    # ("pci0000:00"), as in most VMs.
    if _BDF_RE.match(parent.name):
        out["upstream"] = read_link(parent)
    return out


def numa_nodes(sysfs_root: str = "/sys") -> list[int]:
    """NUMA node ids present on the host (``/sys/devices/system/node/node*``)."""
    base = Path(sysfs_root) / "devices" / "system" / "node"
    nodes = []
    for entry in base.glob("node[0-9]*") if base.is_dir() else []:
        try:
            nodes.append(int(entry.name[4:]))
        except ValueError:
            continue
    return sorted(nodes)


def parse_topo(text: str) -> dict[int, dict[str, str | None]]:
    """Parse ``nvidia-smi topo -m`` into ``{gpu_index: {"cpu_affinity", "numa_affinity", "gpu_numa_id"}}``.

    Cells are tab-separated but padded with extra tabs for alignment, so runs of tabs count as one.
    """
    clean = re.sub(r"\x1b\[[0-9;]*m", "", text)
    header: list[str] | None = None
    rows: dict[int, dict[str, str | None]] = {}
    for line in clean.splitlines():
        cells = [c.strip() for c in re.split(r"\t+", line.strip("\n")) if c.strip() != ""]
        if not cells:
            continue
        if header is None and "CPU Affinity" in cells:
            header = cells
            continue
        match = re.match(r"^GPU(\d+)$", cells[0])
        if header is None or not match:
            continue
        values = dict(zip(header, cells[1:], strict=False))  # trailing empty cells are dropped
        rows[int(match.group(1))] = {
            key: None if values.get(name) in (None, "N/A") else values[name]
            for key, name in (
                ("cpu_affinity", "CPU Affinity"),
                ("numa_affinity", "NUMA Affinity"),
                ("gpu_numa_id", "GPU NUMA ID"),
            )
        }
    return rows


def read_topo() -> dict[str, Any]:
    """Run ``nvidia-smi topo -m``; return parsed rows or the reason it failed."""
    res = run_cmd(["nvidia-smi", "topo", "-m"], timeout=60)
    if not res.ok:
        return {"available": False, "reason": res.error, "gpus": {}}
    return {"available": True, "reason": None, "gpus": parse_topo(res.stdout)}


def read_edac(sysfs_root: str = "/sys") -> dict[str, Any]:
    """Snapshot EDAC memory-controller and per-DIMM CE/UE counters.

    On firmware-first platforms this stays at zero (or is absent) while the BMC logs errors, which is
    why the SEL is the primary source; EDAC is recorded as corroboration.
    """
    base = Path(sysfs_root) / "devices" / "system" / "edac" / "mc"
    if not base.is_dir():
        return {"present": False, "reason": f"{base} does not exist (no EDAC driver loaded)", "mc": []}
    mcs = []
    for mc in sorted(base.glob("mc[0-9]*")):
        dimms = []
        for dimm in sorted(list(mc.glob("dimm[0-9]*")) + list(mc.glob("rank[0-9]*"))):
            dimms.append(
                {
                    "name": dimm.name,
                    "label": _read(dimm / "dimm_label"),
                    "ce": _read_int(dimm / "dimm_ce_count"),
                    "ue": _read_int(dimm / "dimm_ue_count"),
                }
            )
        mcs.append(
            {
                "name": mc.name,
                "ce": _read_int(mc / "ce_count"),
                "ue": _read_int(mc / "ue_count"),
                "ce_noinfo": _read_int(mc / "ce_noinfo_count"),
                "ue_noinfo": _read_int(mc / "ue_noinfo_count"),
                "dimms": dimms,
            }
        )
    if not mcs:
        return {"present": False, "reason": f"{base} has no memory controllers", "mc": []}
    return {"present": True, "reason": None, "mc": mcs}


def read_rasdaemon(db_path: str = "/var/lib/rasdaemon/ras-mc_event.db") -> dict[str, Any]:
    """Count rasdaemon memory-controller events by error type, when its database is readable."""
    path = Path(db_path)
    if not path.exists():
        return {"present": False, "reason": f"{db_path} does not exist", "db": None, "counts": None}
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT err_type, COUNT(*) FROM mc_event GROUP BY err_type").fetchall()
    except sqlite3.Error as exc:
        return {"present": True, "reason": f"cannot read {db_path}: {exc}", "db": db_path, "counts": None}
    return {"present": True, "reason": None, "db": db_path, "counts": {str(k): int(v) for k, v in rows}}


def parse_dmesg(text: str) -> dict[str, list[Any]]:
    """Extract NVIDIA Xid lines, kernel "limited by … link" lines and ``[Hardware Error]`` lines."""
    xid: list[dict[str, Any]] = []
    limited: list[dict[str, Any]] = []
    hw: list[str] = []
    relevant: list[str] = []
    for line in text.splitlines():
        ts_match = _DMESG_TS_RE.match(line.strip())
        t_boot = float(ts_match.group("ts")) if ts_match else None
        match = _XID_RE.search(line)
        if match:
            xid.append(
                {
                    "t_boot_s": t_boot,
                    "pci": match.group("bdf"),
                    "xid": int(match.group("xid")),
                    "msg": match.group("msg").strip(),
                    "line": line.strip(),
                }
            )
            relevant.append(line.strip())
            continue
        match = _LIMITED_RE.search(line)
        if match:
            limited.append(
                {
                    "t_boot_s": t_boot,
                    "bdf": match.group("bdf").lower(),
                    "available_gbps": float(match.group("avail")),
                    "limited_speed": match.group("speed"),
                    "limited_width": int(match.group("width")),
                    "limited_at": match.group("at"),
                    "capable_gbps": float(match.group("cap")),
                    "capable_speed": match.group("cap_speed"),
                    "capable_width": int(match.group("cap_width")),
                    "line": line.strip(),
                }
            )
            relevant.append(line.strip())
            continue
        if "[Hardware Error]" in line:
            hw.append(line.strip())
            relevant.append(line.strip())
        elif "NVRM" in line:
            relevant.append(line.strip())
    return {"xid": xid, "link_limited": limited, "hardware_errors": hw, "relevant": relevant}


def read_dmesg() -> dict[str, Any]:
    """Read the kernel log via ``dmesg`` (or ``journalctl -k`` when dmesg is restricted)."""
    res = run_cmd(["dmesg"], timeout=60)
    if res.ok:
        return {"available": True, "reason": None, "source": "dmesg", "text": res.stdout}
    first_error = res.error
    res = run_cmd(["journalctl", "-k", "-b", "--no-pager", "-o", "short-monotonic"], timeout=60)
    if res.ok:
        return {"available": True, "reason": None, "source": "journalctl -k", "text": res.stdout}
    return {"available": False, "reason": f"{first_error}; {res.error}", "source": None, "text": None}


def cpu_info(sysfs_root: str = "/sys") -> dict[str, Any]:
    """CPU model, socket count and NUMA node count from /proc/cpuinfo and sysfs."""
    model = None
    sockets: set[str] = set()
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model is None:
                    model = value.strip()
                elif key == "physical id":
                    sockets.add(value.strip())
    except OSError:
        pass
    nodes = numa_nodes(sysfs_root)
    return {
        "model": model,
        "sockets": len(sockets) or None,
        "numa_nodes": len(nodes) or None,
        "logical_cpus": os.cpu_count(),
    }


def os_release() -> str | None:
    """``PRETTY_NAME`` from /etc/os-release."""
    try:
        with open("/etc/os-release", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return None


def tool_versions(driver_version: str | None) -> dict[str, str | None]:
    """Versions of helper tools (null = not found), as in burnin.md §5 ``host.tools``."""
    tools: dict[str, str | None] = {}
    tools["nvidia-smi"] = driver_version if which("nvidia-smi") else None
    for name, argv in (
        ("ipmitool", ["ipmitool", "-V"]),
        ("numactl", ["numactl", "--show"]),
        ("dcgmi", ["dcgmi", "--version"]),
        ("nvbandwidth", ["nvbandwidth", "--help"]),
    ):
        if not which(name):
            tools[name] = None
            continue
        res = run_cmd(argv, timeout=20)
        version = re.search(r"(\d+\.\d+(?:\.\d+)*)", res.stdout or "") if name != "numactl" else None
        tools[name] = version.group(1) if version else "present"
    return tools


def host_identity() -> dict[str, Any]:
    """Hostname, kernel, OS and Python of the machine running the probe."""
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "os": os_release(),
        "python": sys.version.split()[0],
    }
