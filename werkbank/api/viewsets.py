"""API base classes: every viewset gets its queryset through `visible_to`."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework import mixins, viewsets


class VisibleToMixin:
    """Apply the access chokepoint. Subclasses set `queryset` to a model's unscoped queryset."""

    queryset: QuerySet
    # Numeric ids only, so that a nested prefix can never be mistaken for a lookup.
    lookup_value_regex = "[0-9]+"

    def get_queryset(self) -> QuerySet:
        return self.queryset.visible_to(self.request.user)  # type: ignore[attr-defined]


class ScopedReadOnlyViewSet(VisibleToMixin, viewsets.ReadOnlyModelViewSet):
    """List and retrieve what the user may see."""


class ScopedViewSet(
    VisibleToMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.ListModelMixin,
    viewsets.GenericViewSet,
):
    """List, retrieve, create and update; writes go through services in the subclasses.

    There is no generic delete: objects with history are cancelled or retired by a service.
    """

    def perform_create(self, serializer: Any) -> None:  # pragma: no cover - subclasses override
        raise NotImplementedError("Create through a service: override perform_create.")

    def perform_update(self, serializer: Any) -> None:  # pragma: no cover - subclasses override
        raise NotImplementedError("Update through a service: override perform_update.")
