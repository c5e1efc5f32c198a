"""The counts behind the quality rows (pm.quality.selectors), aggregated in SQL: one statement for the three
component tables together (grouped per lot row, BatchLot, the finest grain, which the selectors add up
into lots, suppliers and parts), one for the connector positions (grouped by configuration and connector
name).

Why SQL of its own: a unit is counted once however many installations and attributions it has, and a
``COUNT(DISTINCT …)`` per group makes PostgreSQL sort the 80,000 installations of the scale dataset (and
spill the sort to disk) for each table. Instead each unit is first folded into one row in two grouped
subqueries (its installations; its attributions), and the two are joined on the unit with a FULL OUTER
JOIN: a unit that failed but was never installed (a card dead on arrival, a connector blacklisted before
anything went into it) still counts. Only then are the folded rows joined to their lots or servers and
grouped. The subqueries are the ORM's own (so the duration arithmetic is each backend's: seconds on
PostgreSQL, integer microseconds on SQLite); only the outer statement is written here, in SQL that
PostgreSQL and SQLite (3.39 and later, for the FULL OUTER JOIN) both read. Its parameters are the ORM's.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import (
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    Field,
    FloatField,
    Model,
    Q,
    QuerySet,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce, Extract

from builds.models import Connector, Installation, Server
from inventory.models import BatchLot, Component, Part, Supplier
from orders.models import Order
from warranty.choices import FailureCause, FailureStage
from warranty.models import Attribution

#: The stage columns of every tally row: ``stage_<stage>``, distinct failed units at that stage.
STAGE_COLUMNS = tuple(f"stage_{stage}" for stage in FailureStage.values)


def component_groups(match: Q, now: datetime) -> list[dict[str, Any]]:
    """Per lot (a BatchLot row: one receipt of a lot code): units, in_service, service, failures and the
    stage columns, with the fields of the keys and labels (part_id, lot_code, supplier_id, part_name,
    manufacturer, mpn, category, supplier_name). One query."""
    installed, failed = _unit_queries(match, now, unit="component_id", cause=FailureCause.COMPONENT)
    fold = (
        f"JOIN {_table(Component)} c ON c.{_pk(Component)} = COALESCE(i.unit, f.unit)",
        (f"c.{_column(Component, 'lot')}",),
    )
    labels = (
        f"l.{_column(BatchLot, 'part')} AS part_id, l.{_column(BatchLot, 'lot_code')} AS lot_code, "
        f"l.{_column(BatchLot, 'supplier')} AS supplier_id, p.{_column(Part, 'name')} AS part_name, "
        f"p.{_column(Part, 'manufacturer')} AS manufacturer, p.{_column(Part, 'mpn')} AS mpn, "
        f"p.{_column(Part, 'category')} AS category, s.{_column(Supplier, 'name')} AS supplier_name",
        f"JOIN {_table(BatchLot)} l ON l.{_pk(BatchLot)} = g.grain "
        f"JOIN {_table(Part)} p ON p.{_pk(Part)} = l.{_column(BatchLot, 'part')} "
        f"JOIN {_table(Supplier)} s ON s.{_pk(Supplier)} = l.{_column(BatchLot, 'supplier')}",
    )
    return _run(installed, failed, fold=fold, labels=labels)


def position_groups(match: Q, now: datetime) -> list[dict[str, Any]]:
    """Per (configuration, connector name): units (servers), in_service, service, failures and the stage
    columns, as configuration_id and connector_name. One query.

    A server has one connector of each name, so its connectors stand for it: the units are folded per
    connector (no join), and only the folded rows are joined to their connectors, servers and orders."""
    installed, failed = _unit_queries(match, now, unit="connector_id", cause=FailureCause.CONNECTOR)
    fold = (
        f"JOIN {_table(Connector)} cn ON cn.{_pk(Connector)} = COALESCE(i.unit, f.unit) "
        f"JOIN {_table(Server)} sv ON sv.{_pk(Server)} = cn.{_column(Connector, 'server')} "
        f"JOIN {_table(Order)} o ON o.{_pk(Order)} = sv.{_column(Server, 'order')}",
        (f"o.{_column(Order, 'configuration')}", f"cn.{_column(Connector, 'name')}"),
    )
    labels = ("g.grain AS configuration_id, g.grain_2 AS connector_name", "")
    return _run(installed, failed, fold=fold, labels=labels)


#: What the summed service time is multiplied by to give seconds: 1 where it is seconds already (PostgreSQL,
#: by the vendor), 1e-6 for SQLite's microseconds.
_SERVICE_SCALE = {True: 1.0, False: 1e-6}


def seconds(service: Any) -> float:
    """A summed service time as the statement returns it: seconds (PostgreSQL, where the subquery took the
    interval's epoch), microseconds (SQLite, whose durations are integers), or nothing."""
    if service is None:
        return 0.0
    if isinstance(service, timedelta):
        return service.total_seconds()
    return float(service) * _SERVICE_SCALE[connection.vendor == "postgresql"]


# --- the statement ----------------------------------------------------------------------------------------


def _unit_queries(
    match: Q, now: datetime, *, unit: str, cause: str
) -> tuple[QuerySet[Any, Any], QuerySet[Any, Any]]:
    """Per unit (a component, or a connector standing for its server): its installations (how many
    active, their service time), and its attributions to `cause` per stage."""
    keys = {"unit": F(unit)}
    service: Any = ExpressionWrapper(
        Coalesce(F("removed_at"), Value(now)) - F("installed_at"), output_field=DurationField()
    )
    if connection.vendor == "postgresql":
        # Seconds, not an interval: PostgreSQL adds up floats several times faster than intervals.
        service = Extract(service, "epoch", output_field=FloatField())
    installed = (
        Installation.objects.filter(match)
        .annotate(**keys)
        .values(*keys)
        .annotate(active=Count("pk", filter=Q(removed_at__isnull=True)), service=Sum(service))
        .order_by()
    )
    stages = {
        column: Count("pk", filter=Q(stage=stage))
        for column, stage in zip(STAGE_COLUMNS, FailureStage.values, strict=True)
    }
    failed = (
        Attribution.objects.filter(match, cause=cause)
        .annotate(**keys)
        .values(*keys)
        .annotate(**stages)
        .order_by()
    )
    return installed, failed


def _run(
    installed: QuerySet[Any, Any],
    failed: QuerySet[Any, Any],
    *,
    fold: tuple[str, tuple[str, ...]],
    labels: tuple[str, str],
) -> list[dict[str, Any]]:
    """The statement: the units' two folds FULL OUTER JOINed on the unit, joined by `fold[0]` to the grain
    `fold[1]` (one or two columns, grouped as `grain`, `grain_2`); then the few grouped rows joined to what
    labels them (`labels`: the columns, the joins on `g`)."""
    installed_sql, installed_params = installed.query.sql_with_params()
    failed_sql, failed_params = failed.query.sql_with_params()
    stage_sums = ", ".join(
        f"SUM(CASE WHEN f.{column} > 0 THEN 1 ELSE 0 END) AS {column}" for column in STAGE_COLUMNS
    )
    joins, grains = fold
    grain_columns = ", ".join(
        f"{expression} AS grain{'' if n == 1 else f'_{n}'}" for n, expression in enumerate(grains, start=1)
    )
    sums = ", ".join(f"g.{name}" for name in ("units", "in_service", "service", "failures", *STAGE_COLUMNS))
    sql = (
        f"SELECT {labels[0]}, {sums} FROM ("
        f"SELECT {grain_columns}, COUNT(*) AS units, "
        "SUM(CASE WHEN i.active > 0 THEN 1 ELSE 0 END) AS in_service, "
        "SUM(i.service) AS service, "
        "SUM(CASE WHEN f.unit IS NULL THEN 0 ELSE 1 END) AS failures, "
        f"{stage_sums} "
        f"FROM ({installed_sql}) i FULL OUTER JOIN ({failed_sql}) f ON f.unit = i.unit "
        f"{joins} "
        f"GROUP BY {', '.join(grains)}"
        f") g {labels[1]}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*installed_params, *failed_params])
        names = [column[0] for column in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _column(model: type[Model], field: str) -> str:
    concrete = model._meta.get_field(field)
    assert isinstance(concrete, Field) and concrete.column  # a concrete field: it has a column
    return connection.ops.quote_name(concrete.column)


def _pk(model: type[Model]) -> str:
    assert model._meta.pk is not None and model._meta.pk.column
    return connection.ops.quote_name(model._meta.pk.column)
