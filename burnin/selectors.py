"""Burn-in reads for the pages and the telemetry endpoint.

`telemetry_series` downsamples in the database: a 72 h run of 8 GPUs at 10 s holds 207,360 samples, and a
chart needs at most one point per pixel column. Each selector runs a fixed number of queries, whatever the
number of GPUs, samples or findings.
"""

from __future__ import annotations

import csv
import io
import itertools
import operator
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db import NotSupportedError, connection
from django.db.models import Max

from builds.models import Server
from burnin.choices import Severity, StageStatus
from burnin.models import BurnInRun, BurnInStage, Finding, GpuResult, TelemetryRollup, TelemetrySample
from werkbank.access import Purpose
from werkbank.columns import db_column
from werkbank.types import Actor

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

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


def span_s(run: BurnInRun) -> float:
    """The run's span in seconds: start to end, or to its last sample when it has no end (the probe died
    before it finalised). Never negative."""
    if run.ended_at is not None:
        return max((run.ended_at - run.started_at).total_seconds(), 0.0)
    last = TelemetrySample.objects.filter(run=run).aggregate(last=Max("at"))["last"]
    return max((last - run.started_at).total_seconds(), 0.0) if last is not None else 0.0


#: The rollup's grid (burnin.models.TelemetryRollup): the run's span in 3,000 buckets, or in 2,000 where
#: 3,000 do not divide it in whole microseconds (a span of whole seconds not a multiple of 3 s). 3,000 is a
#: multiple of the charts' usual sizes (the endpoint's 1,000 points, the page's 600, 500, 300, 100, 10), so
#: their buckets are whole runs of rollup buckets and keep the width span / points. A 72 h run of 8 GPUs
#: has 24,000 rollup rows against 207,360 samples; any chart of up to that many points reads them.
ROLLUP_BUCKETS = (3000, 2000)


def rollup_buckets(span_us: int) -> int:
    """How many rollup buckets cut a span of `span_us` (> 0)."""
    return next((n for n in ROLLUP_BUCKETS if span_us % n == 0), ROLLUP_BUCKETS[0])


def rollup_width_us(span_us: int) -> int:
    """The width of the rollup's buckets for a run of `span_us` (> 0), in whole microseconds, rounded up
    so that they cover the span."""
    return -(-span_us // rollup_buckets(span_us))


@dataclass(frozen=True)
class Grid:
    """The time buckets of a chart: `count` buckets of `width_us` from the run's start. Samples are
    clamped to [0, `last_us`] µs after the start (a sample a little outside the span, by the probe's
    clock, lands in the first or last bucket). `per_rollup` is how many rollup buckets make one (None:
    the chart is finer than the rollup and reads the samples)."""

    width_us: int
    count: int
    last_us: int
    rollup_width_us: int | None
    per_rollup: int | None


def telemetry_grid(span_us: int, max_points: int) -> Grid:
    """At most `max_points` buckets of equal width over the span, rounded up to whole microseconds, and,
    up to the rollup's number of buckets, to a whole number of the rollup's buckets: then each chart bucket
    is a run of whole rollup buckets and reading the rollup gives what reading the samples gives. (A chart
    of 137 points over 10,000 s thus has 134 buckets of 75 s, the rollup's being 5 s.)"""
    if span_us <= 0:
        return Grid(
            width_us=1_000_000,
            count=max_points,
            last_us=max_points * 1_000_000 - 1,
            rollup_width_us=None,
            per_rollup=None,
        )
    width_us = -(-span_us // max_points)
    fine_us = per = None
    if max_points <= rollup_buckets(span_us):
        fine_us = rollup_width_us(span_us)
        per = -(-width_us // fine_us)
        width_us = fine_us * per
    count = -(-span_us // width_us)
    return Grid(
        width_us=width_us, count=count, last_us=count * width_us - 1, rollup_width_us=fine_us, per_rollup=per
    )


# The aggregates per GPU and bucket, in the order `telemetry_series` reads them. Measured on 207,360
# samples (bench/bench_burnin_charts.py): each aggregate adds about 10 ms, a third of what reading the
# rows costs, so the query computes only what the charts and the endpoint show. PostgreSQL's `date_bin`
# cuts the time axis in integer microseconds (cheaper than float epoch arithmetic per row); GREATEST and
# LEAST clamp a sample a little outside the run's stated span (the probe's clock) into the first or last
# bucket, and the bucket's number is worked out once per group.
#
# The samples' query follows a query of the rollup on the same grid: when the run has rollup rows, the
# samples' branch is a one-time filter that is false and reads nothing (PostgreSQL's InitPlan, SQLite's
# constant WHERE term): one query either way.
_RAW_POSTGRESQL = """
SELECT gpu, (EXTRACT(EPOCH FROM (bin - %s)) * 1000000)::bigint / %s, temp_c, temp_max_c, margin_min_c,
       power_w, sm_mhz, mask
FROM (SELECT {gpu_index} AS gpu, date_bin(%s, LEAST(GREATEST({at}, %s), %s), %s) AS bin,
             AVG({temp_c}) AS temp_c, MAX({temp_c}) AS temp_max_c, MIN({margin_c}) AS margin_min_c,
             AVG({power_w}) AS power_w, AVG({sm_mhz}) AS sm_mhz, BIT_OR({mask}) AS mask
      FROM {table} WHERE {run} = %s GROUP BY 1, 2 {fence}) AS binned
{no_rollup}
"""
# SQLite keeps datetimes as UTC text; julianday() reads them to the millisecond, and rounding to the
# millisecond undoes the float error of the day-to-second conversion. From there the bucket is integer
# arithmetic in microseconds, as on PostgreSQL. Two-argument MIN/MAX clamp. SQLite has no BIT_OR: what
# the charts read of the mask is whether any sample had a throttle bit, or the power-cap bit.
_RAW_SQLITE = """
SELECT {gpu_index},
       MIN(MAX(CAST(ROUND((julianday({at}) - 2440587.5) * 86400000.0) AS INTEGER) * 1000 - %s, 0), %s) / %s,
       AVG({temp_c}), MAX({temp_c}), MIN({margin_c}), AVG({power_w}), AVG({sm_mhz}),
       MAX({mask} & %s) | MAX({mask} & %s)
FROM {table} WHERE {run} = %s {no_rollup} GROUP BY 1, 2
"""
# The rollup's rows (a few thousand), re-aggregated into the chart's buckets: count-weighted means.
_ROLLUP = """
SELECT gpu_index, bucket / %s, SUM(temp_sum_c) / NULLIF(SUM(temp_n), 0), MAX(temp_max_c),
       MIN(margin_min_c), SUM(power_sum_w) / NULLIF(SUM(power_n), 0), SUM(sm_sum_mhz) / NULLIF(SUM(sm_n), 0),
       {mask_rollup}
FROM {rollup} WHERE run_id = %s AND width_us = %s GROUP BY 1, 2
"""
_NO_ROLLUP = "AND NOT EXISTS (SELECT 1 FROM {rollup} WHERE run_id = %s AND width_us = %s)"
_MASK_ROLLUP = {
    "postgresql": "BIT_OR(clock_event_mask)",
    "sqlite": "MAX(clock_event_mask & %s) | MAX(clock_event_mask & %s)",
}


def _sql(template: str, **extra: str) -> str:
    meta, quote = TelemetrySample._meta, connection.ops.quote_name
    columns = {
        name: quote(db_column(TelemetrySample, name))
        for name in ("gpu_index", "at", "temp_c", "margin_c", "power_w", "sm_mhz")
    }
    return template.format(
        table=quote(meta.db_table),
        run=quote(db_column(TelemetrySample, "run")),
        mask=quote(db_column(TelemetrySample, "clock_event_mask")),
        rollup=quote(TelemetryRollup._meta.db_table),
        **columns,
        **extra,
    )


def _raw(grid: Grid, start: datetime, run_id: int, *, no_rollup: bool) -> tuple[str, list[Any]]:
    """The samples' query on `grid`, guarded (`no_rollup`) to read nothing where the rollup serves."""
    guard = _sql(_NO_ROLLUP) if no_rollup else ""
    guard_params = [run_id, grid.rollup_width_us] if no_rollup else []
    if connection.vendor == "postgresql":
        width = timedelta(microseconds=grid.width_us)
        last = start + timedelta(microseconds=grid.last_us)
        params = [start, grid.width_us, width, start, last, start, run_id, *guard_params]
        # The guard sits above the grouped samples, behind OFFSET 0 (which keeps PostgreSQL from pushing
        # it down): a false one-time filter there skips the whole branch, where inside it PostgreSQL would
        # still start the parallel workers of the samples' scan (~6 ms measured) to find nothing.
        where = "WHERE " + guard.removeprefix("AND ") if no_rollup else ""
        return _sql(_RAW_POSTGRESQL, no_rollup=where, fence="OFFSET 0" if no_rollup else ""), params
    if connection.vendor == "sqlite":
        start_us = round(start.timestamp() * 1_000_000)
        params = [start_us, grid.last_us, grid.width_us, THROTTLE_BITS, POWER_CAP_BIT, run_id, *guard_params]
        return _sql(_RAW_SQLITE, no_rollup=guard), params
    raise NotSupportedError(f"telemetry_series has no SQL for {connection.vendor}.")


def _query(grid: Grid, start: datetime, run_id: int, *, rollup: bool) -> tuple[str, list[Any]]:
    if not rollup or grid.per_rollup is None:
        sql, params = _raw(grid, start, run_id, no_rollup=False)
        return f"{sql} ORDER BY 1, 2", params
    raw_sql, raw_params = _raw(grid, start, run_id, no_rollup=True)
    mask_params = [THROTTLE_BITS, POWER_CAP_BIT] if connection.vendor == "sqlite" else []
    rollup_sql = _sql(_ROLLUP, mask_rollup=_MASK_ROLLUP[connection.vendor])
    params = [grid.per_rollup, *mask_params, run_id, grid.rollup_width_us, *raw_params]
    return f"{rollup_sql} UNION ALL {raw_sql} ORDER BY 1, 2", params


def telemetry_series(
    *, run: BurnInRun, max_points: int = MAX_POINTS_DEFAULT, rollup: bool = True
) -> Telemetry:
    """Each GPU's telemetry of `run` in at most `max_points` time buckets, aggregated in one SQL query.

    The run's span (start to end) is cut into buckets of equal width (`telemetry_grid`). Per GPU and
    bucket: the mean temperature, power and SM clock, the peak temperature, the lowest margin, and
    whether any sample had a throttle bit (THROTTLE_BITS) or the software power cap set.

    Up to the rollup's number of buckets (ROLLUP_BUCKETS) the query reads the run's rollup
    (TelemetryRollup, written at ingest), and the samples only where the run has none (one written before
    the rollup existed); `rollup=False` reads the samples regardless (the tests and the bench compare the
    two). An index on the run, the rollup's unique one or the samples' (run, gpu_index, at), serves the
    scan. One query (two when the run has no end).
    """
    if max_points < 1:
        raise ValueError("max_points must be positive")
    span = span_s(run)
    grid = telemetry_grid(round(span * 1_000_000), max_points)
    start = run.started_at
    sql, params = _query(grid, start, run.pk, rollup=rollup)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    interval_s = grid.width_us / 1_000_000
    series = {
        gpu_index: _columns(list(group), interval_s)
        for gpu_index, group in itertools.groupby(rows, key=operator.itemgetter(0))
    }
    return Telemetry(run_id=run.pk, started_at=start, span_s=span, interval_s=interval_s, series=series)


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


def visible_server(user: Actor, pk: int) -> Server | None:
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


def visible_run(user: Actor, pk: int) -> BurnInRun | None:
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

_SEVERITY_RANK: dict[str, int] = {Severity.INFO: 0, Severity.WARN: 1, Severity.FAIL: 2}


@dataclass(frozen=True)
class Flag:
    """A highlighted cell: the worst severity of the findings on it, and their sentences (`Finding.text`)."""

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
    findings_by_severity: list[tuple[str, StrOrPromise, list[Finding]]]  # value, label, findings
    unwaived_fails: int
    gpu_rows: list[GpuRow]
    power_limits_w: dict[int, float]


#: Codes whose one finding covers several GPUs (`burnin.analysis.thermal.thermal`: the machine's thermal
#: margins, filed under the worst GPU): `evidence["gpus"]` holds each GPU's part, with its own severity.
MULTI_GPU_CODES = frozenset({"thermal_margin_low"})


def _marked_gpus(finding: Finding) -> list[tuple[int, str]]:
    """The GPUs a finding marks in the per-GPU table, each with the severity it has for that GPU."""
    parts = (finding.evidence or {}).get("gpus") if finding.code in MULTI_GPU_CODES else None
    if isinstance(parts, dict) and parts:
        return [
            (int(index), str((part or {}).get("severity") or finding.severity))
            for index, part in parts.items()
            if str(index).isdigit()
        ]
    return [] if finding.gpu_index is None else [(finding.gpu_index, finding.severity)]


def _flags(findings: list[Finding]) -> dict[int, dict[str, Flag]]:
    by_cell: dict[tuple[int, str], list[tuple[Finding, str]]] = defaultdict(list)
    for finding in findings:
        columns = [column for column, codes in COLUMN_CODES.items() if finding.code in codes]
        for gpu_index, severity in _marked_gpus(finding) if columns else []:
            if severity in _SEVERITY_RANK and severity != Severity.INFO:
                for column in columns:
                    by_cell[gpu_index, column].append((finding, severity))
    flags: dict[int, dict[str, Flag]] = defaultdict(dict)
    for (gpu_index, column), cell in by_cell.items():
        worst = max((severity for _, severity in cell), key=_SEVERITY_RANK.__getitem__)
        flags[gpu_index][column] = Flag(
            severity=worst,
            waived=all(f.waived for f, severity in cell if severity == worst),
            messages=[f.text for f, _ in cell],
        )
    return flags


def run_detail(run: BurnInRun) -> RunDetail:
    """The run's stages, findings (worst first, with their waivers) and per-GPU rows. Three queries."""
    stages = list(BurnInStage.objects.filter(run=run).order_by("position"))
    findings = list(
        Finding.objects.filter(run=run).select_related("waived_by", "explained_by").order_by("id")
    )
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


# --- export ----------------------------------------------------------------------------------------------

#: The columns of the telemetry export, in order (the handover pack's telemetry.csv).
TELEMETRY_CSV_COLUMNS = (
    "gpu_index",
    "at",
    "temp_c",
    "margin_c",
    "power_w",
    "sm_mhz",
    "util_pct",
    "clock_event_mask",
    "pcie_gen",
    "pcie_width",
)


def telemetry_csv(*, run: BurnInRun) -> bytes:
    """Every telemetry sample of `run` as CSV (a header, then one row per GPU and sample, by GPU and time;
    times in UTC as "2026-08-14 06:00:30+00", an empty cell where the probe had no value). One query.

    On PostgreSQL the database writes the CSV itself (COPY … TO STDOUT): for a 72 h run of 8 GPUs (207,360
    samples) that takes about a tenth of what reading the rows into Python and writing them with the csv
    module does (bench/bench_handover.py compares the two).
    """
    meta, quote = TelemetrySample._meta, connection.ops.quote_name
    columns = [quote(db_column(TelemetrySample, name)) for name in TELEMETRY_CSV_COLUMNS]
    order = f"{quote(db_column(TelemetrySample, 'gpu_index'))}, {quote(db_column(TelemetrySample, 'at'))}"
    if connection.vendor == "postgresql":
        # The session's time zone is UTC (Django sets it with USE_TZ), so a timestamp prints as
        # "2026-08-14 06:00:30+00": formatting it with to_char would double the query's time.
        sql = (
            f"COPY (SELECT {', '.join(columns)} FROM {quote(meta.db_table)} "
            f"WHERE {quote(db_column(TelemetrySample, 'run'))} = {int(run.pk)} ORDER BY {order}) "
            "TO STDOUT WITH (FORMAT csv)"
        )
        out = io.BytesIO()
        out.write((",".join(TELEMETRY_CSV_COLUMNS) + "\n").encode())
        with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
            for chunk in copy:
                out.write(chunk)
        return out.getvalue()
    return telemetry_csv_rows(run=run)


def telemetry_csv_rows(*, run: BurnInRun) -> bytes:
    """The same CSV as `telemetry_csv`, written row by row in Python (any database)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(TELEMETRY_CSV_COLUMNS)
    rows = (
        TelemetrySample.objects.filter(run=run)
        .order_by("gpu_index", "at")
        .values_list(*TELEMETRY_CSV_COLUMNS)
        .iterator(chunk_size=10_000)
    )
    for row in rows:
        writer.writerow((row[0], _csv_time(row[1]), *(_csv_number(value) for value in row[2:])))
    return out.getvalue().encode()


def _csv_time(value: datetime) -> str:
    """A time as PostgreSQL writes a timestamptz in UTC: "2026-08-14 06:00:30.5+00"."""
    text = value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return f"{text}+00"


def _csv_number(value: float | int | None) -> str:
    """A number as PostgreSQL writes it: the shortest text that reads back exactly, '61' for 61.0."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)
