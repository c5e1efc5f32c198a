"""Telemetry samples in: a report's `telemetry.gpu_series` as TelemetrySample rows, fast.

A 72 h run of 8 GPUs at 10 s is 207,360 samples. On PostgreSQL they go in through a binary COPY
(psycopg's `Copy.set_types` and `write_row`), on the connection and in the transaction of the caller (the
ingest); SQLite takes the same rows through `bulk_create`. `make bench` measures both on the same data.

Measured too, and left out: encoding the COPY BINARY tuples by hand, one `struct.Struct` per row shape,
saved ~10 % of the Python CPU time (0.33 against 0.37 s for 207,360 samples, the rows coming straight out
of `zip`) and no wall time: PostgreSQL storing the rows (~0.6 s here) is the bottleneck, and psycopg
sends as it goes. psycopg's own dumpers were kept over a hand-written wire format.

The report has been validated (`ingest.parse_report`): every series has `t_offset_s` and rows as long as
`gpu_columns`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import repeat
from typing import Any

from django.db import connection

from burnin.models import BurnInRun, TelemetrySample
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
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
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
