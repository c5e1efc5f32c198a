"""A site's IP prefixes (`/api/v1/prefixes/`) and the next free address of a role
(`GET /api/v1/sites/{id}/next-address/?role=management`).

Prefixes are read by whoever sees their site through `visible_to` (PMs; a customer its own rooms and the
sites where its servers stand; a partner the sites where the servers it builds stand): the VLAN and gateway
are what a server there is configured with. Only PMs write them (a member who sees one gets a 403, anyone
else a 404). The next free address is offered to PMs only, as they are the ones who record addresses.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from builds.api.serializers import EnumField
from deployment.addresses import next_free_address
from deployment.api.serializers import VisibleObjectField
from deployment.choices import PrefixRole
from deployment.filters import IPPrefixFilter
from deployment.models import IPPrefix, Site
from deployment.services import prefix_create, prefix_delete, prefix_update
from werkbank.api.permissions import require_pm
from werkbank.api.viewsets import ScopedViewSet, VisibleToMixin
from werkbank.errors import InvalidInput

CONFLICT = OpenApiResponse(description="A business rule refuses it: `missing` says what is needed.")


class IPPrefixSerializer(serializers.ModelSerializer):
    site = VisibleObjectField(Site, help_text="The site whose network this is; it stays.")
    site_name = serializers.CharField(source="site.name", read_only=True)
    role = EnumField(PrefixRole)
    # Checked by the service (`ipaddress`): a host-bits-set network is a 400 naming the canonical one.
    prefix = serializers.CharField(max_length=64, help_text="CIDR, e.g. 10.20.0.0/24.")
    vlan = serializers.IntegerField(required=False, allow_null=True, help_text="802.1Q VLAN id, 1–4094.")
    gateway = serializers.CharField(
        max_length=64, required=False, allow_null=True, allow_blank=True, help_text="Inside the prefix."
    )
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)

    class Meta:
        model = IPPrefix
        fields = ["id", "site", "site_name", "prefix", "role", "vlan", "gateway", "description", "created_at"]
        read_only_fields = ["id", "site_name", "created_at"]


class NextAddressSerializer(serializers.Serializer):
    site = serializers.IntegerField()
    role = serializers.CharField()
    address = serializers.CharField(allow_null=True, help_text="None when every host address is taken.")
    prefix = serializers.CharField(allow_null=True)
    prefix_id = serializers.IntegerField(allow_null=True)
    vlan = serializers.IntegerField(allow_null=True)
    gateway = serializers.CharField(allow_null=True)
    detail = serializers.CharField()


class IPPrefixViewSet(mixins.DestroyModelMixin, ScopedViewSet):
    """Management and BMC prefixes per site, with VLAN and gateway. Overlaps within a site and deleting a
    prefix that servers' addresses lie in are refused (409)."""

    queryset = IPPrefix.objects.select_related("site")
    serializer_class = IPPrefixSerializer
    filterset_class = IPPrefixFilter
    ordering_fields = ["prefix", "vlan", "created_at"]

    def perform_create(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        prefix = prefix_create(site=data.pop("site"), actor=self.request.user, **data)
        serializer.instance = self.get_queryset().get(pk=prefix.pk)

    def perform_update(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        prefix = serializer.instance
        site = data.pop("site", None)
        if site is not None and site != prefix.site:
            raise InvalidInput("site", "a prefix stays at its site; create one at the other.")
        prefix = prefix_update(ip_prefix=prefix, actor=self.request.user, **data)
        serializer.instance = self.get_queryset().get(pk=prefix.pk)

    @extend_schema(responses={204: None, 409: CONFLICT})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().destroy(request, *args, **kwargs)

    def perform_destroy(self, instance: IPPrefix) -> None:
        prefix_delete(ip_prefix=instance, actor=self.request.user)


class SiteNextAddressViewSet(VisibleToMixin, viewsets.GenericViewSet):
    """The next free address of a role at a site: only this detail action, on the sites' prefix."""

    queryset = Site.objects.all()
    permission_classes = [IsAuthenticated]  # the lookup answers 404 first; require_pm then says 403
    pagination_class = None
    filter_backends: list = []

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "role", OpenApiTypes.STR, OpenApiParameter.QUERY, enum=PrefixRole.values, required=True
            )
        ],
        responses={200: NextAddressSerializer, 400: None},
        summary="The lowest host address of the site's prefixes of the role that no server uses and is no "
        "gateway (PMs only); address is null when they are full.",
    )
    @action(detail=True, methods=["get"], url_path="next-address", url_name="next-address")
    def next_address(self, request: Request, pk: str | None = None) -> Response:
        site = self.get_object()
        require_pm(request, "Only project managers are offered addresses.")
        role = request.query_params.get("role", "")
        if role not in PrefixRole.values:
            raise InvalidInput("role", f"must be one of {', '.join(PrefixRole.values)}; got {role!r}.")
        free = next_free_address(site=site, role=role)
        words = "BMC" if role == PrefixRole.BMC else "management"
        payload: dict[str, Any] = {"site": site.pk, "role": role}
        if free is None:
            payload |= {"address": None, "prefix": None, "prefix_id": None, "vlan": None, "gateway": None}
            payload["detail"] = (
                f"No free {words} address at {site.name}: its {words} prefixes are full, or it has none."
            )
        else:
            payload |= {
                "address": free.address,
                "prefix": free.prefix.prefix,
                "prefix_id": free.prefix.pk,
                "vlan": free.prefix.vlan,
                "gateway": free.prefix.gateway,
                "detail": f"{free.address} is free in {free.prefix.prefix} of {site.name}.",
            }
        return Response(NextAddressSerializer(payload).data, status=status.HTTP_200_OK)
