"""Telemetry samples in: a report's `telemetry.gpu_series` as TelemetrySample rows, fast.

A 72 h run of 8 GPUs at 10 s is 207,360 samples. On PostgreSQL they go in through a binary COPY
(psycopg's `Copy.set_types` and `write_row`), on the connection and in the transaction of the caller (the
ingest); SQLite takes the same rows through `bulk_create`. `make bench` measures both on the same data.

Measured too, and left out: encoding the COPY BINARY tuples by hand, one `struct.Struct` per row shape,
saved ~10 % of the Python CPU time (0.33 against 0.37 s for 207,360 samples, the rows coming straight out
of `zip`) and no wall time: PostgreSQL storing the rows (~0.6 s here) is the bottleneck, and psycopg
sends as it goes. psycopg's own dumpers were kept over a hand-written wire format.

The report has been validated (`upload.parse_report`): every series has `t_offset_s` and rows as long as
`gpu_columns`.

`store_rollup` then writes the run's TelemetryRollup from the stored samples, in one INSERT … SELECT …
GROUP BY in the same transaction: the chart query reads its few thousand rows instead of every sample
(`burnin.selectors.telemetry_series`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import repeat
from typing import Any, overload

from django.db import connection

from burnin.models import BurnInRun, TelemetryRollup, TelemetrySample
from burnin.selectors import (
    POWER_CAP_BIT,
    THROTTLE_BITS,
    rollup_buckets,
    span_s,
    telemetry_grid,
)
from werkbank.columns import db_column
from werkbank.errors import InvalidInput

#: Telemetry columns of the report (`gpu_columns`, burnin.md §5) → TelemetrySample fields. A column the
#: report lacks (an older driver has no T.Limit) is stored as NULL.
SAMPLE_COLUMNS: dict[str, str] = {
    "temp_c": "temp_c",
    "tlimit_c": "margin_c",
    "power_w": "power_w",
    "sm_mhz": "sm_mhz",
    "util_pct": "util_pct",
    "clocks_event_mask": "clock_event_mask",
    "pcie_gen": "pcie_gen",
    "pcie_width": "pcie_width",
}
#: Sample fields stored as integers, with the range of their column (smallint, bigint).
INTEGER_FIELDS = {
    "clock_event_mask": (-(2**63), 2**63 - 1),
    "pcie_gen": (-(2**15), 2**15 - 1),
    "pcie_width": (-(2**15), 2**15 - 1),
}
SAMPLE_FIELDS = ["run", "gpu_index", "at", *SAMPLE_COLUMNS.values()]
#: Rows per INSERT on the bulk_create path (Django lowers it further where the database needs it).
BULK_BATCH_SIZE = 5000


@overload
def report_time(value: str) -> datetime: ...
@overload
def report_time(value: None) -> None: ...
def report_time(value: str | None) -> datetime | None:
    """The probe's UTC timestamps (`2026-11-29T21:43:00Z`, checked by the schema's pattern)."""
    if value is None:
        return None
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


@dataclass(frozen=True)
class Series:
    """One GPU's telemetry, column by column: the sample times, and one list per value field
    (`SAMPLE_COLUMNS` order; a column the report lacks is all None)."""

    gpu_index: int
    times: list[datetime]
    values: list[list[Any]]


def telemetry_series(report: Mapping[str, Any]) -> Iterator[Series]:
    """The report's telemetry by GPU, in the order of `gpu_series`. Built column by column: fast in
    CPython. Integer fields are made ints (the schema allows 4.0 for 4) and checked against their column's
    range, a 400 naming the value's path otherwise."""
    telemetry = report["telemetry"]
    if not telemetry:
        return
    names = telemetry["gpu_columns"]
    t0 = report_time(telemetry["t0"] or report["probe"]["started_at"])
    assert t0 is not None  # the schema requires probe.started_at
    for key, rows in telemetry["gpu_series"].items():
        if not rows:
            continue
        offset = names.index("t_offset_s")  # parse_report refuses series without it
        values = []
        for name, field in SAMPLE_COLUMNS.items():
            if name not in names:
                values.append([None] * len(rows))
                continue
            at = names.index(name)
            column = [row[at] for row in rows]
            if field in INTEGER_FIELDS:
                column = [None if v is None else int(v) for v in column]
                _check_range(column, field, key, at)
            values.append(column)
        times = [t0 + timedelta(seconds=row[offset]) for row in rows]
        yield Series(gpu_index=int(key), times=times, values=values)


def _check_range(values: list[int | None], field: str, key: str, at: int) -> None:
    present = [v for v in values if v is not None]
    if not present:
        return
    low, high = INTEGER_FIELDS[field]
    if min(present) < low or max(present) > high:
        i = next(i for i, v in enumerate(values) if v is not None and not low <= v <= high)
        raise InvalidInput(
            "report", f"$.telemetry.gpu_series['{key}'][{i}][{at}]: {values[i]} is out of range for {field}."
        )


def store_samples(run: BurnInRun, report: Mapping[str, Any], *, method: str = "auto") -> int:
    """Insert the run's telemetry; the number of samples. `method`: "copy" (PostgreSQL's binary COPY,
    the default there), "bulk" (`bulk_create`, the default elsewhere and the fallback), or "auto"."""
    if method == "auto":
        method = "copy" if connection.vendor == "postgresql" else "bulk"
    if method == "copy":
        return _copy_samples(run, telemetry_series(report))
    if method == "bulk":
        return _bulk_samples(run, telemetry_series(report))
    raise ValueError(f"unknown method {method!r}")


def _rows(run: BurnInRun, series: Series) -> Iterator[tuple[Any, ...]]:
    """The series' samples as rows in `SAMPLE_FIELDS` order."""
    n = len(series.times)
    return zip(repeat(run.pk, n), repeat(series.gpu_index, n), series.times, *series.values, strict=True)


def _bulk_samples(run: BurnInRun, series: Iterable[Series]) -> int:
    names = ["run_id" if name == "run" else name for name in SAMPLE_FIELDS]
    count = 0
    for each in series:
        TelemetrySample.objects.bulk_create(
            (TelemetrySample(**dict(zip(names, row, strict=True))) for row in _rows(run, each)),
            batch_size=BULK_BATCH_SIZE,
        )
        count += len(each.times)
    return count


def db_type(field: Any) -> str:
    """The column type of a field; a foreign key's is its target's (bigint for a BigAutoField)."""
    return field.target_field.rel_db_type(connection) if field.is_relation else field.db_type(connection)


def _copy_samples(run: BurnInRun, series: Iterable[Series]) -> int:
    fields = [TelemetrySample._meta.get_field(name) for name in SAMPLE_FIELDS]
    columns = ", ".join(connection.ops.quote_name(db_column(TelemetrySample, name)) for name in SAMPLE_FIELDS)
    table = connection.ops.quote_name(TelemetrySample._meta.db_table)
    count = 0
    # psycopg's own cursor, on the ingest's connection and in its transaction.
    with (
        connection.cursor() as wrapper,
        wrapper.cursor.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)") as copy,
    ):
        copy.set_types([db_type(field) for field in fields])
        for each in series:
            for row in _rows(run, each):
                copy.write_row(row)
            count += len(each.times)
    return count


# The rollup's INSERT … SELECT: the buckets as `burnin.selectors` cuts them for the samples' query, with
# sums and counts in place of means so that coarser buckets re-aggregate them exactly.
_ROLLUP_COLUMNS = (
    "run_id, width_us, gpu_index, bucket, samples, temp_n, temp_sum_c, temp_max_c, margin_min_c, "
    "power_n, power_sum_w, sm_n, sm_sum_mhz, clock_event_mask"
)
_ROLLUP_POSTGRESQL = """
INSERT INTO {rollup} ({columns})
SELECT %s, %s, gpu, (EXTRACT(EPOCH FROM (bin - %s)) * 1000000)::bigint / %s, n, temp_n, temp_sum, temp_max,
       margin_min, power_n, power_sum, sm_n, sm_sum, mask
FROM (SELECT gpu_index AS gpu, date_bin(%s, LEAST(GREATEST(at, %s), %s), %s) AS bin, COUNT(*) AS n,
             COUNT(temp_c) AS temp_n, SUM(temp_c) AS temp_sum, MAX(temp_c) AS temp_max,
             MIN(margin_c) AS margin_min, COUNT(power_w) AS power_n, SUM(power_w) AS power_sum,
             COUNT(sm_mhz) AS sm_n, SUM(sm_mhz) AS sm_sum, BIT_OR(clock_event_mask) AS mask
      FROM {table} WHERE run_id = %s GROUP BY 1, 2) AS binned
"""
_ROLLUP_SQLITE = """
INSERT INTO {rollup} ({columns})
SELECT %s, %s, gpu_index,
       MIN(MAX(CAST(ROUND((julianday(at) - 2440587.5) * 86400000.0) AS INTEGER) * 1000 - %s, 0), %s) / %s,
       COUNT(*), COUNT(temp_c), SUM(temp_c), MAX(temp_c), MIN(margin_c), COUNT(power_w), SUM(power_w),
       COUNT(sm_mhz), SUM(sm_mhz), MAX(clock_event_mask & %s) | MAX(clock_event_mask & %s)
FROM {table} WHERE run_id = %s GROUP BY 3, 4
"""


def store_rollup(run: BurnInRun) -> int:
    """Write the run's telemetry rollup from its stored samples (one INSERT … SELECT); the number of rows.
    A run without a span (no end and no samples after its start) gets none: its charts read the samples."""
    span_us = round(span_s(run) * 1_000_000)
    if span_us <= 0:
        return 0
    grid = telemetry_grid(span_us, rollup_buckets(span_us))
    assert grid.per_rollup == 1 and grid.rollup_width_us == grid.width_us
    quote = connection.ops.quote_name
    names = {
        "rollup": quote(TelemetryRollup._meta.db_table),
        "table": quote(TelemetrySample._meta.db_table),
        "columns": _ROLLUP_COLUMNS,
    }
    start = run.started_at
    if connection.vendor == "postgresql":
        width = timedelta(microseconds=grid.width_us)
        last = start + timedelta(microseconds=grid.last_us)
        sql = _ROLLUP_POSTGRESQL.format(**names)
        # Any: a timedelta among them, which psycopg adapts but the stubs' parameter types do not list.
        params: list[Any] = [run.pk, grid.width_us, start, grid.width_us, width, start, last, start, run.pk]
    else:
        start_us = round(start.timestamp() * 1_000_000)
        sql = _ROLLUP_SQLITE.format(**names)
        params = [
            run.pk,
            grid.width_us,
            start_us,
            grid.last_us,
            grid.width_us,
            THROTTLE_BITS,
            POWER_CAP_BIT,
            run.pk,
        ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount
