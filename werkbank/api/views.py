"""API views of the core app."""

from __future__ import annotations

from typing import Any

from werkbank.api.serializers import OrganizationSerializer
from werkbank.api.viewsets import ScopedViewSet
from werkbank.filters import OrganizationFilter
from werkbank.models import Organization
from werkbank.services import organization_create, organization_update


class OrganizationViewSet(ScopedViewSet):
    """Customers and assembly partners. Members see their own organization; PMs manage all."""

    queryset = Organization.objects.all()
    serializer_class = OrganizationSerializer
    filterset_class = OrganizationFilter
    ordering_fields = ["name", "created_at"]

    def perform_create(self, serializer: Any) -> None:
        serializer.instance = organization_create(actor=self.request.user, **serializer.validated_data)

    def perform_update(self, serializer: Any) -> None:
        serializer.instance = organization_update(
            organization=serializer.instance, actor=self.request.user, **serializer.validated_data
        )
