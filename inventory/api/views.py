"""API views of the inventory app."""

from __future__ import annotations

from typing import Any

from inventory.api.serializers import PartSerializer
from inventory.filters import PartFilter
from inventory.models import Part
from inventory.services import part_create, part_update
from werkbank.api.viewsets import ScopedViewSet


class PartViewSet(ScopedViewSet):
    """The part catalogue."""

    queryset = Part.objects.all()
    serializer_class = PartSerializer
    filterset_class = PartFilter
    ordering_fields = ["category", "manufacturer", "mpn"]

    def perform_create(self, serializer: Any) -> None:
        serializer.instance = part_create(actor=self.request.user, **serializer.validated_data)

    def perform_update(self, serializer: Any) -> None:
        serializer.instance = part_update(
            part=serializer.instance, actor=self.request.user, **serializer.validated_data
        )
