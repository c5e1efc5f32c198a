"""Tables as CSV and XLSX files: the admin's list exports (werkbank/admin_io.py) and the portal's downloads.

Written with tablib (django-import-export's table library). A text cell that a spreadsheet would read as a
formula (it starts with =, +, -, @, a tab or a carriage return, and is no number) is written with a leading
apostrophe, so that a serial or a note typed as "=HYPERLINK(...)" stays text when the file is opened (OWASP,
"CSV Injection"). Numbers keep their sign.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any

import tablib
from django.http import HttpResponse
from import_export.formats import base_formats

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def defused(value: Any) -> Any:
    """The cell as written: text a spreadsheet would evaluate gets a leading apostrophe."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    try:
        Decimal(value)
    except InvalidOperation:
        return f"'{value}"
    return value  # a negative number, e.g. a month's net of -1250.00


def defused_dataset(dataset: tablib.Dataset) -> tablib.Dataset:
    return tablib.Dataset(*[[defused(cell) for cell in row] for row in dataset], headers=dataset.headers)


class CSV(base_formats.CSV):
    def export_data(self, dataset: tablib.Dataset, **kwargs: Any) -> Any:
        return super().export_data(defused_dataset(dataset), **kwargs)


class XLSX(base_formats.XLSX):
    def export_data(self, dataset: tablib.Dataset, **kwargs: Any) -> Any:
        from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

        # A control character that a text may hold (not NUL: no text stores one) has no place in a
        # worksheet: it is written as U+FFFD instead of failing the whole export.
        cleaned = tablib.Dataset(
            *[
                [ILLEGAL_CHARACTERS_RE.sub("\ufffd", cell) if isinstance(cell, str) else cell for cell in row]
                for row in defused_dataset(dataset)
            ],
            headers=dataset.headers,
        )
        return super().export_data(cleaned, **kwargs)


def csv_response(filename: str, headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> HttpResponse:
    """A CSV download (UTF-8 with a byte-order mark, so that a spreadsheet reads umlauts right)."""
    dataset = tablib.Dataset(*[list(row) for row in rows], headers=[str(header) for header in headers])
    response = HttpResponse("\ufeff" + CSV().export_data(dataset), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
