"""The PM's quality page (`/pm/quality/`): the fleet's failure rates per lot, supplier, part and connector
position (issue #29), each table ranked by its 95 % interval's lower bound, with a chart of failures over time
per lot; each row's evidence (`/pm/quality/<kind>/<key>/`: the attributions counted in it, each linked to
where it can be corrected); and each table as CSV (`/pm/quality/<kind>.csv`).

PMs only, as every page under /pm/ (pipeline.pm_required). The figures come from pm.quality.selectors, a
fixed number of queries whatever the fleet's size; a filter the page does not know is a 400 page (or a 400
for the CSV) that names it, as on the warranty report.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from inventory.choices import PartCategory
from pm.quality.cache import fleet_tables
from pm.quality.charts import Series, failures_svg, month_table
from pm.quality.rows import KINDS, QualityRow
from pm.quality.selectors import evidence, failures_by_month, quality_row
from pm.views.pipeline import pm_required
from pm.views.warranty import _cell, _page_number
from warranty.choices import FailureCause, FailureStage
from werkbank.api.pagination import offset_page
from werkbank.choices import label_of
from werkbank.errors import InvalidInput

#: Each table's heading and what it counts, in the page's order (pm.quality.rows.KINDS).
SECTIONS: dict[str, tuple[Any, Any]] = {
    "lots": (
        _("Lots"),
        _("Components by the lot they were received in (a lot code that reappears joins it)."),
    ),
    "suppliers": (_("Suppliers"), _("Components by their supplier, per part category.")),
    "parts": (_("Parts"), _("Components by their part.")),
    "positions": (
        _("Connector positions"),
        _("Servers by the connector of their chassis layout that failed (not the card in it)."),
    ),
}
#: Rows shown per table, the worst first (a fleet of 10,000 servers has thousands of lots); the CSV and
#: the API have them all.
SHOWN_ROWS = 25
#: Lots drawn in the chart: the worst by their lower bound, with at least one failure.
CHART_LOTS = 5
#: Attributions per page of the evidence.
EVIDENCE_PAGE_SIZE = 100
#: The filters' values: a part category narrows the component tables; `flagged=1` keeps the flagged rows.
FLAGGED_VALUES = ("", "1")
#: The CSV's columns, in order (fractions for the rate, its interval and the threshold).
CSV_COLUMNS = (
    "kind",
    "key",
    "label",
    "category",
    "units",
    "in_service",
    "unit_years",
    "failures",
    *(f"failures_{stage}" for stage in FailureStage.values),
    "rate",
    "low",
    "high",
    "threshold",
    "min_units",
    "flagged",
)


@dataclass(frozen=True)
class ShownRow:
    """A row as the page shows it: percentages for the template, the stages in their order, the link."""

    row: QualityRow
    category: str
    stages: list[tuple[str, str, int]]
    rate: float | None
    low: float | None
    high: float | None
    threshold: float
    too_few: bool
    url: str


def _filters(request: HttpRequest) -> dict[str, str]:
    """The page's filters from the query string; InvalidInput names the one it does not know."""
    category = request.GET.get("category", "")
    if category and category not in PartCategory.values:
        raise InvalidInput(field="category", message=f"Unknown part category {category[:20]!r}.")
    flagged = request.GET.get("flagged", "")
    if flagged not in FLAGGED_VALUES:
        raise InvalidInput(field="flagged", message="flagged is 1 or empty.")
    return {"category": category, "flagged": flagged}


def _kept(row: QualityRow, filters: dict[str, str]) -> bool:
    if filters["flagged"] and not row.flagged:
        return False
    # Positions have no part category: a category filter leaves them all.
    return not filters["category"] or row.kind == "positions" or row.category == filters["category"]


def _percent(value: float | None) -> float | None:
    return None if value is None else value * 100


def _shown(row: QualityRow) -> ShownRow:
    interval = row.interval
    if row.kind == "positions":
        category = str(FailureCause.CONNECTOR.label)
    else:
        category = label_of(PartCategory, row.category, row.category)
    return ShownRow(
        row=row,
        category=category,
        stages=[(value, str(label), row.by_stage.get(value, 0)) for value, label in FailureStage.choices],
        rate=_percent(interval.rate if interval else None),
        low=_percent(interval.low if interval else None),
        high=_percent(interval.high if interval else None),
        threshold=row.threshold * 100,
        too_few=row.units < row.min_units,
        url=reverse("pm:quality-evidence", kwargs={"kind": row.kind, "key": row.key}),
    )


def _chart(lots: list[QualityRow]) -> dict[str, Any]:
    """The chart of the worst lots (by lower bound, with a failure) and its text alternative."""
    worst = [row for row in lots if row.failures][:CHART_LOTS]
    months = failures_by_month("lots", [row.key for row in worst]) if worst else {}
    series = [Series(label=row.label, points=months.get(row.key, [])) for row in worst]
    return {"svg": failures_svg(series), "series": series, "table": month_table(series)}


@pm_required
@require_GET
def quality_page(request: HttpRequest) -> HttpResponse:
    """The four tables ranked by their lower bound, the chart of failures per lot, the filters."""
    context: dict[str, Any] = {
        "categories": PartCategory.choices,
        "request_filters": {key: request.GET.get(key, "") for key in ("category", "flagged")},
    }
    try:
        filters = _filters(request)
    except InvalidInput as error:
        context["error_field"] = error.field
        return TemplateResponse(request, "pm/quality.html", context, status=400)
    tables, now = fleet_tables()
    sections = []
    for kind in KINDS:
        kept = [row for row in tables[kind] if _kept(row, filters)]
        sections.append(
            {
                "kind": kind,
                "title": SECTIONS[kind][0],
                "help": SECTIONS[kind][1],
                "rows": [_shown(row) for row in kept[:SHOWN_ROWS]],
                "total": len(kept),
                "csv": reverse("pm:quality-csv", kwargs={"kind": kind}),
            }
        )
    lots = [row for row in tables["lots"] if _kept(row, filters)]
    context.update({"filters": filters, "sections": sections, "chart": _chart(lots), "now": now})
    return TemplateResponse(request, "pm/quality.html", context)


@pm_required
@require_GET
def evidence_page(request: HttpRequest, kind: str, key: str) -> HttpResponse:
    """One row's figures and the attributions counted in it, newest first, paged; 404 for a row that
    does not exist."""
    if kind not in KINDS:
        raise Http404("No such quality table.")
    row = quality_row(kind, key)
    if row is None:
        raise Http404("No such row.")
    attributions = evidence(kind, key)
    total = attributions.count()
    pages = math.ceil(total / EVIDENCE_PAGE_SIZE)
    number = _page_number(request, pages)
    shown = offset_page(attributions, (number - 1) * EVIDENCE_PAGE_SIZE, EVIDENCE_PAGE_SIZE)
    for attribution in shown:
        attribution.stage_label = label_of(FailureStage, attribution.stage, attribution.stage)
        attribution.cause_label = label_of(FailureCause, attribution.cause, attribution.cause)
        attribution.proposed_label = label_of(
            FailureCause, attribution.proposed_cause, attribution.proposed_cause
        )
    context = {
        "kind": kind,
        "title": SECTIONS[kind][0],
        "shown": _shown(row),
        "attributions": shown,
        "total": total,
        "page": {"number": number, "pages": pages, "previous": number - 1, "next": number + 1},
    }
    return TemplateResponse(request, "pm/quality_evidence.html", context)


def _fraction(value: float | None) -> str:
    """A fraction with a decimal point whatever the language (never a locale's comma); empty for none."""
    return "" if value is None else f"{value:.6f}"


@pm_required
@require_GET
def quality_csv(request: HttpRequest, kind: str) -> HttpResponse:
    """One table with every column as CSV (UTF-8, one header row), in the page's order and filters."""
    if kind not in KINDS:
        raise Http404("No such quality table.")
    try:
        filters = _filters(request)
    except InvalidInput as error:
        return HttpResponseBadRequest(error.message, content_type="text/plain; charset=utf-8")
    tables, now = fleet_tables()
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"quality-{kind}-{timezone.localdate(now).isoformat()}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv.writer(response, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in tables[kind]:
        if not _kept(row, filters):
            continue
        interval = row.interval
        writer.writerow(
            [
                row.kind,
                _cell(row.key),
                _cell(row.label),
                row.category,
                row.units,
                row.in_service,
                f"{row.unit_years:.3f}",
                row.failures,
                *(row.by_stage.get(stage, 0) for stage in FailureStage.values),
                _fraction(interval.rate if interval else None),
                _fraction(interval.low if interval else None),
                _fraction(interval.high if interval else None),
                _fraction(row.threshold),
                row.min_units,
                "true" if row.flagged else "false",
            ]
        )
    return response
