"""API views of the deployment app: thin viewsets whose writes call the services (deployment/services).

Reads: anyone who sees the rows through `visible_to` (PMs; a customer its own rooms and the racks and
placements of its servers; a partner those of the servers it builds). Writes: PMs only. A member who sees
the object gets a 403 on a write, anyone else a 404 (`PMWritesOthersRead`, the lookup runs first); a
member's create is a 403. An id in a write body that does not exist or that the caller may not see is a 404
naming the field.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count, Prefetch
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from builds.api.views import ServerStateViewSet
from builds.choices import ServerStatus
from builds.models import Server
from deployment.api.serializers import (
    DeployNoteSerializer,
    DeployStateSerializer,
    NetworkCreateSerializer,
    NetworkSerializer,
    NetworkUpdateSerializer,
    PlacementCreateSerializer,
    PlacementSerializer,
    PlatformListingSerializer,
    PowerFeedSerializer,
    RackDetailSerializer,
    RackPowerSerializer,
    RackSerializer,
    RemovalSerializer,
    SiteSerializer,
)
from deployment.choices import DEPLOYED_OR_LATER
from deployment.filters import (
    PlatformListingFilter,
    PowerFeedFilter,
    RackFilter,
    RackPlacementFilter,
    ServerNetworkFilter,
    SiteFilter,
)
from deployment.models import (
    PlacementFeed,
    PlatformListing,
    PowerFeed,
    Rack,
    RackPlacement,
    ServerNetwork,
    Site,
)
from deployment.selectors import current_listing, deploy_missing, feed_loads
from deployment.services import (
    feed_create,
    feed_delete,
    feed_update,
    listing_record,
    network_set,
    placement_create,
    placement_remove,
    rack_create,
    rack_update,
    server_deploy,
    site_create,
    site_update,
)
from werkbank.api.permissions import require_pm
from werkbank.api.viewsets import ScopedViewSet, VisibleToMixin
from werkbank.errors import InvalidInput

CONFLICT = OpenApiResponse(description="A business rule refuses it: `missing` says what is needed.")
UNKNOWN = OpenApiResponse(description="Not found, or an id in the body the caller may not see (names it).")


class _Refetch:
    """After a service wrote the row, answer with it as the list reads it (annotations included)."""

    def refetch(self, pk: int) -> Any:
        return self.get_queryset().get(pk=pk)  # type: ignore[attr-defined]


# --- sites, racks, feeds -------------------------------------------------------------------------------


class SiteViewSet(_Refetch, ScopedViewSet):
    """Rooms that hold racks: EU colocations and customers' own server rooms. The EU flag follows the
    country."""

    queryset = Site.objects.select_related("customer").annotate(rack_count=Count("racks"))
    serializer_class = SiteSerializer
    filterset_class = SiteFilter
    ordering_fields = ["name", "country", "created_at"]

    def perform_create(self, serializer: Any) -> None:
        site = site_create(actor=self.request.user, **serializer.validated_data)
        serializer.instance = self.refetch(site.pk)

    def perform_update(self, serializer: Any) -> None:
        site = site_update(site=serializer.instance, actor=self.request.user, **serializer.validated_data)
        serializer.instance = self.refetch(site.pk)


def _fixed(field: str, given: Any, current: Any, message: str) -> None:
    if given is not None and given != current:
        raise InvalidInput(field, message)


class RackViewSet(_Refetch, ScopedViewSet):
    """Racks and their circuits. One rack shows each circuit's load against its continuous limit; its
    `power/` lists the servers on each circuit (named only where the viewer may see them)."""

    queryset = (
        Rack.objects.select_related("site")
        .prefetch_related("feeds")
        .annotate(placement_count=Count("placements", distinct=True))
    )
    serializer_class = RackSerializer
    filterset_class = RackFilter
    ordering_fields = ["name", "created_at"]

    def get_serializer_class(self) -> type[RackSerializer]:
        return RackDetailSerializer if self.action == "retrieve" else RackSerializer

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        rack = self.get_object()
        rack.loads = feed_loads(rack=rack)
        return Response(self.get_serializer(rack).data)

    def perform_create(self, serializer: Any) -> None:
        data = serializer.validated_data
        rack = rack_create(
            site=data["site"], actor=self.request.user, name=data["name"], height_u=data.get("height_u", 42)
        )
        serializer.instance = self.refetch(rack.pk)

    def perform_update(self, serializer: Any) -> None:
        data = serializer.validated_data
        rack = serializer.instance
        _fixed("site", data.get("site"), rack.site, "a rack stays at its site; create one at the other.")
        rack = rack_update(
            rack=rack, actor=self.request.user, name=data.get("name"), height_u=data.get("height_u")
        )
        serializer.instance = self.refetch(rack.pk)

    @extend_schema(
        responses={200: RackPowerSerializer},
        summary="Each circuit's load and the servers on it; others' servers are only 'occupied'.",
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def power(self, request: Request, pk: str | None = None) -> Response:
        rack = self.get_object()
        loads = feed_loads(rack=rack)
        visible = set(
            Server.objects.visible_to(request.user).filter(placement__rack=rack).values_list("pk", flat=True)
        )
        feeds = []
        for load in loads:
            named = [power for power in load.servers if power.server_id in visible]
            hidden = [power for power in load.servers if power.server_id not in visible]
            # Another tenant's server is a wattage, never a name; listed after the named ones, by wattage,
            # so that not even its place among the hostnames tells anything.
            servers = [
                {
                    "hostname": power.hostname,
                    "occupied": True,
                    "wall_w": power.wall_w,
                    "source": power.source,
                    "source_label": power.source_label,
                }
                for power in named
            ] + [
                {"hostname": None, "occupied": True, "wall_w": power.wall_w}
                for power in sorted(hidden, key=lambda power: power.wall_w)
            ]
            load.server_rows = servers
            feeds.append(load)
        payload = {"rack": rack.pk, "rack_name": rack.name, "site_name": rack.site.name, "feeds": feeds}
        return Response(RackPowerSerializer(payload).data)


class PowerFeedViewSet(_Refetch, mixins.DestroyModelMixin, ScopedViewSet):
    """Circuits into racks. Deleting one that a placement uses is refused (409)."""

    queryset = PowerFeed.objects.select_related("rack")
    serializer_class = PowerFeedSerializer
    filterset_class = PowerFeedFilter
    ordering_fields = ["name"]

    def perform_create(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        feed = feed_create(rack=data.pop("rack"), actor=self.request.user, **data)
        serializer.instance = self.refetch(feed.pk)

    def perform_update(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        feed = serializer.instance
        _fixed(
            "rack", data.pop("rack", None), feed.rack, "a feed stays in its rack; create one in the other."
        )
        feed = feed_update(feed=feed, actor=self.request.user, **data)
        serializer.instance = self.refetch(feed.pk)

    @extend_schema(responses={204: None, 409: CONFLICT})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().destroy(request, *args, **kwargs)

    def perform_destroy(self, instance: PowerFeed) -> None:
        feed_delete(feed=instance, actor=self.request.user)


# --- placements ----------------------------------------------------------------------------------------


class PlacementViewSet(
    VisibleToMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.ListModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Where servers stand: rack, U range, face and circuits, each with the phase(s) the server draws from.
    A placement is created and removed, never edited; an overlap or a circuit above its limit, in all or on
    a phase, is a 409 (a PM may override the limit with a reason)."""

    queryset = RackPlacement.objects.select_related("server", "rack__site").prefetch_related(
        Prefetch("feed_links", PlacementFeed.objects.select_related("powerfeed"))
    )
    serializer_class = PlacementSerializer
    filterset_class = RackPlacementFilter
    ordering_fields = ["lowest_u", "placed_at"]

    @extend_schema(
        request=PlacementCreateSerializer,
        responses={201: PlacementSerializer, 400: None, 404: UNKNOWN, 409: CONFLICT},
        summary="Place a server (PMs only): 409 for an overlap or a circuit above its limit.",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        payload = PlacementCreateSerializer(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        placement = placement_create(actor=request.user, **payload.validated_data)
        return Response(
            self.get_serializer(self.get_queryset().get(pk=placement.pk)).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "reason", OpenApiTypes.STR, OpenApiParameter.QUERY, description="Written on the audit trail."
            )
        ],
        responses={204: None, 409: CONFLICT},
        summary="Take a server that is not deployed yet out of its rack (PMs only). The reason may also "
        "come in a JSON body.",
    )
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        placement = self.get_object()
        body = request.data if isinstance(request.data, dict) and "reason" in request.data else None
        payload = RemovalSerializer(data=body if body is not None else request.query_params)
        payload.is_valid(raise_exception=True)
        placement_remove(placement=placement, actor=request.user, reason=payload.validated_data["reason"])
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- network -------------------------------------------------------------------------------------------


class NetworkViewSet(ScopedViewSet):
    """How servers are reached: management IP, BMC IP and MAC. BMC credentials go in, never out."""

    queryset = ServerNetwork.objects.select_related("server")
    serializer_class = NetworkSerializer
    filterset_class = ServerNetworkFilter
    ordering_fields = ["updated_at"]

    def _answer(self, network: ServerNetwork, code: int) -> Response:
        return Response(self.get_serializer(self.get_queryset().get(pk=network.pk)).data, status=code)

    @staticmethod
    def _secrets(data: dict[str, Any]) -> dict[str, Any]:
        return {
            "bmc_username": data.get("bmc_username"),
            "bmc_password": data.get("bmc_password"),
            "clear_bmc_credentials": data.get("clear_bmc_credentials", False),
        }

    @extend_schema(
        request=NetworkCreateSerializer,
        responses={201: NetworkSerializer, 404: UNKNOWN, 409: CONFLICT},
        summary="A server's network record (PMs only); 409 for an address another server has.",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        payload = NetworkCreateSerializer(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        network = network_set(
            server=data["server"],
            actor=request.user,
            management_ip=data["management_ip"],
            bmc_ip=data["bmc_ip"],
            bmc_mac=data["bmc_mac"],
            hostname=data.get("hostname"),
            new=True,
            **self._secrets(data),
        )
        return self._answer(network, status.HTTP_201_CREATED)

    @extend_schema(request=NetworkUpdateSerializer, responses={200: NetworkSerializer, 409: CONFLICT})
    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        network = self.get_object()
        payload = NetworkUpdateSerializer(data=request.data, partial=kwargs.get("partial", False))
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        network = network_set(
            server=network.server,
            actor=request.user,
            management_ip=data.get("management_ip", network.management_ip),
            bmc_ip=data.get("bmc_ip", network.bmc_ip),
            bmc_mac=data.get("bmc_mac", network.bmc_mac),
            hostname=data.get("hostname"),
            **self._secrets(data),
        )
        return self._answer(network, status.HTTP_200_OK)

    @extend_schema(request=NetworkUpdateSerializer, responses={200: NetworkSerializer, 409: CONFLICT})
    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self.update(request, *args, partial=True, **kwargs)


# --- platform listings ---------------------------------------------------------------------------------


class PlatformListingViewSet(
    _Refetch,
    VisibleToMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.ListModelMixin,
    viewsets.GenericViewSet,
):
    """Deployed servers' listings on rental platforms, append-only: each change is a new row; the latest
    row of a server is its current state."""

    queryset = PlatformListing.objects.select_related("server", "recorded_by")
    serializer_class = PlatformListingSerializer
    filterset_class = PlatformListingFilter
    ordering_fields = ["recorded_at", "id"]

    def perform_create(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        listing = listing_record(server=data.pop("server"), actor=self.request.user, **data)
        serializer.instance = self.refetch(listing.pk)


# --- a server's way into production ---------------------------------------------------------------------


def deploy_state(server: Server) -> dict[str, Any]:
    """What `DeployStateSerializer` reads: the server, its placement, network and listing, what is missing."""
    placement = (
        RackPlacement.objects.select_related("rack__site")
        .prefetch_related("feeds")
        .filter(server=server)
        .first()
    )
    missing = deploy_missing(server=server)
    deployed = server.status in DEPLOYED_OR_LATER
    return {
        "server": server,
        "deployed": deployed,
        "ready": not deployed and server.status == ServerStatus.BURN_IN_PASSED and not missing,
        "placement": placement,
        "network": ServerNetwork.objects.filter(server=server).first(),
        "listing": current_listing(server=server),
        "missing": missing,
    }


class DeploymentServerViewSet(ServerStateViewSet):
    """A server's deployment, by asset tag: where it stands, and the PM's deploy."""

    serializer_class = DeployStateSerializer

    @extend_schema(responses={200: DeployStateSerializer}, summary="The server's deployment state.")
    def retrieve(self, request: Request, asset_tag: str | None = None) -> Response:
        return Response(DeployStateSerializer(deploy_state(self.get_object())).data)

    @extend_schema(
        request=DeployNoteSerializer,
        responses={200: DeployStateSerializer, 409: CONFLICT},
        summary="burn-in passed → deployed (PMs only); 409 lists everything still missing.",
    )
    @action(
        detail=True,
        methods=["post"],
        permission_classes=[IsAuthenticated],  # the lookup answers 404 first; require_pm then says 403
        filterset_class=None,
        pagination_class=None,
    )
    def deploy(self, request: Request, asset_tag: str | None = None) -> Response:
        server = self.get_object()
        require_pm(request, "Only project managers deploy a server.")
        payload = DeployNoteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        deployed = server_deploy(server=server, actor=request.user, note=payload.validated_data["note"])
        return Response(DeployStateSerializer(deploy_state(deployed)).data)
