"""Rule `burnin_too_short`: the full load under all GPUs lasted less than the order promised.

Seed 001 promises every customer at least 72 hours of all GPUs under full load; an order or its
configuration may promise more (Werkbank's `Order.burnin_hours`, the caller passes it in seconds). What
counts is the probe's `burn` stage, the only stage that loads every GPU at once, from its start to its end;
an interrupted stage counts only up to its interruption, and a run without a load backend (`--no-load`,
no PyTorch or CuPy) has no full load at all.

Pure Python, like the rest of the analysis; `burnin.services.ingest` applies it with the order's promise.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from burnin.analysis.common import parse_time
from burnin.analysis.context import Finding

#: The probe's stage that runs every GPU under full load together (`probe/burnin.py`).
FULL_LOAD_STAGE = "burn"


def full_load_seconds(report: Mapping[str, Any]) -> float:
    """Seconds of full load under all GPUs that the report measured (0 where nothing loaded them)."""
    params = report.get("params") or {}
    load = report.get("load") or {}
    if params.get("no_load") or load.get("available") is False:
        return 0.0
    for stage in report.get("stages") or []:
        if stage.get("name") != FULL_LOAD_STAGE or stage.get("status") == "skipped":
            continue
        start, end = parse_time(stage.get("started_at")), parse_time(stage.get("ended_at"))
        if start is None or end is None or end < start:
            return 0.0
        return (end - start).total_seconds()
    return 0.0


def hours(seconds: float) -> float:
    """Hours to one decimal, as the finding states them."""
    return round(seconds / 3600, 1)


def burnin_too_short(report: Mapping[str, Any], *, target_s: float | None) -> list[Finding]:
    """One `fail` finding when the measured full load is shorter than `target_s`; none without a target."""
    if not target_s:
        return []
    measured = full_load_seconds(report)
    if measured >= target_s:
        return []
    params = {"measured_h": hours(measured), "target_h": hours(target_s)}
    return [
        Finding(
            "burnin_too_short",
            "fail",
            "burn-in",
            f"full load under all GPUs for {params['measured_h']:g} h; the order promises "
            f"{params['target_h']:g} h",
            {"measured_s": measured, "target_s": target_s},
            params=params,
        )
    ]
