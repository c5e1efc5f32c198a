"""A handed-over server with its baseline, and its field reports, for the field-check tests.

Seed 003's 7U machine of `ingest_rig` after the fix (`burnin.demo`'s reshaping: GPUs 2 and 4 at Gen4 x16,
27.7 GB/s), its burn-in stored through the upload and accepted as the gate accepts it, then handed over.
A field report is the same machine measured again, 15 minutes, every stage finished.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from typing import Any

from django.utils import timezone

from builds.choices import ServerStatus
from builds.models import Server
from burnin.analysis.common import iso, parse_time
from burnin.demo import _seven_u_report
from burnin.models import BurnInRun
from tests.burnin.ingest_rig import Rig, encode, make_rig, post_report, seed003_bytes


def healthy_report(server: Server) -> dict[str, Any]:
    """Seed 003 after the fix, every stage finished and no DIMM event: a machine in good health."""
    report = _seven_u_report(json.loads(seed003_bytes()), server)
    report["outcome"] = {"status": "ok", "exit_code": 0, "reasons": []}
    for stage in report["stages"]:
        stage["status"], stage["reason"] = "ok", None
    memory = report["host_memory"]
    memory["sel_events"] = [event for event in memory["sel_events"] if event.get("memory_kind") is None]
    return report


def field_report(server: Server, *, days: int = 7, purpose: str = "field_check", **changes: Any) -> dict:
    """The healthy machine measured `days` after its burn-in, as `purpose`; `changes` by GPU index:
    `{3: {"h2d": 13.9, "width": 8}}` puts GPU 3 at x8."""
    report = copy.deepcopy(healthy_report(server))
    report["schema_version"] = "1.1.0"
    report["purpose"] = purpose
    start = parse_time(report["probe"]["started_at"])
    shift = timedelta(days=days)

    def later(text: str | None) -> str | None:
        return None if text is None else iso(parse_time(text) + shift)

    report["probe"]["started_at"] = iso(start + shift)
    report["probe"]["ended_at"] = later(report["probe"]["ended_at"])
    for stage in report["stages"]:
        stage["started_at"], stage["ended_at"] = later(stage["started_at"]), later(stage["ended_at"])
    report["telemetry"]["t0"] = later(report["telemetry"]["t0"])
    for index, change in changes.get("gpus", {}).items():
        x8(report, index, h2d_gbps=change.get("h2d", 13.9), width=change.get("width", 8))
    return report


def x8(report: dict[str, Any], index: int, *, h2d_gbps: float = 13.9, width: int = 8) -> None:
    """GPU `index` trained at x8 under load: half its H2D, as seed 003's faulty connectors gave."""
    columns = {name: i for i, name in enumerate(report["telemetry"]["gpu_columns"])}
    gpu = report["gpus"][index]
    gpu["pcie"]["load"]["width"] = width
    gpu["pcie"]["idle"]["width"] = width
    for key in ("gpu", "upstream", "gpu_end", "upstream_end"):
        if gpu["pcie"]["sysfs"].get(key):
            gpu["pcie"]["sysfs"][key]["current_link_width"] = width
    h2d = gpu["bench"]["h2d_gbps"]
    for key in ("default", "local"):
        if h2d.get(key) is not None:
            h2d[key] = h2d_gbps
    for row in report["telemetry"]["gpu_series"][str(gpu["index"])]:
        row[columns["pcie_width"]] = width


def handed_over_rig(tenants: Any, capture: Any) -> Rig:
    """`make_rig`'s server with the healthy burn-in uploaded by its partner, accepted as the baseline the
    gate makes it, and handed over (the statuses between are other tests' business)."""
    rig = make_rig(tenants)
    with capture(execute=True):
        response = post_report(tenants.user_p, rig.url(), encode(healthy_report(rig.server)))
    assert response.status_code == 201, response.content
    BurnInRun.objects.filter(pk=response.json()["id"]).update(accepted_at=timezone.now())
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.HANDED_OVER)
    rig.server.refresh_from_db()
    return rig
