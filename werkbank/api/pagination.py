"""Pagination for every list: limit/offset by default; keyset (cursor) pages beside it on the big lists.

Limit/offset (`?limit=&offset=`) answers `count` and lets a client jump to any page, but the database still
reads every row before the offset, and counts the whole list, on every page: fine for orders or sites,
slow at offset 9,900 of 530,000 connectors. The big lists (components, stock movements, connectors,
installations, allocations, telemetry samples) therefore also offer keyset pages: `?cursor=` (empty for
the first page) switches to them, and each answer's `next`/`previous` links carry an opaque cursor. A keyset
page is in ascending `id` (the primary key's index) and starts right after the last row of the page
before, so every page costs the same, deep or not, and a row added while a client pages through appears
once, at the end. It answers no `count`, and refuses `ordering` (400): a cursor only stays valid along
the order it was made for. `limit` sets the page size in both modes (default 50, at most 200).
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework.pagination import BasePagination, CursorPagination, LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response

from werkbank.errors import InvalidInput

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


class Pagination(LimitOffsetPagination):
    """The default: `?limit=&offset=`, with the list's total in `count`."""

    default_limit = DEFAULT_LIMIT
    max_limit = MAX_LIMIT


class KeysetPagination(CursorPagination):
    """Keyset pages in ascending id: each page is an index range scan after the last id seen."""

    ordering = ("id",)
    page_size = DEFAULT_LIMIT
    page_size_query_param = "limit"
    max_page_size = MAX_LIMIT

    def get_ordering(self, request: Request, queryset: QuerySet, view: Any) -> tuple[str, ...]:
        # Deliberately not the view's OrderingFilter: the cursor encodes an id, so the order is the id's.
        if request.query_params.get("ordering"):
            raise InvalidInput(
                "ordering",
                "Cursor pages are in id order; leave out `ordering`, or page with limit and offset.",
            )
        return self.ordering


class KeysetOrOffsetPagination(BasePagination):
    """Limit/offset unless the request names `cursor` (even empty): then keyset pages (see the module)."""

    cursor_query_param = KeysetPagination.cursor_query_param

    def __init__(self) -> None:
        self.offset = Pagination()
        self.keyset = KeysetPagination()
        self.active: BasePagination = self.offset

    def paginate_queryset(self, queryset: QuerySet, request: Request, view: Any = None) -> list | None:
        keyset = self.cursor_query_param in request.query_params
        self.active = self.keyset if keyset else self.offset
        return self.active.paginate_queryset(queryset, request, view)

    def get_paginated_response(self, data: Any) -> Response:
        return self.active.get_paginated_response(data)

    def get_paginated_response_schema(self, schema: dict) -> dict:
        described = self.offset.get_paginated_response_schema(schema)
        described["required"] = ["results"]
        described["properties"]["count"]["description"] = "The list's total; on limit/offset pages only."
        described["properties"]["next"]["description"] = (
            "The next page: limit/offset, or with `cursor` when this page was a cursor page."
        )
        return described

    def get_schema_operation_parameters(self, view: Any) -> list[dict]:
        parameters = self.offset.get_schema_operation_parameters(view)
        parameters.append(
            {
                "name": self.cursor_query_param,
                "required": False,
                "in": "query",
                "description": (
                    "Keyset pages instead of limit/offset: give it empty for the first page, then follow "
                    "`next`. Pages are in ascending id, cost the same at any depth, and carry no `count`; "
                    "`offset` and `ordering` do not apply (`ordering` is refused)."
                ),
                "schema": {"type": "string"},
            }
        )
        return parameters
