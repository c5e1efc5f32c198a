"""Host readers: sysfs links (GPU and upstream port), topology, EDAC, rasdaemon and dmesg lines."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from probe.hostinfo import (
    numa_nodes,
    parse_aer,
    parse_dmesg,
    parse_topo,
    read_edac,
    read_pci,
    read_rasdaemon,
    speed_to_gen,
    sysfs_bdf,
)


def test_sysfs_capture_of_the_h200(fake_sysfs: Path) -> None:
    pci = read_pci("00000000:00:06.0", str(fake_sysfs))
    assert pci["available"] is True and pci["reason"] is None
    assert pci["gpu"] == {
        "bdf": "0000:00:06.0",
        "current_link_speed": "32.0 GT/s PCIe",
        "current_link_width": 16,
        "max_link_speed": "32.0 GT/s PCIe",
        "max_link_width": 16,
        "current_gen": 5,
        "max_gen": 5,
        "aer_correctable": None,
    }
    assert pci["numa_node"] == -1  # the capture is from a VM
    assert pci["upstream"] is None


def test_gpu_behind_a_bridge_at_x8(tmp_path: Path, sysfs_builder) -> None:
    """Seed 003's case: the card is x16-capable but its upstream port trained at x8."""
    root = tmp_path / "sys"
    bridge = root / "devices" / "pci0000:40" / "0000:40:01.1"
    bridge.mkdir(parents=True)
    for name, value in {
        "current_link_speed": "16.0 GT/s PCIe",
        "current_link_width": "8",
        "max_link_speed": "16.0 GT/s PCIe",
        "max_link_width": "16",
    }.items():
        (bridge / name).write_text(value + "\n")
    sysfs_builder(
        root,
        {
            "0000:41:00.0": {
                "current_link_speed": "16.0 GT/s PCIe",
                "current_link_width": "8",
                "max_link_speed": "32.0 GT/s PCIe",
                "max_link_width": "16",
                "numa_node": "1",
                "local_cpulist": "48-95",
                "aer_dev_correctable": "RxErr 0\nBadTLP 2\nTOTAL_ERR_COR 3\n",
            }
        },
        parent="pci0000:40/0000:40:01.1",
    )
    pci = read_pci("00000000:41:00.0", str(root))
    assert pci["gpu"]["current_link_width"] == 8 and pci["gpu"]["max_link_width"] == 16
    assert (
        pci["gpu"]["current_gen"] == 4 and pci["gpu"]["max_gen"] == 5 and pci["gpu"]["aer_correctable"] == 3
    )
    assert pci["upstream"]["bdf"] == "0000:40:01.1" and pci["upstream"]["current_link_width"] == 8
    assert pci["numa_node"] == 1 and pci["cpu_affinity"] == "48-95"


def test_missing_device_gives_reason(tmp_path: Path) -> None:
    pci = read_pci("00000000:AA:00.0", str(tmp_path))
    assert pci["available"] is False and "0000:aa:00.0 does not exist" in pci["reason"]
    assert read_pci(None, str(tmp_path))["reason"].startswith("cannot map PCI bus id")


def test_small_converters() -> None:
    assert sysfs_bdf("00000000:18:00.0") == "0000:18:00.0"
    assert sysfs_bdf("0000:3B:00.0") == "0000:3b:00.0"
    assert sysfs_bdf("garbage") is None
    assert [speed_to_gen(s) for s in ("2.5 GT/s PCIe", "8.0 GT/s", "16.0 GT/s PCIe", "32.0 GT/s PCIe")] == [
        1,
        3,
        4,
        5,
    ]
    assert speed_to_gen("Unknown") is None
    assert parse_aer("RxErr 0\nTOTAL_ERR_COR 17\n") == 17 and parse_aer(None) is None


def test_topo_fixture(h200_dir: Path) -> None:
    assert parse_topo((h200_dir / "topo.txt").read_text()) == {
        0: {"cpu_affinity": "0-15", "numa_affinity": "0", "gpu_numa_id": None}
    }


def test_topo_multi_gpu_layout() -> None:
    text = (
        "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
        "GPU0\t X \tSYS\tNODE\t0-47,96-143\t0\t\tN/A\n"
        "GPU1\tSYS\t X \tSYS\t48-95,144-191\t1\t\tN/A\n"
        "NIC0\tNODE\tSYS\t X \t\t\t\t\n"
    )
    rows = parse_topo(text)
    assert rows[0]["cpu_affinity"] == "0-47,96-143" and rows[1]["numa_affinity"] == "1"


def test_edac_tree(tmp_path: Path) -> None:
    assert read_edac(str(tmp_path))["present"] is False
    mc = tmp_path / "devices" / "system" / "edac" / "mc" / "mc0"
    (mc / "dimm3").mkdir(parents=True)
    for name, value in {
        "ce_count": "2",
        "ue_count": "0",
        "ce_noinfo_count": "0",
        "ue_noinfo_count": "0",
    }.items():
        (mc / name).write_text(value + "\n")
    for name, value in {
        "dimm_label": "CPU_SrcID#0_MC#0_Chan#1_DIMM#0",
        "dimm_ce_count": "2",
        "dimm_ue_count": "0",
    }.items():
        (mc / "dimm3" / name).write_text(value + "\n")
    edac = read_edac(str(tmp_path))
    assert edac["present"] is True
    assert edac["mc"] == [
        {
            "name": "mc0",
            "ce": 2,
            "ue": 0,
            "ce_noinfo": 0,
            "ue_noinfo": 0,
            "dimms": [{"name": "dimm3", "label": "CPU_SrcID#0_MC#0_Chan#1_DIMM#0", "ce": 2, "ue": 0}],
        }
    ]


def test_numa_nodes(tmp_path: Path) -> None:
    for n in ("node0", "node1", "possible"):
        (tmp_path / "devices" / "system" / "node" / n).mkdir(parents=True)
    assert numa_nodes(str(tmp_path)) == [0, 1]


def test_rasdaemon_counts(tmp_path: Path) -> None:
    db = tmp_path / "ras-mc_event.db"
    assert read_rasdaemon(str(db))["present"] is False
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE mc_event (id INTEGER PRIMARY KEY, err_type TEXT)")
        conn.executemany(
            "INSERT INTO mc_event (err_type) VALUES (?)", [("Corrected",)] * 3 + [("Uncorrected",)]
        )
    assert read_rasdaemon(str(db)) == {
        "present": True,
        "reason": None,
        "db": str(db),
        "counts": {"Corrected": 3, "Uncorrected": 1},
    }


def test_dmesg_xid_link_limited_and_hardware_errors() -> None:
    # Formats: NVIDIA driver Xid lines; kernel pcie_print_link_status(); GHES "[Hardware Error]".
    text = "\n".join(
        [
            "[    2.345678] pci 0000:41:00.0: 126.024 Gb/s available PCIe bandwidth, limited by "
            "16.0 GT/s PCIe x8 link at 0000:40:01.1 (capable of 504.112 Gb/s with 32.0 GT/s PCIe x16 link)",
            "[ 8123.000001] NVRM: Xid (PCI:0000:41:00): 79, pid=4242, name=python3, "
            "GPU has fallen off the bus.",
            "[ 9000.5] NVRM: GPU at PCI:0000:41:00: GPU-1234",
            "[ 9100.0] {1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 0",
            "[ 9200.0] unrelated line",
        ]
    )
    parsed = parse_dmesg(text)
    (xid,) = parsed["xid"]
    assert xid == {
        "t_boot_s": 8123.000001,
        "pci": "0000:41:00",
        "xid": 79,
        "msg": "pid=4242, name=python3, GPU has fallen off the bus.",
        "line": xid["line"],
    }
    (limited,) = parsed["link_limited"]
    assert (
        limited["bdf"] == "0000:41:00.0" and limited["limited_width"] == 8 and limited["capable_width"] == 16
    )
    assert limited["limited_speed"] == "16.0 GT/s PCIe" and limited["limited_at"] == "0000:40:01.1"
    assert limited["available_gbps"] == 126.024 and limited["capable_gbps"] == 504.112
    assert len(parsed["hardware_errors"]) == 1
    assert len(parsed["relevant"]) == 4 and "unrelated line" not in "".join(parsed["relevant"])
