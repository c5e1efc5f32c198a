"""Assemble the report document from a :class:`probe.burnin.BurnIn`'s state.

Kept apart from the orchestration in :mod:`probe.burnin` because it only reads the run's state: the same
function writes the periodic checkpoints and the final report, and the field check's extra fields come in
through the run's ``_extra_params`` / ``_extra_host_memory`` hooks. Per-GPU entries and the outcome are
computed by :mod:`probe.report`; this module decides the document's layout.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from probe import SCHEMA_NAME, SCHEMA_VERSION, __version__, report
from probe.common import gzip_b64, iso, utc_now
from probe.sampler import summarize

if TYPE_CHECKING:  # only for annotations: probe.burnin imports this module
    from probe.burnin import BurnIn

#: Cap on the raw text lines a report keeps (unparsed SEL lines, hardware errors, NVRM lines): a flood of
#: kernel or BMC messages must not grow the report without bound.
MAX_RAW_LINES = 500


def dmesg_section(run: BurnIn) -> dict[str, Any]:
    """The report's ``dmesg`` section: the latest good read, Xids marked as seen during the run or not."""
    start = run.dmesg_start if run.dmesg_start and run.dmesg_start["available"] else None
    end = run.dmesg_end if run.dmesg_end and run.dmesg_end["available"] else None
    latest = end or start
    if latest is None:
        reason = (run.dmesg_end or run.dmesg_start or {}).get("reason") or "not read"
        return {
            "available": False,
            "reason": reason,
            "source": None,
            "xid": [],
            "link_limited": [],
            "hardware_errors": [],
        }
    parsed = latest["parsed"]
    before = {x["line"] for x in start["parsed"]["xid"]} if start else set()
    xids = []
    for x in parsed["xid"]:
        # during_run needs both reads; with only one of them the timing is unknown (null).
        during = (x["line"] not in before) if (start and end) else None
        xids.append(dict(x, during_run=during))
    return {
        "available": True,
        "reason": None,
        "source": latest["source"],
        "xid": xids,
        "link_limited": parsed["link_limited"],
        "hardware_errors": parsed["hardware_errors"][:MAX_RAW_LINES],
    }


def build_report(run: BurnIn, checkpoint: bool = False) -> dict[str, Any]:
    """Assemble the report from the current state (also used for periodic checkpoints)."""
    note = (
        f"checkpoint written at {iso(utc_now())}; the process ended before this stage finished"
        if checkpoint
        else None
    )
    stages = run.stages.snapshot(note)
    dmesg = dmesg_section(run)
    gpus = []
    if run.doc_start:
        end_by_bus = {g["pci_bus_id"]: g for g in (run.doc_end or {}).get("gpus", [])}
        for start in run.doc_start["gpus"]:
            idx, bus = start["index"], start["pci_bus_id"]
            summary = summarize(run.telemetry, str(idx)) if run.telemetry else None
            gpus.append(
                report.gpu_entry(
                    start,
                    end_by_bus.get(bus),
                    run.pci_start.get(idx),
                    run.pci_end.get(bus),
                    run.topo["gpus"].get(idx),
                    summary,
                    run.bench.get(idx),
                    run.burn.get(idx),
                    report.xids_for(start, dmesg["xid"]),
                )
            )
    sel_events = list(run.sel_events.values())
    edac = run.edac_end if run.edac_end else run.edac_start
    doc = run.doc_start or {}
    relevant = []
    for part in (run.dmesg_start, run.dmesg_end):
        if part and part["available"]:
            relevant += [line for line in part["parsed"]["relevant"] if line not in relevant]
    return {
        "schema": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "purpose": run.purpose,
        "probe": {
            "version": __version__,
            "python": sys.version.split()[0],
            "argv": list(run.argv),
            "started_at": iso(run.started_at),
            "ended_at": iso(run.ended_at),
            "checkpoint": checkpoint,
            "errors": list(run.errors),
        },
        "params": {
            "duration_s": run.duration_s,
            "interval_s": run.interval_s,
            "sel_interval_s": run.sel_interval_s,
            "sysfs_root": run.sysfs_root,
            "no_load": run.no_load,
            **run._extra_params(),
        },
        "outcome": report.outcome(stages, gpus, sel_events),
        "stages": stages,
        "host": {
            "hostname": run.host.get("hostname"),
            "kernel": run.host.get("kernel"),
            "os": run.host.get("os"),
            "python": run.host.get("python"),
            "bmc": dict(run.bmc),
            "cpu": run.host.get("cpu"),
            "driver_version": doc.get("driver_version"),
            "cuda_version": doc.get("cuda_version"),
            "nvidia_smi_dtd": doc.get("dtd"),
            "tools": run.host.get("tools", {}),
        },
        "load": run.backend.to_report(),
        "gpus": gpus,
        "host_memory": {
            "sel_events": sel_events,
            "sel_snapshots": list(run.sel_snapshots),
            "sel_unparsed": list(run.sel_unparsed),
            "edac": {
                "present": bool(edac and edac["present"]),
                "reason": (edac or {}).get("reason", "not read"),
                "mc": (edac or {}).get("mc", []),
                "mc_start": (run.edac_start or {}).get("mc", []),
            },
            "rasdaemon": run.rasdaemon
            or {"present": False, "reason": "not read", "db": None, "counts": None},
            **run._extra_host_memory(),
        },
        "dmesg": dmesg,
        "telemetry": run.telemetry.to_report() if run.telemetry else None,
        "raw": {
            "nvidia_smi_xml": {
                "encoding": "gzip+base64",
                "start": gzip_b64(run.xml_start),
                "end": gzip_b64(run.xml_end),
            },
            "sel_elist": gzip_b64(run.sel_text),
            "dmesg_nvrm": relevant[:MAX_RAW_LINES],
        },
        "findings": [],
    }
