"""The PM's warranty report (`/pm/warranty/`): warranty records across customers by how soon they end (tabs
for 30, 60, 90, 180 days and expired, with their counts), filterable by customer and kind, paged along the
records' (end date, id) index; its CSV (`/pm/warranty/records.csv`, the same filters, every row); the spares
in stock near the end of their supplier warranty; and the open claims and supplier returns.

PMs only, as every page under /pm/ (pipeline.pm_required). Reads come from the selectors of warranty and
inventory; a filter the report does not know is a 400 page (or a 400 for the CSV) that names it.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from datetime import date
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from inventory.selectors import spares_supplier_warranty_ending
from pm.views.pipeline import pm_required
from warranty.choices import RecordKind
from warranty.selectors import (
    REPORT_BUCKETS,
    open_claims_and_returns,
    report_bucket,
    report_customer,
    report_customers,
    report_kind,
    warranty_report,
    warranty_report_counts,
)
from werkbank.api.pagination import offset_page
from werkbank.errors import InvalidInput

#: Rows per page of the report.
PAGE_SIZE = 50
#: Spares listed on the page; the API (/api/v1/warranty/spares-ending/) pages through all of them.
SPARES_SHOWN = 200
#: The spares' horizon, as the issue asks: supplier warranties ending within 90 days (or ended).
SPARES_WITHIN_DAYS = 90
#: The CSV's columns, in order.
CSV_COLUMNS = (
    "serial",
    "kind",
    "description",
    "customer",
    "server",
    "order",
    "start_date",
    "term_months",
    "end_date",
    "days_left",
)


def _filters(request: HttpRequest) -> dict[str, Any]:
    """The report's filters from the query string; InvalidInput names the one it does not know."""
    return {
        "bucket": report_bucket(request.GET.get("bucket")),
        "customer": report_customer(request.GET.get("customer")),
        "kind": report_kind(request.GET.get("kind")),
    }


def _page_number(request: HttpRequest, pages: int) -> int:
    raw = request.GET.get("page", "")
    number = int(raw) if raw.isdigit() and len(raw) < 7 else 1
    return min(max(number, 1), max(pages, 1))


@pm_required
@require_GET
def warranty_page(request: HttpRequest) -> HttpResponse:
    """The report: bucket tabs with counts, filters, one page of records, the spares, claims and returns."""
    context: dict[str, Any] = {
        "buckets": REPORT_BUCKETS,
        "kinds": RecordKind.choices,
        "customers": list(report_customers()),
        "request_filters": {key: request.GET.get(key, "") for key in ("bucket", "customer", "kind")},
    }
    try:
        filters = _filters(request)
    except InvalidInput as error:
        context["error_field"] = error.field
        return TemplateResponse(request, "pm/warranty.html", context, status=400)
    today = timezone.localdate()
    counts = warranty_report_counts(customer=filters["customer"], kind=filters["kind"], today=today)
    total = counts[filters["bucket"]]
    pages = math.ceil(total / PAGE_SIZE)
    number = _page_number(request, pages)
    records = offset_page(warranty_report(**filters, today=today), (number - 1) * PAGE_SIZE, PAGE_SIZE)
    for record in records:
        record.days_left = (record.end_date - today).days
        record.days_ago = -record.days_left
    spares = spares_supplier_warranty_ending(within_days=SPARES_WITHIN_DAYS, today=today)
    context.update(
        {
            "filters": filters,
            "counts": counts,
            "tabs": [(bucket, counts[bucket]) for bucket in REPORT_BUCKETS],
            "records": records,
            "total": total,
            "page": {"number": number, "pages": pages, "previous": number - 1, "next": number + 1},
            "spares": spares[:SPARES_SHOWN],
            "spares_total": len(spares),
            "spares_within_days": SPARES_WITHIN_DAYS,
            "open": open_claims_and_returns(),
            "today": today,
        }
    )
    return TemplateResponse(request, "pm/warranty.html", context)


def _cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet will not run: text starting with = + - @ (or a tab or CR) gets a quote
    in front (OWASP, "CSV Injection"); numbers and dates stay as they are."""
    if isinstance(value, str) and value[:1] in {"=", "+", "-", "@", "\t", "\r"}:
        return "'" + value
    return value


class _Echo:
    """A file-like object whose write returns the line, for csv.writer into a streaming response."""

    def write(self, value: str) -> str:
        return value


def _csv_lines(records: Any, today: date) -> Iterator[str]:
    writer = csv.writer(_Echo(), lineterminator="\n")
    yield writer.writerow(CSV_COLUMNS)
    for record in records.iterator(chunk_size=2000):
        yield writer.writerow(
            [
                _cell(record.serial),
                record.kind,
                _cell(record.description),
                _cell(record.customer.name),
                _cell(record.server.hostname),
                _cell(record.order.reference),
                record.start_date.isoformat(),
                record.term_months,
                record.end_date.isoformat(),
                (record.end_date - today).days,
            ]
        )


@pm_required
@require_GET
def warranty_csv(request: HttpRequest) -> HttpResponse:
    """Every record of the report's filters as CSV (UTF-8, one header row), streamed in its order."""
    try:
        filters = _filters(request)
    except InvalidInput as error:
        return HttpResponseBadRequest(error.message, content_type="text/plain; charset=utf-8")
    today = timezone.localdate()
    records = warranty_report(**filters, today=today)
    response = StreamingHttpResponse(_csv_lines(records, today), content_type="text/csv; charset=utf-8")
    name = f"warranty-{filters['bucket']}-{today.isoformat()}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
