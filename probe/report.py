"""Report assembly: explicit stages, per-GPU summaries and the outcome of a burn-in run.

The layout follows ``docs/reference/burnin.md`` §5 (``schema``/``schema_version``, ``probe``, ``host``,
``gpus[]`` with ``pcie``/``bench``/``burn``/``thermal``/``clocks_events``/``power``/``ecc``,
``host_memory``, columnar ``telemetry``, compressed ``raw`` data, ``findings``), plus ``params``,
``stages``, ``outcome``, ``load`` and ``dmesg`` which the probe needs to say what it did and did not do.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from probe.common import atomic_write_text, iso, utc_now
from probe.nvxml import mask_to_reasons

STAGE_NAMES = ("inventory", "telemetry", "bench", "burn", "finalize")
STAGE_STATUSES = ("running", "ok", "skipped", "interrupted", "failed")


class Stages:
    """Ordered stage records ``{name, status, started_at, ended_at, reason}``."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def get(self, name: str) -> dict[str, Any] | None:
        return next((s for s in self.items if s["name"] == name), None)

    def begin(self, name: str) -> dict[str, Any]:
        stage = {
            "name": name,
            "status": "running",
            "started_at": iso(utc_now()),
            "ended_at": None,
            "reason": None,
        }
        self.items.append(stage)
        return stage

    def end(self, name: str, status: str, reason: str | None = None) -> None:
        stage = self.get(name) or self.begin(name)
        if stage["status"] != "running":
            return  # first verdict wins: a stage skipped on purpose is not later marked ok
        stage.update(status=status, ended_at=iso(utc_now()), reason=reason)

    def skip(self, name: str, reason: str) -> None:
        stage = self.begin(name)
        stage.update(status="skipped", ended_at=stage["started_at"], reason=reason)

    def snapshot(self, checkpoint_note: str | None = None) -> list[dict[str, Any]]:
        """Copy for the report. In a checkpoint, stages still running are written as interrupted: if the
        process dies (power loss), that checkpoint is what remains, and then that is what happened."""
        out = []
        for stage in self.items:
            copy = dict(stage)
            if copy["status"] == "running":
                copy.update(status="interrupted", reason=checkpoint_note or "stage did not finish")
            out.append(copy)
        return out


def _bdf_prefix(pci: str | None) -> str | None:
    """``00000000:3B:00.0`` and the Xid form ``0000:3b:00`` both → ``0000:3b:00``."""
    if not pci:
        return None
    match = re.match(r"^([0-9a-fA-F]+):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})", pci)
    if not match:
        return None
    return f"{match.group(1)[-4:].rjust(4, '0')}:{match.group(2)}:{match.group(3)}".lower()


def xids_for(gpu: dict[str, Any], xids: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Xid events of one GPU (matched on domain:bus:device)."""
    key = _bdf_prefix(gpu.get("pci_bus_id"))
    return [x for x in xids if key and _bdf_prefix(x.get("pci")) == key]


def _peak(values: list[Any], fn: Any) -> Any:
    present = [v for v in values if v is not None]
    return fn(present) if present else None


def gpu_entry(
    start: dict[str, Any],
    end: dict[str, Any] | None,
    pci_start: dict[str, Any] | None,
    pci_end: dict[str, Any] | None,
    topo: dict[str, Any] | None,
    summary: dict[str, Any] | None,
    bench: dict[str, Any] | None,
    burn: dict[str, Any] | None,
    xids: list[dict[str, Any]],
) -> dict[str, Any]:
    """Assemble one ``gpus[]`` entry from the start/end snapshots, sysfs, telemetry and load results."""
    pci_start = pci_start or {}
    topo = topo or {}
    summary = summary or {}
    end_or_start = end or start
    numa, numa_source = _numa_node(pci_start, topo)
    burn_out = None
    if burn is not None:
        burn_out = dict(burn, xids=sorted({x["xid"] for x in xids if x.get("during_run")}))
    return {
        "index": start["index"],
        "uuid": start["uuid"],
        "serial": start["serial"],
        "pci_bus_id": start["pci_bus_id"],
        "name": start["name"],
        "pci_device_id": start["pci_device_id"],
        "vbios": start["vbios_version"],
        "numa_node": numa,
        "numa_source": numa_source,
        "cpu_affinity": pci_start.get("cpu_affinity") or topo.get("cpu_affinity"),
        "pcie": _pcie_entry(start, end, pci_start, pci_end, summary),
        "bench": bench,
        "burn": burn_out,
        "xids": xids,
        "thermal": _thermal_entry(start, end_or_start, summary),
        "clocks_events": _clocks_events_entry(start, end, summary),
        "power": {
            "mean_w": summary.get("mean_w"),
            "max_w": summary.get("max_w"),
            "limit_w": start["power_limit_w"],
        },
        "ecc": {
            "mode": start["ecc_mode"],
            "start": _ecc_counts(start),
            "end": _ecc_counts(end),
            "remap": {
                "corr": end_or_start["remapped_rows_corrected"],
                "unc": end_or_start["remapped_rows_uncorrected"],
                "pending": end_or_start["remapped_rows_pending"],
                "failure": end_or_start["remapped_rows_failure"],
            },
        },
        "telemetry_samples": summary.get("samples", 0),
        "snapshots": {"start": start, "end": end},
    }


def _numa_node(pci_start: dict[str, Any], topo: dict[str, Any]) -> tuple[int | None, str | None]:
    """The GPU's NUMA node and where it was read: sysfs, else ``nvidia-smi topo`` (sysfs says -1 on
    machines without NUMA information)."""
    numa, numa_source = pci_start.get("numa_node"), "sysfs"
    if numa is None or numa < 0:
        topo_numa = topo.get("numa_affinity")
        numa, numa_source = (
            (int(topo_numa), "nvidia-smi topo") if (topo_numa or "").isdigit() else (None, None)
        )
    return numa, numa_source


def _pcie_entry(
    start: dict[str, Any],
    end: dict[str, Any] | None,
    pci_start: dict[str, Any],
    pci_end: dict[str, Any] | None,
    summary: dict[str, Any],
) -> dict[str, Any]:
    """The entry's ``pcie``: the expected link, sysfs at start and end, idle and loaded link, and the replay
    and AER counters at start and end."""
    gpu_link = pci_start.get("gpu") or {}
    pcie = start["pcie"]
    load = None
    if summary.get("loaded_samples"):
        load = {
            "pstate": "P0",
            "gen": summary["loaded_min_gen"],
            "width": summary["loaded_min_width"],
            "max_gen": pcie["max_gen"],
            "max_width": pcie["max_width"],
            "device_max_gen": pcie["device_max_gen"],
            "host_max_gen": pcie["host_max_gen"],
            "samples": summary["loaded_samples"],
        }
    return {
        "expected": {
            "gen": pcie["device_max_gen"],
            "width": gpu_link.get("max_link_width"),
            "source": "GPU capability: nvidia-smi max_device_link_gen, sysfs max_link_width of the GPU",
        },
        "sysfs": {
            "available": bool(pci_start.get("available")),
            "reason": pci_start.get("reason"),
            "gpu": pci_start.get("gpu"),
            "upstream": pci_start.get("upstream"),
            "gpu_end": (pci_end or {}).get("gpu"),
            "upstream_end": (pci_end or {}).get("upstream"),
        },
        "idle": {"pstate": start["pstate"], "gen": pcie["current_gen"], "width": pcie["current_width"]},
        "load": load,
        "replay_counter": {
            "start": pcie["replay_counter"],
            "end": end["pcie"]["replay_counter"] if end else None,
        },
        "aer_correctable": {
            "start": gpu_link.get("aer_correctable"),
            "end": ((pci_end or {}).get("gpu") or {}).get("aer_correctable"),
        },
    }


def _thermal_entry(
    start: dict[str, Any], end_or_start: dict[str, Any], summary: dict[str, Any]
) -> dict[str, Any]:
    """The entry's ``thermal``: peaks over telemetry and both snapshots, and the throttle thresholds, as
    offsets from T.Limit where the driver gives them, else as absolute temperatures."""
    offsets = [start.get(k) for k in ("shutdown_offset_c", "slowdown_offset_c", "max_op_offset_c")]
    absolutes = [start.get(k) for k in ("shutdown_temp_c", "slowdown_temp_c", "max_op_temp_c")]
    return {
        "peak_gpu_c": _peak([summary.get("peak_gpu_c"), start["temp_c"], end_or_start["temp_c"]], max),
        "min_tlimit_c": _peak(
            [summary.get("min_tlimit_c"), start["tlimit_c"], end_or_start["tlimit_c"]], min
        ),
        "peak_mem_c": _peak(
            [summary.get("peak_mem_c"), start["mem_temp_c"], end_or_start["mem_temp_c"]], max
        ),
        "thresholds": {
            "source": (
                "tlimit_offsets"
                if any(v is not None for v in offsets)
                else "absolute"
                if any(v is not None for v in absolutes)
                else None
            ),
            "shutdown_offset": offsets[0],
            "slowdown_offset": offsets[1],
            "max_op_offset": offsets[2],
            "shutdown_c": absolutes[0],
            "slowdown_c": absolutes[1],
            "max_op_c": absolutes[2],
        },
    }


def _clocks_events_entry(
    start: dict[str, Any], end: dict[str, Any] | None, summary: dict[str, Any]
) -> dict[str, Any]:
    """The entry's ``clocks_events``: every reason seen active (telemetry and both snapshots), and how far
    each reason's counter moved between the snapshots."""
    seen = set(mask_to_reasons(summary.get("mask_seen"))) | set(start["clocks_event_reasons_active"])
    if end:
        seen |= set(end["clocks_event_reasons_active"])
    c_start, c_end = (
        start.get("clocks_event_reasons_counters_us"),
        (end or {}).get("clocks_event_reasons_counters_us"),
    )
    counters_delta = None
    if c_start and c_end:
        counters_delta = {
            k: (c_end[k] - c_start[k]) if c_end.get(k) is not None and c_start.get(k) is not None else None
            for k in c_start
        }
    return {
        "seen_active": sorted(seen),
        "sw_power_cap_fraction": summary.get("sw_power_cap_fraction"),
        "counters_delta_us": counters_delta,
    }


def _ecc_counts(snap: dict[str, Any] | None) -> dict[str, Any] | None:
    """The volatile ECC counters of one snapshot (None without the snapshot)."""
    if snap is None:
        return None
    return {
        "dram_corr": snap["ecc_volatile_dram_corrected"],
        "dram_unc": snap["ecc_volatile_dram_uncorrected"],
        "corr_total": snap["ecc_volatile_corrected"],
        "unc_total": snap["ecc_volatile_uncorrected"],
    }


def outcome(
    stages: list[dict[str, Any]], gpus: list[dict[str, Any]], sel_events: list[dict[str, Any]]
) -> dict[str, Any]:
    """Decide the run's exit status: 0 ok, 1 when a stage failed or was interrupted or a failure was measured.

    Measured failures the probe can state on its own (the server derives the full findings): compute
    mismatches/NaNs, CUDA errors, Xids during the run, growth of GPU uncorrectable ECC, and uncorrectable
    memory errors logged by the BMC during the run.
    """
    reasons: list[str] = []
    interrupted = False
    for stage in stages:
        if stage["status"] == "failed":
            reasons.append(f"stage {stage['name']} failed: {stage['reason']}")
        elif stage["status"] == "interrupted":
            interrupted = True
            reasons.append(f"stage {stage['name']} interrupted: {stage['reason']}")
    for gpu in gpus:
        burn = gpu.get("burn") or {}
        for key in ("mismatches", "nans", "cuda_errors"):
            if burn.get(key):
                reasons.append(f"GPU {gpu['index']}: {burn[key]} {key.replace('_', ' ')} during burn")
        new_xids = [x["xid"] for x in gpu.get("xids", []) if x.get("during_run")]
        if new_xids:
            reasons.append(f"GPU {gpu['index']}: Xid {sorted(set(new_xids))} during the run")
        ecc = gpu["ecc"]
        if ecc["start"] and ecc["end"]:
            before, after = ecc["start"]["unc_total"], ecc["end"]["unc_total"]
            if before is not None and after is not None and after > before:
                reasons.append(f"GPU {gpu['index']}: uncorrectable ECC errors grew from {before} to {after}")
    for ev in sel_events:
        if ev.get("during_run") and ev.get("memory_kind") == "ue":
            reasons.append(f"BMC SEL: uncorrectable memory error during the run ({ev['line'].strip()})")
    failed = [r for r in reasons if "interrupted:" not in r]
    status = "failed" if failed else "interrupted" if interrupted else "ok"
    return {"status": status, "exit_code": 0 if status == "ok" else 1, "reasons": reasons}


def sanitize(value: Any) -> Any:
    """Replace NaN/inf (a failed timing can produce them) with null: JSON has no spelling for them and a
    report that cannot be serialised would lose the whole run."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: sanitize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sanitize(v) for v in value]
    return value


def dumps(report: dict[str, Any]) -> str:
    """Serialise compactly (a 72 h series is large) with non-finite floats nulled."""
    return json.dumps(sanitize(report), separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"


def write(path: str, report: dict[str, Any]) -> None:
    """Write the report atomically (temp file + ``os.replace``)."""
    atomic_write_text(path, dumps(report))
