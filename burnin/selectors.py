"""Burn-in reads for the pages and the telemetry endpoint.

`telemetry_series` downsamples in the database: a 72 h run of 8 GPUs at 10 s holds 207,360 samples, and a
chart needs at most one point per pixel column. Each selector runs a fixed number of queries, whatever the
number of GPUs, samples or findings.
"""

from __future__ import annotations

import itertools
import operator
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import NotSupportedError, connection
from django.db.models import Max

from builds.models import Server
from burnin.choices import Severity, StageStatus
from burnin.models import BurnInRun, BurnInStage, Finding, GpuResult, TelemetrySample
from werkbank.access import Purpose

#: Clock-event bits that mean the GPU slowed down for a fault, not by policy (NVML
#: `nvmlClocksEventReason*`, the names of probe/nvxml.py CLOCK_EVENT_BITS): hw_slowdown 0x8,
#: sw_thermal_slowdown 0x20, hw_thermal_slowdown 0x40, hw_power_brake_slowdown 0x80. The software power cap
#: (0x4) is normal at full load (docs/reference/burnin.md §4, rule 10) and is reported apart.
THROTTLE_BITS = 0x8 | 0x20 | 0x40 | 0x80
POWER_CAP_BIT = 0x4

#: The bounds of `max_points` the endpoint accepts: fewer than 10 points is no chart, and more than 5,000
#: is more than any screen shows.
MAX_POINTS_MIN, MAX_POINTS_MAX, MAX_POINTS_DEFAULT = 10, 5000, 1000


@dataclass(frozen=True)
class GpuSeries:
    """One GPU's telemetry, one entry per time bucket that holds samples (a bucket without any is absent:
    a gap in the line). `bucket` is the bucket's number, `t_s` its middle in seconds since the run's start."""

    bucket: list[int] = field(default_factory=list)
    t_s: list[float] = field(default_factory=list)
    temp_c: list[float | None] = field(default_factory=list)
    temp_max_c: list[float | None] = field(default_factory=list)
    margin_min_c: list[float | None] = field(default_factory=list)
    power_w: list[float | None] = field(default_factory=list)
    sm_mhz: list[float | None] = field(default_factory=list)
    throttled: list[bool] = field(default_factory=list)
    power_capped: list[bool] = field(default_factory=list)

    def slowdown_c(self) -> float | None:
        """The slowdown point the GPU reported: temperature + T.Limit margin, the median over the buckets.
        The margin is the distance to a fixed threshold, so the lowest margin falls on the peak temperature
        and their sum is the threshold itself."""
        points = [
            temp + margin
            for temp, margin in zip(self.temp_max_c, self.margin_min_c, strict=True)
            if temp is not None and margin is not None
        ]
        return statistics.median(points) if points else None


@dataclass(frozen=True)
class Telemetry:
    """A run's telemetry, downsampled: `interval_s` is the width of a bucket."""

    run_id: int
    started_at: datetime
    span_s: float
    interval_s: float
    series: dict[int, GpuSeries]


def _span_s(run: BurnInRun) -> float:
    if run.ended_at is not None:
        return (run.ended_at - run.started_at).total_seconds()
    # A run without an end (the probe died before it finalised): its last sample ends the chart.
    last = TelemetrySample.objects.filter(run=run).aggregate(last=Max("at"))["last"]
    return (last - run.started_at).total_seconds() if last is not None else 0.0


# The aggregates per GPU and bucket, in the order `telemetry_series` reads them. Measured on 207,360
# samples (bench/bench_burnin_charts.py): each aggregate adds about 10 ms, a third of what reading the
# rows costs, so the query computes only what the charts and the endpoint show. PostgreSQL's `date_bin`
# cuts the time axis in integer microseconds (cheaper than float epoch arithmetic per row); GREATEST and
# LEAST clamp a sample a little outside the run's stated span (the probe's clock) into the first or last
# bucket.
_POSTGRESQL = """
SELECT {gpu_index}, date_bin(%s, LEAST(GREATEST({at}, %s), %s), %s),
       AVG({temp_c}), MAX({temp_c}), MIN({margin_c}), AVG({power_w}), AVG({sm_mhz}), BIT_OR({mask})
FROM {table} WHERE {run} = %s GROUP BY 1, 2 ORDER BY 1, 2
"""
# SQLite keeps datetimes as UTC text; julianday() reads them to the millisecond, and rounding to the
# millisecond undoes the float error of the day-to-second conversion. Two-argument MIN/MAX clamp.
_SQLITE = """
SELECT {gpu_index},
       MIN(MAX(CAST((ROUND((julianday({at}) - 2440587.5) * 86400.0, 3) - %s) / %s AS INTEGER), 0), %s),
       AVG({temp_c}), MAX({temp_c}), MIN({margin_c}), AVG({power_w}), AVG({sm_mhz}),
       MAX({mask} & %s) | MAX({mask} & %s)
FROM {table} WHERE {run} = %s GROUP BY 1, 2 ORDER BY 1, 2
"""


def _sql(template: str) -> str:
    meta, quote = TelemetrySample._meta, connection.ops.quote_name
    columns = {
        name: quote(meta.get_field(name).column)
        for name in ("gpu_index", "at", "temp_c", "margin_c", "power_w", "sm_mhz")
    }
    return template.format(
        table=quote(meta.db_table),
        run=quote(meta.get_field("run").column),
        mask=quote(meta.get_field("clock_event_mask").column),
        **columns,
    )


def telemetry_series(*, run: BurnInRun, max_points: int = MAX_POINTS_DEFAULT) -> Telemetry:
    """Each GPU's telemetry of `run` in at most `max_points` time buckets, aggregated in one SQL query.

    The run's span (start to end) is cut into `max_points` buckets of equal width (whole microseconds,
    rounded up so that they cover it). Per GPU and bucket: the mean temperature, power and SM clock, the
    peak temperature, the lowest margin, and whether any sample had a throttle bit (THROTTLE_BITS) or the
    software power cap set. An index on the run (the foreign key's, or (run, gpu_index, at)) serves the
    scan. One query (two when the run has no end).
    """
    if max_points < 1:
        raise ValueError("max_points must be positive")
    span_s = max(_span_s(run), 0.0)
    span_us = round(span_s * 1_000_000)
    width_us = -(-span_us // max_points) if span_us > 0 else 1_000_000
    width = timedelta(microseconds=width_us)
    start = run.started_at
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            last = start + width * (max_points - 1)
            cursor.execute(_sql(_POSTGRESQL), [width, start, last, start, run.pk])
            rows = [(gpu, round((bucket - start) / width), *rest) for gpu, bucket, *rest in cursor.fetchall()]
        elif connection.vendor == "sqlite":
            params = [start.timestamp(), width_us / 1_000_000, max_points - 1, THROTTLE_BITS, POWER_CAP_BIT]
            cursor.execute(_sql(_SQLITE), [*params, run.pk])
            rows = cursor.fetchall()
        else:
            raise NotSupportedError(f"telemetry_series has no SQL for {connection.vendor}.")
    interval_s = width_us / 1_000_000
    series = {
        gpu_index: _columns(list(group), interval_s)
        for gpu_index, group in itertools.groupby(rows, key=operator.itemgetter(0))
    }
    return Telemetry(run_id=run.pk, started_at=start, span_s=span_s, interval_s=interval_s, series=series)


def _columns(rows: list[tuple], interval_s: float) -> GpuSeries:
    """One GPU's rows (gpu, bucket, 5 values, mask) turned into columns: 8,000 rows in a few ms."""
    _, buckets, *values, masks = zip(*rows, strict=True)
    temp_c, temp_max_c, margin_min_c, power_w, sm_mhz = (
        [None if v is None else round(v, 2) for v in column] for column in values
    )
    return GpuSeries(
        bucket=list(buckets),
        t_s=[round((b + 0.5) * interval_s, 3) for b in buckets],
        temp_c=temp_c,
        temp_max_c=temp_max_c,
        margin_min_c=margin_min_c,
        power_w=power_w,
        sm_mhz=sm_mhz,
        throttled=[bool((m or 0) & THROTTLE_BITS) for m in masks],
        power_capped=[bool((m or 0) & POWER_CAP_BIT) for m in masks],
    )


# --- pages ---------------------------------------------------------------------------------------------


def visible_server(user: Any, pk: int) -> Server | None:
    """The server if the user may see it (PMs, its partner, its order's customer), else None (a 404)."""
    return (
        Server.objects.visible_to(user, purpose=Purpose.VIEW)
        .select_related("order__customer", "partner")
        .filter(pk=pk)
        .first()
    )


def server_runs(server: Server) -> list[BurnInRun]:
    """The server's burn-in runs, newest first (the `burnin_run_server_latest` index)."""
    return list(BurnInRun.objects.filter(server=server).select_related("uploaded_by").order_by("-id"))


def visible_run(user: Any, pk: int) -> BurnInRun | None:
    """The run if the user may see its server, else None (a 404)."""
    return (
        BurnInRun.objects.visible_to(user, purpose=Purpose.VIEW)
        .select_related("server__order__customer", "server__partner", "uploaded_by")
        .filter(pk=pk)
        .first()
    )


#: Which finding codes speak about which column of the per-GPU table (codes of burnin/analysis.py, as the
#: issue lists them). A `warn` or `fail` finding on a GPU marks its cell.
COLUMN_CODES: dict[str, frozenset[str]] = {
    "link": frozenset({"pcie_link_downtrained", "pcie_link_cap_limited"}),
    "h2d": frozenset({"h2d_bandwidth_outlier", "pcie_link_downtrained"}),
    "d2h": frozenset({"pcie_link_downtrained"}),
    "tflops": frozenset({"tflops_outlier"}),
    "vram": frozenset({"vram_bandwidth_low"}),
    "errors": frozenset({"compute_errors"}),
    "temp": frozenset({"thermal_margin_low", "throttling_active"}),
    "margin": frozenset({"thermal_margin_low"}),
    "power": frozenset({"power_delivery_low"}),
}

_SEVERITY_RANK = {Severity.INFO: 0, Severity.WARN: 1, Severity.FAIL: 2}


@dataclass(frozen=True)
class Flag:
    """A highlighted cell: the worst severity of the findings on it, and their messages."""

    severity: str
    waived: bool
    messages: list[str]


def link_label(gen: int | None, width: int | None) -> str:
    """'Gen4 x16'; '—' when neither is known."""
    parts = [f"Gen{gen}" if gen else "", f"x{width}" if width else ""]
    return " ".join(p for p in parts if p) or "—"


@dataclass(frozen=True)
class GpuRow:
    """One row of the per-GPU table: the GPU's result and the cells its findings mark, by column."""

    result: GpuResult
    flags: dict[str, Flag]

    @property
    def expected_link(self) -> str:
        return link_label(self.result.expected_gen, self.result.expected_width)

    @property
    def load_link(self) -> str:
        return link_label(self.result.load_gen, self.result.load_width)

    @property
    def links(self) -> str:
        """'Gen4 x16 / Gen4 x8': expected, then measured under load."""
        return f"{self.expected_link} / {self.load_link}"

    @property
    def errors(self) -> str:
        """'0 / 0': mismatched / NaN matmul results; '' when the report has neither."""
        mismatches, nans = self.result.mismatches, self.result.nans
        if mismatches is None and nans is None:
            return ""
        return f"{'?' if mismatches is None else mismatches} / {'?' if nans is None else nans}"


@dataclass(frozen=True)
class RunDetail:
    """Everything the run page shows but the charts: stages, findings by severity, the per-GPU table."""

    stages: list[BurnInStage]
    incomplete_stages: list[BurnInStage]
    findings_by_severity: list[tuple[str, str, list[Finding]]]
    unwaived_fails: int
    gpu_rows: list[GpuRow]
    power_limits_w: dict[int, float]


def _flags(findings: list[Finding]) -> dict[int, dict[str, Flag]]:
    by_cell: dict[tuple[int, str], list[Finding]] = defaultdict(list)
    for finding in findings:
        if finding.gpu_index is None or finding.severity == Severity.INFO:
            continue
        for column, codes in COLUMN_CODES.items():
            if finding.code in codes:
                by_cell[finding.gpu_index, column].append(finding)
    flags: dict[int, dict[str, Flag]] = defaultdict(dict)
    for (gpu_index, column), cell in by_cell.items():
        worst = max(cell, key=lambda f: _SEVERITY_RANK[f.severity])
        flags[gpu_index][column] = Flag(
            severity=worst.severity,
            waived=all(f.waived for f in cell if f.severity == worst.severity),
            messages=[f.message for f in cell],
        )
    return flags


def run_detail(run: BurnInRun) -> RunDetail:
    """The run's stages, findings (worst first, with their waivers) and per-GPU rows. Three queries."""
    stages = list(BurnInStage.objects.filter(run=run).order_by("position"))
    findings = list(Finding.objects.filter(run=run).select_related("waived_by").order_by("id"))
    results = list(GpuResult.objects.filter(run=run).select_related("component__part").order_by("index"))
    flags = _flags(findings)
    groups = []
    for severity in (Severity.FAIL, Severity.WARN, Severity.INFO):
        members = [f for f in findings if f.severity == severity]
        if members:
            groups.append((severity.value, severity.label, members))
    return RunDetail(
        stages=stages,
        incomplete_stages=[s for s in stages if s.status in (StageStatus.INTERRUPTED, StageStatus.FAILED)],
        findings_by_severity=groups,
        unwaived_fails=sum(1 for f in findings if f.severity == Severity.FAIL and not f.waived),
        gpu_rows=[GpuRow(result=r, flags=flags.get(r.index, {})) for r in results],
        power_limits_w={r.index: r.power_limit_w for r in results if r.power_limit_w},
    )
