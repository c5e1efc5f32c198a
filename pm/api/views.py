"""The fleet's quality in the API (issue #29): /api/v1/quality/{lots,suppliers,parts,positions}/ and each
row with its evidence at /api/v1/quality/<kind>/<key>/. The same selectors as the page /pm/quality/.

PMs only, read-only, as the warranty report: anyone else gets an empty list and a 404 for a row (nothing to
see, nothing leaked: the rates read every customer's failures and every supplier's lots). Keys hold ':'
(``<part id>:<lot code>``), so the lookup takes anything but a slash.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from pm.api.serializers import QualityRowDetailSerializer, QualityRowSerializer
from pm.quality.cache import fleet_tables
from pm.quality.rows import QualityRow
from pm.quality.selectors import evidence, quality_row
from werkbank.access import is_pm

KEYS = {
    "lots": "`<part id>:<lot code>`",
    "suppliers": "`<supplier id>:<part category>`",
    "parts": "`<part id>`",
    "positions": "`<chassis layout id>:<connector name>`",
}


class QualityViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """One table of the fleet's quality, ranked by the interval's lower bound (worst first)."""

    kind = ""
    serializer_class = QualityRowSerializer
    filter_backends: list[Any] = []
    lookup_field = "key"
    lookup_value_regex = "[^/]+"

    def get_queryset(self) -> list[QualityRow]:  # type: ignore[override]
        if not is_pm(self.request.user):
            return []
        # The fleet's tables, reused while nothing they count changed (pm/quality/cache.py).
        return fleet_tables()[0][self.kind]

    def retrieve(self, request: Request, key: str) -> Response:
        row = quality_row(self.kind, key) if is_pm(request.user) else None
        if row is None:
            raise Http404
        context = {**self.get_serializer_context(), "evidence": evidence(self.kind, key)}
        return Response(QualityRowDetailSerializer(row, context=context).data)


def _schema(kind: str, what: str) -> Any:
    return extend_schema_view(
        list=extend_schema(summary=f"Failure rates per {what}, worst lower bound first (PMs only)."),
        retrieve=extend_schema(
            summary=f"The failure rate of one {what}, with the attributions counted in it (PMs only).",
            description=f"The key: {KEYS[kind]}.",
            responses=QualityRowDetailSerializer,
        ),
    )


@_schema("lots", "lot (part and lot code, across receipts)")
class QualityLotsViewSet(QualityViewSet):
    kind = "lots"


@_schema("suppliers", "supplier and part category")
class QualitySuppliersViewSet(QualityViewSet):
    kind = "suppliers"


@_schema("parts", "part")
class QualityPartsViewSet(QualityViewSet):
    kind = "parts"


@_schema("positions", "connector position of a chassis layout")
class QualityPositionsViewSet(QualityViewSet):
    kind = "positions"
