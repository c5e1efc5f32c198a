"""What every writer of the scale dataset shares: its size, the fixed figures, the id counter, the bulk writer
and the audit trail. The writers of each app's rows (`core`, `inventory`, `orders`, `builds`, `burnin`) take a
`Seeding` and append to it; nothing here knows any app's rows but the audit events."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db import connection, models

from werkbank.models import AuditEvent

#: Every timestamp counts from here, so that a re-run writes the same values.
EPOCH = datetime(2031, 1, 1, tzinfo=UTC)
#: The year in the order and PO numbers (WB-2031-0001): apart from the demo's and the tests' numbers.
YEAR = EPOCH.year
#: The password of every scale login (a fixed salt keeps the hash, and so the rows, the same on re-runs).
PASSWORD = "werkbank-scale"
PM_USERNAME = "scale-pm"
PARTNERS = 5
ORDERS_PER_CUSTOMER = 40
GPUS_PER_SERVER = 8
CPUS_PER_SERVER = 2
COMPONENTS_PER_SERVER = GPUS_PER_SERVER + CPUS_PER_SERVER
SAMPLE_INTERVAL = timedelta(seconds=10)


@dataclass(frozen=True)
class ScaleSize:
    """How big the dataset is: the command's options."""

    servers: int = 10_000
    components: int = 100_000
    samples: int = 1_700_000
    orders: int = 2_000
    seed: int = 15


def spread(total: int, parts: int) -> list[int]:
    """`total` cut into `parts` whole numbers that differ by at most one."""
    return [total * (i + 1) // parts - total * i // parts for i in range(parts)] if parts else []


@dataclass
class Ids:
    """The next primary key per table: the table's maximum when the seed began, plus what it wrote."""

    next: dict[type[models.Model], int] = field(default_factory=dict)

    @classmethod
    def after_current_rows(cls, tables: Iterable[type[models.Model]]) -> Ids:
        return cls(
            {
                model: (model._default_manager.aggregate(top=models.Max("pk"))["top"] or 0) + 1
                for model in tables
            }
        )

    def take(self, model: type[models.Model]) -> int:
        value = self.next[model]
        self.next[model] = value + 1
        return value


class Writer:
    """Writes rows of one table fast: COPY on PostgreSQL, executemany elsewhere. Rows are dicts or tuples in
    the order of `columns` (field names); values are Python values, converted per column once."""

    def __init__(self) -> None:
        self.counts: dict[type[models.Model], int] = {}

    def _converters(self, model: type[models.Model], names: list[str]) -> list[Callable[[Any], Any] | None]:
        postgres = connection.vendor == "postgresql"
        converters: list[Callable[[Any], Any] | None] = []
        for name in names:
            model_field = model._meta.get_field(name)
            if isinstance(model_field, models.JSONField):
                converters.append(lambda value: json.dumps(value, sort_keys=True))
            elif postgres:
                converters.append(None)
            elif isinstance(model_field, models.DateTimeField):
                converters.append(
                    lambda value: None if value is None else connection.ops.adapt_datetimefield_value(value)
                )
            elif isinstance(model_field, models.DecimalField):
                converters.append(lambda value: None if value is None else str(value))
            else:
                converters.append(None)
        return converters

    def write(self, model: type[models.Model], names: list[str], rows: Iterable[tuple[Any, ...]]) -> int:
        # A column the caller leaves out gets the field's default (or NULL, or ""), as the ORM would write it:
        # COPY knows nothing of Django's defaults.
        given = {model._meta.get_field(name).attname for name in names}
        rest: dict[str, Any] = {}
        for model_field in model._meta.concrete_fields:
            if model_field.attname in given:
                continue
            if model_field.has_default():
                rest[model_field.name] = model_field.get_default()
            elif model_field.null:
                rest[model_field.name] = None
            elif model_field.empty_strings_allowed:
                rest[model_field.name] = ""
            else:
                raise ValueError(f"{model._meta.label}.{model_field.name} needs a value")
        if rest:
            extra = tuple(rest.values())
            rows = (tuple(row) + extra for row in rows)
            names = [*names, *rest]
        columns = [model._meta.get_field(name).column for name in names]
        converters = self._converters(model, names)
        if any(converters):
            rows = (
                tuple(
                    value if convert is None else convert(value)
                    for value, convert in zip(row, converters, strict=True)
                )
                for row in rows
            )
        written = self._send(model._meta.db_table, columns, rows)
        self.counts[model] = self.counts.get(model, 0) + written
        return written

    @staticmethod
    def _send(db_table: str, columns: list[str], rows: Iterable[tuple[Any, ...]]) -> int:
        table = connection.ops.quote_name(db_table)
        quoted = ", ".join(connection.ops.quote_name(column) for column in columns)
        written = 0
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                raw = cursor.cursor  # psycopg 3's cursor: Django's wrapper has no copy()
                with raw.copy(f"COPY {table} ({quoted}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
                        written += 1
            else:
                placeholders = ", ".join(["%s"] * len(columns))
                sql = f"INSERT INTO {table} ({quoted}) VALUES ({placeholders})"
                batch: list[tuple[Any, ...]] = []
                for row in rows:
                    batch.append(row)
                    if len(batch) == 5000:
                        cursor.executemany(sql, batch)
                        written += len(batch)
                        batch = []
                if batch:
                    cursor.executemany(sql, batch)
                    written += len(batch)
        return written


class AuditTrail:
    """The audit events of the dataset, as the services would have written them: collected while the writers
    run, written last (their ids follow the order in which they were recorded)."""

    NAMES = [
        "id",
        "created_at",
        "actor",
        "verb",
        "content_type",
        "object_id",
        "object_repr",
        "before",
        "after",
        "note",
    ]

    def __init__(self, ids: Ids) -> None:
        self.ids = ids
        self.rows: list[tuple[Any, ...]] = []
        self._content_types: dict[type[models.Model], int] = {}

    def record(
        self,
        at: datetime,
        actor: int | None,
        verb: str,
        model: type[models.Model],
        pk: int,
        text: str,
        before: dict[str, Any],
        after: dict[str, Any],
        note: str = "",
    ) -> None:
        if model not in self._content_types:
            self._content_types[model] = ContentType.objects.get_for_model(model).pk
        self.rows.append(
            (
                self.ids.take(AuditEvent),
                at,
                actor,
                verb,
                self._content_types[model],
                str(pk),
                text[:200],
                before,
                after,
                note,
            )
        )

    def write(self, writer: Writer) -> int:
        return writer.write(AuditEvent, self.NAMES, self.rows)


@dataclass
class Seeding:
    """One run of the seed: its size, its one random generator, the ids, the writer and the audit trail.
    Every writer draws from `rng` in the order the seed calls it, so the call order is part of the rows."""

    size: ScaleSize
    ids: Ids
    log: Callable[[str], None]
    writer: Writer = field(default_factory=Writer)
    rng: random.Random = field(init=False)
    audit: AuditTrail = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.size.seed)
        self.audit = AuditTrail(self.ids)
