"""API base classes: every viewset gets its queryset through `visible_to`, for a purpose."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework import mixins, viewsets

from werkbank.access import Purpose


class VisibleToMixin:
    """Apply the access chokepoint. Subclasses set `queryset` to a model's unscoped queryset.

    `purpose` says what the rows are for (see `werkbank.access.Purpose`); an action may set its own, e.g.
    `@action(detail=True, methods=["post"], purpose=Purpose.RECEIVE)`, or a viewset may override
    `get_purpose()`. A row outside the purpose's scope is then a 404.
    """

    queryset: QuerySet
    purpose: str = Purpose.VIEW
    # Numeric ids only, so that a nested prefix can never be mistaken for a lookup.
    lookup_value_regex = "[0-9]+"

    def get_purpose(self) -> str:
        return self.purpose

    def get_queryset(self) -> QuerySet:
        scoped: Any = self.queryset
        return scoped.visible_to(self.request.user, purpose=self.get_purpose())


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
