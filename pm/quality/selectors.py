"""The fleet's failure rates (issue #29): one row per lot, supplier, part or connector position.

Definitions (the page, the API, the CSV and the procurement checks all read these rows):

- **lots**: key ``(part id, lot code)`` across `BatchLot` rows: a lot is stored per receipt, so the same lot
  code of the same part received on a second purchase order joins the first one's history.
  **suppliers**: per ``(supplier, part category)`` (a supplier's GPUs are not its cables).
  **parts**: per `Part`. **positions**: per ``(chassis layout, connector name)``; a server's layout is its
  order's configuration's chassis part's `ChassisLayout` (as `builds.proposals.server_layout`, in bulk).
- **units**: the distinct components ever installed in a server (`Installation`); **in_service**: those of
  them installed now (``removed_at`` null); **unit_years**: the sum over the installations of
  ``(removed_at or now) − installed_at`` (`formulas.unit_years`). For positions: units are the distinct
  servers of the layout with an installation in a connector of that name, in service those with an active
  one, unit-years from those installations.
- **failures**: the distinct components with an attribution ``cause=component`` (lots, suppliers, parts), or
  the distinct servers with an attribution ``cause=connector`` on a connector of that name (positions).
  ``by_stage``: distinct failed units per stage. A failed unit that was never installed (a card dead on
  arrival, a connector blacklisted before anything went into it) still counts as a unit: units are
  ``|installed ∪ failed|``, so failures never exceed units.
- **interval**: `formulas.wilson_interval(failures, units)`; **threshold**:
  ``settings.WERKBANK_QUALITY_FLAG_LOWER_BOUND`` by part category (``"connector"`` for positions), else its
  ``"default"``; **min_units**: ``WERKBANK_QUALITY_MIN_UNITS`` (``..._POSITION`` for positions);
  **flagged**: `formulas.is_flagged`.

The labels speak the active language (a lot's "Lot L-2291 of RTX 5090", a position's "PCIe-2 on 7U
chassis"); the procurement checks read them under English for what the audit stores.

Each function runs a fixed number of queries however large the fleet: the counts are aggregated in SQL
(pm.quality.tallies: one statement for the three component tables, one for the positions, which also read
the configurations' layouts); `quality_tables` gives the page all four tables from three queries. Host and
environment attributions count nowhere.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, DateField, F, Q, QuerySet
from django.db.models.functions import TruncMonth
from django.utils import timezone
from django.utils.translation import gettext

from inventory.choices import PartCategory
from orders.models import ConfigurationLine
from pm.quality.formulas import is_flagged, unit_years, wilson_interval
from pm.quality.rows import KINDS, QualityRow
from pm.quality.tallies import STAGE_COLUMNS, component_groups, position_groups, seconds
from warranty.choices import FailureCause, FailureStage
from warranty.models import Attribution

#: The threshold key of connector positions in WERKBANK_QUALITY_FLAG_LOWER_BOUND.
CONNECTOR = "connector"

#: Per kind, what Attribution groups by in `failures_by_month`, under the names of the tallies' columns.
_MONTH_GROUPS: dict[str, dict[str, str]] = {
    "lots": {"part_id": "component__part_id", "lot_code": "component__lot__lot_code"},
    "suppliers": {"supplier_id": "component__lot__supplier_id", "category": "component__part__category"},
    "parts": {"part_id": "component__part_id"},
    "positions": {"configuration_id": "server__order__configuration_id", "connector_name": "connector__name"},
}

Layouts = dict[int, tuple[int, str]]


@dataclass
class _Tally:
    """The sums behind one row while they are gathered."""

    label: str = ""
    category: str = ""
    units: int = 0
    in_service: int = 0
    seconds: float = 0.0
    failures: int = 0
    by_stage: dict[str, int] = field(default_factory=dict)


def threshold_for(category: str) -> float:
    """The flag's lower-bound threshold for a part category (or ``"connector"``)."""
    thresholds: dict[str, float] = settings.WERKBANK_QUALITY_FLAG_LOWER_BOUND
    return float(thresholds.get(category, thresholds.get("default", 0.05)))


def min_units_for(kind: str) -> int:
    if kind == "positions":
        return int(settings.WERKBANK_QUALITY_MIN_UNITS_POSITION)
    return int(settings.WERKBANK_QUALITY_MIN_UNITS)


def quality_rows(kind: str, *, now: datetime | None = None) -> list[QualityRow]:
    """Every row of one table, worst first: by the interval's lower bound (rows without one last), then by
    failures, then by label. One query (two for positions)."""
    return _ranked(_rows(kind, key=None, now=now))


def quality_tables(*, now: datetime | None = None) -> dict[str, list[QualityRow]]:
    """All four tables, each ranked as `quality_rows` ranks it, from three queries (the component tables
    share theirs): for a page that shows them all."""
    now = now or timezone.now()
    groups = component_groups(Q(), now)
    tables = {kind: _ranked(_build(kind, groups, {})) for kind in KINDS if kind != "positions"}
    layouts = _layouts()
    tables["positions"] = _ranked(_build("positions", position_groups(Q(), now), layouts))
    return {kind: tables[kind] for kind in KINDS}


def quality_row(kind: str, key: str, *, now: datetime | None = None) -> QualityRow | None:
    """One row by its key (`QualityRow.key`); None for a malformed key or one with no units."""
    return next((row for row in _rows(kind, key=key, now=now) if row.key == key), None)


def layout_positions(layout_id: int, *, now: datetime | None = None) -> list[QualityRow]:
    """The connector positions of one chassis layout, by connector name (the bench's blacklist
    proposals). Two queries."""
    within = Q(server__order__configuration_id__in=_layout_configurations(layout_id))
    layouts = _layouts()
    rows = _build("positions", position_groups(within, now or timezone.now()), layouts)
    prefix = f"{layout_id}:"
    return sorted((row for row in rows if row.key.startswith(prefix)), key=lambda row: row.key)


def evidence(kind: str, key: str) -> QuerySet[Attribution]:
    """The attributions counted in one row, newest first, with what a list of them shows. Empty for a
    malformed key. Lazy: the caller pages it."""
    _check_kind(kind)
    queryset = Attribution.objects.select_related(
        "server",
        "finding__run",
        "claim",
        "blacklist__connector",
        "component__lot__part",
        "connector",
    )
    match = _key_filter(kind, key)
    if match is None:
        return queryset.none()
    if kind == "positions":
        return queryset.filter(match, cause=FailureCause.CONNECTOR)
    return queryset.filter(match, cause=FailureCause.COMPONENT)


def failures_by_month(kind: str, keys: Sequence[str]) -> dict[str, list[tuple[date, int]]]:
    """Per key: (first of the month, distinct failed units that month), oldest first, months without a
    failure left out. One query (two for positions)."""
    _check_kind(kind)
    matches = [match for key in keys if (match := _key_filter(kind, key)) is not None]
    result: dict[str, list[tuple[date, int]]] = {key: [] for key in keys}
    if not matches:
        return result
    either = Q()
    for match in matches:
        either |= match
    if kind == "positions":
        layouts = _layouts()
        unit, cause = "server", FailureCause.CONNECTOR
    else:
        layouts, unit, cause = {}, "component", FailureCause.COMPONENT
    group = {name: F(path) for name, path in _MONTH_GROUPS[kind].items()}
    monthly = (
        Attribution.objects.filter(either, cause=cause)
        .annotate(**group, month=TruncMonth("occurred_at", output_field=DateField()))
        .values(*group, "month")
        .annotate(n=Count(unit, distinct=True))
        .order_by("month")
    )
    # Positions: one layout's configurations are separate rows here (disjoint servers): their sums add up.
    sums: dict[str, dict[date, int]] = defaultdict(lambda: defaultdict(int))
    for entry in monthly:
        row_key = _row_key(kind, entry, layouts)
        if row_key in result:
            sums[row_key][entry["month"]] += entry["n"]
    for row_key, months in sums.items():
        result[row_key] = sorted(months.items())
    return result


# --- the rows ---------------------------------------------------------------------------------------------


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown quality table {kind!r}: one of {', '.join(KINDS)}")


def _ranked(rows: Iterable[QualityRow]) -> list[QualityRow]:
    return sorted(
        rows,
        key=lambda row: (
            row.interval is None,
            -(row.interval.low if row.interval else 0.0),
            -row.failures,
            row.label,
        ),
    )


def _rows(kind: str, *, key: str | None, now: datetime | None) -> list[QualityRow]:
    _check_kind(kind)
    now = now or timezone.now()
    match = Q() if key is None else _key_filter(kind, key)
    if match is None:
        return []
    if kind == "positions":
        layouts = _layouts()
        return _build(kind, position_groups(match, now), layouts)
    return _build(kind, component_groups(match, now), {})


def _build(kind: str, groups: Iterable[dict[str, Any]], layouts: Layouts) -> list[QualityRow]:
    """The rows of one table from the tallies' groups: a group is a lot row (one receipt of a lot code) or
    a (configuration, connector name); each adds to its row (the groups' units are disjoint). Thousands of
    lots at fleet scale: what does not change from row to row is looked up once."""
    tallies: dict[str, _Tally] = defaultdict(_Tally)
    stages = list(zip(FailureStage.values, STAGE_COLUMNS, strict=True))
    for entry in groups:
        row_key = _row_key(kind, entry, layouts)
        if row_key is None:
            continue
        tally = tallies[row_key]
        if not tally.label:
            tally.label, tally.category = _label(kind, entry, layouts)
        tally.units += entry["units"]
        tally.in_service += entry["in_service"] or 0
        tally.seconds += seconds(entry["service"])
        tally.failures += entry["failures"] or 0
        for stage, column in stages:
            if entry[column]:
                tally.by_stage[stage] = tally.by_stage.get(stage, 0) + entry[column]
    thresholds: dict[str, float] = {}
    minimum = min_units_for(kind)
    rows = []
    for row_key, tally in tallies.items():
        if tally.category not in thresholds:
            thresholds[tally.category] = threshold_for(tally.category)
        rows.append(_row(kind, row_key, tally, threshold=thresholds[tally.category], minimum=minimum))
    return rows


def _row(kind: str, row_key: str, tally: _Tally, *, threshold: float, minimum: int) -> QualityRow:
    interval = wilson_interval(tally.failures, tally.units)
    return QualityRow(
        kind=kind,
        key=row_key,
        label=tally.label,
        category=tally.category,
        units=tally.units,
        in_service=tally.in_service,
        unit_years=unit_years(tally.seconds),
        failures=tally.failures,
        by_stage=dict(tally.by_stage),
        interval=interval,
        threshold=threshold,
        min_units=minimum,
        flagged=is_flagged(interval, units=tally.units, threshold=threshold, min_units=minimum),
    )


# --- keys and labels --------------------------------------------------------------------------------------


def _layouts() -> Layouts:
    """Configuration id → (its chassis layout's id, the chassis' name). One query; a configuration with two
    chassis lines takes its first, as `server_layout` does."""
    layouts: Layouts = {}
    lines = (
        ConfigurationLine.objects.filter(part__category=PartCategory.CHASSIS, part__layout__isnull=False)
        .order_by("configuration_id", "pk")
        .values_list("configuration_id", "part__layout__id", "part__name")
    )
    for configuration_id, layout_id, name in lines:
        layouts.setdefault(configuration_id, (layout_id, name))
    return layouts


def _row_key(kind: str, entry: dict[str, Any], layouts: Layouts) -> str | None:
    if kind == "lots":
        return f"{entry['part_id']}:{entry['lot_code']}"
    if kind == "suppliers":
        return f"{entry['supplier_id']}:{entry['category']}"
    if kind == "parts":
        return str(entry["part_id"])
    layout = layouts.get(entry["configuration_id"])
    return None if layout is None else f"{layout[0]}:{entry['connector_name']}"


def _label(kind: str, entry: dict[str, Any], layouts: Layouts) -> tuple[str, str]:
    """A row's label (in the active language) and its threshold's category."""
    if kind == "lots":
        label = gettext("Lot %(lot)s of %(part)s") % {"lot": entry["lot_code"], "part": entry["part_name"]}
        return label, entry["category"]
    if kind == "suppliers":
        return f"{entry['supplier_name']}, {PartCategory(entry['category']).label}", entry["category"]
    if kind == "parts":
        return f"{entry['manufacturer']} {entry['part_name']} ({entry['mpn']})", entry["category"]
    _, chassis = layouts[entry["configuration_id"]]
    label = gettext("%(connector)s on %(chassis)s") % {
        "connector": entry["connector_name"],
        "chassis": chassis,
    }
    return label, CONNECTOR


def _key_filter(kind: str, key: str) -> Q | None:
    """The rows of one key, for Installation and Attribution alike; None for a malformed key. The first ':'
    splits (a lot code or a connector name may hold one)."""
    if "\x00" in key:  # PostgreSQL takes no NUL in a string: no such row
        return None
    head, colon, tail = key.partition(":")
    if kind == "parts":
        part = _id(key)
        return None if part is None else Q(component__part_id=part)
    row_id = _id(head)
    if not colon or row_id is None or not tail:
        return None
    if kind == "lots":
        return Q(component__part_id=row_id, component__lot__lot_code=tail)
    if kind == "suppliers":
        return Q(component__lot__supplier_id=row_id, component__part__category=tail)
    # positions: the configurations whose chassis has this layout, and the connector's name.
    return Q(server__order__configuration_id__in=_layout_configurations(row_id), connector__name=tail)


def _id(text: str) -> int | None:
    """A primary key written in a key: ASCII digits within the database's integer (else no such row)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 18:
        return None
    value = int(text)
    return value if value < 2**63 else None


def _layout_configurations(layout_id: int) -> QuerySet[ConfigurationLine, Any]:
    """The configurations whose chassis has this layout, as a subquery."""
    return ConfigurationLine.objects.filter(
        part__category=PartCategory.CHASSIS, part__layout__id=layout_id
    ).values("configuration_id")
