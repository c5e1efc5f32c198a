"""Seed 003 for the attribution tests (issue #29): the 7U machine of tests/burnin/ingest_rig.py, its
burn-in report posted through the ingest API (two cards, GPUs 2 and 4, trained Gen4 x8 in PCIe-3 and
PCIe-5), then the cards moved to the chassis' free bays (PCIe-7, PCIe-8) and a second report in which all
six train x16.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from builds.choices import ConnectorKind, ServerStatus
from builds.models import Connector, Installation, Server
from builds.services import server_install, server_remove
from burnin.models import BurnInRun
from burnin.services.gate import server_fail_burnin
from tests.burnin.ingest_rig import Rig, encode, make_rig, post_report, seed003_bytes

#: The seed-003 report's GPU indices that trained x8, and the connectors they sat in.
NARROW = {2: "PCIe-3", 4: "PCIe-5"}
#: The 7U chassis' two free bays (two cooling blocks of four; six are used).
FREE = ["PCIe-7", "PCIe-8"]


def seed003_rig(tenants: Any) -> Rig:
    """The 7U machine with its six cards installed and two free PCIe bays."""
    rig = make_rig(tenants)
    for position, name in enumerate(FREE, start=7):
        Connector.objects.create(
            server=rig.server,
            name=name,
            kind=ConnectorKind.PCIE_SLOT,
            position=position,
            numa_node=1,
            pcie_gen=4,
            pcie_lanes=16,
        )
    return rig


def healthy_report(*, mark: str = "after-move") -> bytes:
    """Seed 003's report with GPUs 2 and 4 trained x16 like their peers (the links after the move);
    `mark` makes it another report (another id)."""
    report = json.loads(seed003_bytes())
    model = report["gpus"][3]
    columns = report["telemetry"]["gpu_columns"]
    width = columns.index("pcie_width")
    for index in NARROW:
        gpu = report["gpus"][index]
        pcie = copy.deepcopy(model["pcie"])
        for end in ("gpu", "upstream", "gpu_end", "upstream_end"):
            pcie["sysfs"][end]["bdf"] = gpu["pcie"]["sysfs"][end]["bdf"]
        gpu["pcie"] = pcie
        gpu["bench"]["h2d_gbps"] = dict(model["bench"]["h2d_gbps"])
        gpu["bench"]["d2h_gbps"] = model["bench"]["d2h_gbps"]
        series = report["telemetry"]["gpu_series"][str(index)]
        for row in series:
            row[width] = 16
    report["dmesg"]["link_limited"] = [
        item for item in report["dmesg"].get("link_limited") or [] if "x8 link" not in json.dumps(item)
    ]
    report["probe"]["argv"] = [*report["probe"]["argv"], f"--note={mark}"]
    return encode(report)


def post(rig: Rig, capture: Any, raw: bytes) -> BurnInRun:
    with capture(execute=True):
        answer = post_report(rig.t.user_p, rig.url(), raw)
    assert answer.status_code == 201, answer.content
    return BurnInRun.objects.get(pk=answer.json()["id"])


def fail_burnin(rig: Rig) -> None:
    """The PM fails the burn-in: the server goes back to the bench for rework (burn_in_failed)."""
    server = Server.objects.get(pk=rig.server.pk)
    if server.status == ServerStatus.BURN_IN:
        server_fail_burnin(server=server, actor=rig.t.pm, reason="Two links at x8.")


def reassembled(rig: Rig) -> None:
    """Back to `assembled` after the rework, as the checklist and mark_assembled leave it."""
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.ASSEMBLED)


def rework(rig: Rig, moves: dict[int, str]) -> None:
    """The rework of a failed burn-in: each card of the report's GPU index out of its connector into the
    one named, through the builds services; then the server is assembled again."""
    fail_burnin(rig)
    gpus = json.loads(seed003_bytes())["gpus"]
    for index, to in moves.items():
        serial = gpus[index]["serial"]
        installation = Installation.objects.active().get(server=rig.server, component__serial=serial)
        removed = server_remove(installation=installation, actor=rig.t.user_p, reason="x8 link: another bay")
        server_install(server=rig.server, actor=rig.t.user_p, component=removed.component, connector_name=to)
    reassembled(rig)
