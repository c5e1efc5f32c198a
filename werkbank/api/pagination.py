"""Pagination for every list: limit/offset by default; keyset (cursor) pages beside it on the big lists.

Limit/offset (`?limit=&offset=`) answers `count` and lets a client jump to any page, but the database still
reads every row before the offset, and counts the whole list, on every page: fine for orders or sites,
slow at offset 9,900 of 530,000 connectors. The big lists (components, stock movements, connectors,
installations, allocations, servers) therefore also offer keyset pages: `?cursor=` (empty for the first page)
switches to them, and each answer's `next`/`previous` links carry an opaque cursor. A keyset page runs
along an index and starts right after the last row of the page before, so every page costs the same, deep
or not. It answers no `count`, and refuses `ordering` (400): a cursor only stays valid along the order it
was made for. `limit` sets the page size in both modes (default 50, at most 200).

The keyset order is the viewset's `keyset_ordering`: ascending `id` by default (components, stock
movements), and the list's own default order for the rows of a server (connectors, installations,
allocations: server, then position or time, then id), whose index also serves a partner's view of only
its own servers; ordered by id, that view would have to collect and sort all of the partner's rows first.
The cursor holds the whole key of the row it continues from (opaque: base64 of JSON), so each row appears
exactly once going forward and back, also where the leading column repeats.
"""

from __future__ import annotations

import base64
import binascii
import json
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Q, QuerySet
from rest_framework.pagination import BasePagination, LimitOffsetPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import replace_query_param

from werkbank.errors import InvalidInput

DEFAULT_LIMIT = 50
MAX_LIMIT = 200


class Pagination(LimitOffsetPagination):
    """The default: `?limit=&offset=`, with the list's total in `count`.

    A page past the first is read in two steps (`offset_page`): the database skips rows along the order
    with nothing but their keys, and only the page's rows get their joins and per-row counts.
    """

    default_limit = DEFAULT_LIMIT
    max_limit = MAX_LIMIT

    def paginate_queryset(self, queryset: QuerySet, request: Request, view: Any = None) -> list | None:
        # DRF's LimitOffsetPagination.paginate_queryset, with the page read by offset_page.
        self.request = request
        self.limit = self.get_limit(request)
        if self.limit is None:
            return None
        self.count = self.get_count(queryset)
        self.offset = self.get_offset(request)
        if self.count > self.limit and self.template is not None:
            self.display_page_controls = True
        if self.count == 0 or self.offset > self.count:
            return []
        return offset_page(queryset, self.offset, self.limit)


def offset_page(queryset: QuerySet, offset: int, limit: int) -> list:
    """The rows `offset` to `offset + limit` of `queryset`, in its order.

    Sliced as it stands, the database computes every selected column of every skipped row before it drops
    them: the joins and the per-row counts of a server (connectors, installed, blacklisted) for the 9,900
    servers before offset 9,900 (~170 ms on the scale dataset). So past the first page, the page's keys
    are read first (the same order and filters, nothing else selected), then only those rows in full: one
    query more, and the cost of the skipped rows is the index walk alone. The first page stays one query.
    """
    if offset == 0 or not isinstance(queryset, QuerySet):
        return list(queryset[offset : offset + limit])
    keys = list(queryset.values_list("pk", flat=True)[offset : offset + limit])
    if not keys:
        return []
    rows = {row.pk: row for row in queryset.order_by().filter(pk__in=keys)}
    return [rows[key] for key in keys if key in rows]


class KeysetPagination(BasePagination):
    """Keyset pages along the view's `keyset_ordering` (ascending columns; default: id): each page is an index
    range scan after (or, for `previous`, before) the whole key of the last (first) row seen.

    The cursor is the row's full key, not DRF's leading value plus an offset: with a leading column that
    repeats (a server's connectors), DRF's backward pages come out short; a full key stays exact both ways.
    """

    ordering: tuple[str, ...] = ("id",)
    cursor_query_param = "cursor"

    def paginate_queryset(self, queryset: QuerySet, request: Request, view: Any = None) -> list:
        # Deliberately not the view's OrderingFilter: a cursor is a position along one fixed order.
        if request.query_params.get("ordering"):
            raise InvalidInput(
                "ordering",
                "Cursor pages keep the list's own order; leave out `ordering`, or use limit and offset.",
            )
        self.request = request
        self.fields = tuple(getattr(view, "keyset_ordering", self.ordering))
        self.limit = _limit(request)
        direction, key = self._decode(queryset, request.query_params.get(self.cursor_query_param, ""))
        backward = direction == "before"
        if key is not None:
            queryset = queryset.filter(_beyond(self.fields, key, backward=backward))
        order = [f"-{field}" if backward else field for field in self.fields]
        rows = list(queryset.order_by(*order)[: self.limit + 1])
        more = len(rows) > self.limit
        rows = rows[: self.limit]
        if backward:
            rows.reverse()
        self.page = rows
        # Going forward, there is something before whenever we started after a key; and the other way round.
        self.has_next = more if not backward else True
        self.has_previous = more if backward else key is not None
        return rows

    def get_paginated_response(self, data: Any) -> Response:
        return Response(
            {"next": self._link("after", -1), "previous": self._link("before", 0), "results": data}
        )

    def _link(self, direction: str, index: int) -> str | None:
        wanted = self.has_next if direction == "after" else self.has_previous
        if not wanted or not self.page:
            return None
        row = self.page[index]
        key = [_jsonable(getattr(row, field)) for field in self.fields]
        token = base64.urlsafe_b64encode(json.dumps({direction: key}).encode()).decode()
        url = self.request.build_absolute_uri()
        return replace_query_param(url, self.cursor_query_param, token)

    def _decode(self, queryset: QuerySet, token: str) -> tuple[str, list | None]:
        if not token:
            return "after", None
        try:
            payload = json.loads(base64.urlsafe_b64decode(token.encode()))
            [(direction, values)] = payload.items()
            if direction not in {"after", "before"} or len(values) != len(self.fields):
                raise ValueError(direction)
            meta = queryset.model._meta
            key = [
                meta.get_field(field).to_python(value)
                for field, value in zip(self.fields, values, strict=True)
            ]
        except (ValueError, TypeError, AttributeError, binascii.Error, DjangoValidationError):
            raise InvalidInput("cursor", "Not a cursor of this list: follow `next` or `previous`.") from None
        return direction, key


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit", "")
    try:
        return min(max(int(raw), 1), MAX_LIMIT) if raw else DEFAULT_LIMIT
    except ValueError:
        return DEFAULT_LIMIT  # as limit/offset treats a limit that is not a number


def _beyond(fields: tuple[str, ...], key: list, *, backward: bool) -> Q:
    """Rows whose (fields) tuple is after `key` (before it, backward): the row-value comparison spelled out,
    with the leading column's range in front so the index bounds the scan."""
    strictly = "lt" if backward else "gt"
    either = Q()
    for index, field in enumerate(fields):
        equal = {name: value for name, value in zip(fields[:index], key[:index], strict=True)}
        either |= Q(**equal, **{f"{field}__{strictly}": key[index]})
    return Q(**{f"{fields[0]}__{strictly}e": key[0]}) & either


def _jsonable(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


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
                    "`next`. Pages keep one fixed order (id; for a server's rows: server, then position or "
                    "time, then id), cost the same at any depth, and carry no `count`; `offset` and "
                    "`ordering` do not apply (`ordering` is refused)."
                ),
                "schema": {"type": "string"},
            }
        )
        return parameters
