"""API views of the builds app: thin viewsets whose writes call the services.

Reads go through `visible_to`. The bench (connectors, installations, allocations, steps, photos, and every
action on a server) goes through `visible_to(user, purpose=Purpose.BENCH)`: PMs and the members of the partner
the server is assigned to. A customer sees their servers, but none of the bench: those routes answer 404.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from builds import services
from builds.api.serializers import (
    MAX_PHOTOS_PER_STEP,
    AllocateSerializer,
    AllocationSerializer,
    AssignSerializer,
    BlacklistSerializer,
    BuildPhotoSerializer,
    BuildStepSerializer,
    ChassisLayoutSerializer,
    ConnectorMapSerializer,
    ConnectorSerializer,
    InstallationSerializer,
    InstallSerializer,
    MoveSerializer,
    PhotoUploadSerializer,
    RemoveSerializer,
    ServerSerializer,
    StepLogSerializer,
)
from builds.filters import (
    AllocationFilter,
    BuildPhotoFilter,
    BuildStepFilter,
    ChassisLayoutFilter,
    ConnectorFilter,
    InstallationFilter,
    ServerFilter,
)
from builds.models import (
    Allocation,
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    Connector,
    Installation,
    Server,
)
from builds.selectors import connector_kind, connector_map, layout_columns, servers_with_progress
from werkbank.access import Purpose, is_pm
from werkbank.api.pagination import KeysetOrOffsetPagination
from werkbank.api.parsers import FormParser, JSONParser, MultiPartParser
from werkbank.api.serializers import NoteSerializer
from werkbank.api.transitions import transition_action
from werkbank.api.viewsets import ScopedReadOnlyViewSet, VisibleToMixin

# --- Permissions ---------------------------------------------------------------------------------------


class ServerStateViewSet(VisibleToMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Base of the apps' per-server state endpoints, addressed by asset tag (`/api/v1/deployment/servers/
    {asset_tag}/`, `/api/v1/handover/servers/{asset_tag}/`): one server the user sees; no list, no filters."""

    queryset = Server.objects.all()
    lookup_field = "asset_tag"
    # Asset tags are letters, digits, dots, dashes and underscores (WB-YYYY-NNNN-NN).
    lookup_value_regex = "[A-Za-z0-9][A-Za-z0-9._-]*"
    filterset_class = None
    pagination_class = None


class OnBench(IsAuthenticated):
    """PMs act on every server; a partner's members only on the servers assigned to their organization.

    The lookup runs first, through a queryset scoped to the bench, so anyone else already got a 404; this is
    the second lock on the door. `obj` is a server or a row that belongs to one.
    """

    def has_object_permission(self, request: Any, view: Any, obj: Any) -> bool:
        if is_pm(request.user):
            return True
        server_id = obj.pk if isinstance(obj, Server) else obj.server_id
        return Server.objects.visible_to(request.user, purpose=Purpose.BENCH).filter(pk=server_id).exists()


def bench_action(**overrides: Any) -> Any:
    """A POST action on one server's bench: the PM or the assigned partner, no filters, no paging."""
    options = {
        "detail": True,
        "methods": ["post"],
        "permission_classes": [OnBench],
        "filterset_class": None,
        "pagination_class": None,
    }
    return action(**{**options, **overrides})


def _read_photo(upload: Any) -> bytes:
    # One byte past the limit is enough to refuse an oversize photo, whatever the request claims its size is.
    return upload.read(settings.WERKBANK_MAX_PHOTO_BYTES + 1)


# Upload bodies (werkbank.api.parsers): their photos at the photo limit each, plus the usual form fields.
def _photo_body_limit() -> int:
    return settings.WERKBANK_MAX_PHOTO_BYTES + settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _step_body_limit() -> int:
    return MAX_PHOTOS_PER_STEP * settings.WERKBANK_MAX_PHOTO_BYTES + settings.DATA_UPLOAD_MAX_MEMORY_SIZE


# --- Servers -------------------------------------------------------------------------------------------

#: Actions of the server viewset that are not the bench: everyone who sees the server may use them.
SERVER_READS = frozenset({"list", "retrieve"})


def _server_transition(name: str) -> Any:
    """The POST action for one server transition, with an optional note."""
    service, summary = {
        "start_assembly": (
            services.server_start_assembly,
            "planned (or burn-in failed, for rework) → assembling; needs an assigned partner.",
        ),
        "mark_assembled": (
            services.server_mark_assembled,
            "assembling → assembled; 409 lists the missing steps, uninstalled BOM lines and blacklist use.",
        ),
    }[name]
    return transition_action(
        name,
        service=service,
        subject="server",
        body=NoteSerializer,
        response=ServerSerializer,
        summary=summary,
        permission_classes=[OnBench],
        filterset_class=None,
        pagination_class=None,
    )


class ServerViewSet(
    VisibleToMixin, mixins.RetrieveModelMixin, mixins.ListModelMixin, viewsets.GenericViewSet
):
    """Servers with their build progress. Partners see theirs, customers those of their orders (read-only).

    The actions are the bench: PMs and the assigned partner's members; anyone else gets a 404.
    """

    queryset = servers_with_progress()
    serializer_class = ServerSerializer
    filterset_class = ServerFilter
    ordering_fields = ["hostname", "sequence", "status", "created_at"]
    # 10,000 servers: offset 9,900 took ~100 ms (make bench); `?cursor=` pages along the (order, sequence)
    # unique index instead, as the other big lists do.
    pagination_class = KeysetOrOffsetPagination
    keyset_ordering = ("order_id", "sequence", "id")
    #: The upload actions set their own body limit (werkbank.api.parsers); the rest keep the global one.
    max_body_bytes: Any = None

    def get_purpose(self) -> Purpose:
        return Purpose.VIEW if self.action in SERVER_READS else Purpose.BENCH

    def _serialize(self, server: Server) -> dict[str, Any]:
        return self.get_serializer(self.get_queryset().get(pk=server.pk)).data

    @extend_schema(
        request=AssignSerializer,
        responses={200: ServerSerializer},
        summary="Give the build to an assembly partner (PMs only).",
    )
    @action(detail=True, methods=["post"], filterset_class=None, pagination_class=None)
    def assign(self, request: Request, pk: str | None = None) -> Response:
        server = self.get_object()
        payload = AssignSerializer(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        services.server_assign_partner(
            server=server, actor=request.user, partner=payload.validated_data["partner"]
        )
        return Response(self._serialize(server))

    start_assembly = _server_transition("start_assembly")
    mark_assembled = _server_transition("mark_assembled")

    @extend_schema(
        request=AllocateSerializer,
        responses={201: AllocationSerializer(many=True)},
        summary="Set scanned components aside for this server (one GPU lot; a PM may override).",
    )
    @bench_action()
    def allocate(self, request: Request, pk: str | None = None) -> Response:
        server = self.get_object()
        payload = AllocateSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        components = [
            services.find_component(
                serial=serial, user=request.user, manufacturer=payload.validated_data["manufacturer"]
            )
            for serial in payload.validated_data["serials"]
        ]
        services.server_allocate(
            server=server,
            actor=request.user,
            components=components,
            override_reason=payload.validated_data["override_reason"],
        )
        allocations = AllocationViewSet.queryset.visible_to(request.user).filter(
            server=server, component__in=components, released_at__isnull=True
        )
        return Response(
            AllocationSerializer(allocations, many=True, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        request=InstallSerializer,
        responses={201: InstallationSerializer},
        summary="Put a scanned component into a named connector.",
    )
    @bench_action()
    def install(self, request: Request, pk: str | None = None) -> Response:
        server = self.get_object()
        payload = InstallSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        component = services.find_component(
            serial=data["serial"],
            user=request.user,
            manufacturer=data["manufacturer"],
            connector_kind=connector_kind(server, data["connector"]),
        )
        installation = services.server_install(
            server=server, actor=request.user, component=component, connector_name=data["connector"]
        )
        return Response(_installation(installation, request), status=status.HTTP_201_CREATED)

    @extend_schema(
        request=RemoveSerializer,
        responses={200: InstallationSerializer},
        summary="Take a scanned component out of its connector, with a reason.",
    )
    @bench_action()
    def remove(self, request: Request, pk: str | None = None) -> Response:
        server = self.get_object()
        payload = RemoveSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        component = services.find_component(
            serial=payload.validated_data["serial"],
            user=request.user,
            manufacturer=payload.validated_data["manufacturer"],
        )
        removed = services.server_remove(
            installation=services.installation_of(server=server, component=component),
            actor=request.user,
            reason=payload.validated_data["reason"],
            failed=payload.validated_data["failed"],
        )
        return Response(_installation(removed, request))

    @extend_schema(
        request=MoveSerializer,
        responses={200: InstallationSerializer},
        summary="Move an installed component to another connector, with a reason.",
    )
    @bench_action()
    def move(self, request: Request, pk: str | None = None) -> Response:
        server = self.get_object()
        payload = MoveSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        component = services.find_component(
            serial=payload.validated_data["serial"],
            user=request.user,
            manufacturer=payload.validated_data["manufacturer"],
            connector_kind=connector_kind(server, payload.validated_data["to_connector"]),
        )
        installation = services.server_move(
            server=server,
            actor=request.user,
            component=component,
            to_connector_name=payload.validated_data["to_connector"],
            reason=payload.validated_data["reason"],
        )
        return Response(_installation(installation, request))

    @extend_schema(
        methods=["GET"], responses={200: BuildStepSerializer(many=True)}, summary="The server's build steps."
    )
    @extend_schema(
        methods=["POST"],
        request={"multipart/form-data": StepLogSerializer, "application/json": StepLogSerializer},
        responses={201: BuildStepSerializer},
        summary="Log a build step, with measurements and up to 10 photos.",
    )
    @action(
        detail=True,
        methods=["get", "post"],
        permission_classes=[OnBench],
        parser_classes=[MultiPartParser, FormParser, JSONParser],
        max_body_bytes=_step_body_limit,
        filterset_class=None,
        pagination_class=None,
    )
    def steps(self, request: Request, pk: str | None = None) -> Response:
        server = self.get_object()
        if request.method == "GET":
            steps = BuildStepViewSet.queryset.visible_to(request.user).filter(server=server)
            return Response(BuildStepSerializer(steps, many=True, context={"request": request}).data)
        payload = StepLogSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        step = services.step_log(
            server=server,
            actor=request.user,
            kind=data["kind"],
            notes=data["notes"],
            data=data["data"],
            photos=[_read_photo(upload) for upload in data["photos"]],
        )
        return Response(
            BuildStepSerializer(
                BuildStepViewSet.queryset.visible_to(request.user).get(pk=step.pk),
                context={"request": request},
            ).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        request={"multipart/form-data": PhotoUploadSerializer},
        responses={201: BuildPhotoSerializer},
        summary="Upload a bench photo (JPEG or PNG, stored re-encoded), optionally for one step.",
    )
    @action(
        detail=True,
        methods=["post"],
        permission_classes=[OnBench],
        parser_classes=[MultiPartParser, FormParser],
        max_body_bytes=_photo_body_limit,
        filterset_class=None,
        pagination_class=None,
    )
    def photos(self, request: Request, pk: str | None = None) -> Response:
        server = self.get_object()
        payload = PhotoUploadSerializer(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        photo = services.photo_upload(
            server=server,
            actor=request.user,
            data=_read_photo(payload.validated_data["photo"]),
            step=payload.validated_data["step"],
        )
        return Response(
            BuildPhotoSerializer(
                BuildPhotoViewSet.queryset.visible_to(request.user).get(pk=photo.pk),
                context={"request": request},
            ).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        responses={200: ConnectorMapSerializer},
        summary="The connectors by position: free, occupied (serial, part) or blacklisted (reason).",
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="connector-map",
        permission_classes=[OnBench],
        filterset_class=None,
        pagination_class=None,
    )
    def connector_map(self, request: Request, pk: str | None = None) -> Response:
        server = self.get_object()
        data = {
            "server": server.pk,
            "hostname": server.hostname,
            "status": server.status,
            "columns": layout_columns(server, default=None),
            "connectors": connector_map(server),
        }
        return Response(ConnectorMapSerializer(data).data)


def _installation(installation: Installation, request: Request) -> dict[str, Any]:
    return InstallationSerializer(
        InstallationViewSet.queryset.visible_to(request.user).get(pk=installation.pk),
        context={"request": request},
    ).data


# --- The bench's rows ----------------------------------------------------------------------------------


class ConnectorViewSet(ScopedReadOnlyViewSet):
    """A server's connectors with their blacklist. Read-only: a blacklist is added by `blacklist`, and
    nothing removes one (seed 003: unused for the machine's whole life).

    A big list: `?cursor=` pages it by keyset (server, then its own order), as fast deep as at the start."""

    queryset = Connector.objects.select_related("server", "blacklist__created_by")
    serializer_class = ConnectorSerializer
    filterset_class = ConnectorFilter
    pagination_class = KeysetOrOffsetPagination
    keyset_ordering = ("server_id", "position", "id")
    ordering_fields = ["position", "name"]

    @extend_schema(
        request=BlacklistSerializer,
        responses={201: ConnectorSerializer},
        summary="Blacklist a faulty connector for good; an occupied one moves its component to a target.",
    )
    @bench_action()
    def blacklist(self, request: Request, pk: str | None = None) -> Response:
        connector = self.get_object()
        payload = BlacklistSerializer(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        services.connector_blacklist(
            connector=connector,
            actor=request.user,
            reason=data["reason"],
            evidence=data["evidence"],
            measurements=data["measurements"],
            photo=data["photo"],
            target_connector_name=data["target_connector"],
        )
        return Response(
            self.get_serializer(self.get_queryset().get(pk=connector.pk)).data, status=status.HTTP_201_CREATED
        )


class InstallationViewSet(ScopedReadOnlyViewSet):
    """Which component sat in which connector, and when: the history, removals included.

    A big list: `?cursor=` pages it by keyset (server, then its own order), as fast deep as at the start."""

    queryset = Installation.objects.select_related(
        "server", "connector", "component__part", "installed_by", "removed_by"
    )
    serializer_class = InstallationSerializer
    filterset_class = InstallationFilter
    pagination_class = KeysetOrOffsetPagination
    keyset_ordering = ("server_id", "installed_at", "id")
    ordering_fields = ["installed_at", "removed_at"]


class AllocationViewSet(ScopedReadOnlyViewSet):
    """Components set aside for servers (their warranty registrations: /api/v1/warranty/registrations/).

    A big list: `?cursor=` pages it by keyset (server, then its own order), as fast deep as at the start."""

    queryset = Allocation.objects.select_related(
        "server", "component__part", "component__lot", "allocated_by"
    )
    serializer_class = AllocationSerializer
    filterset_class = AllocationFilter
    pagination_class = KeysetOrOffsetPagination
    keyset_ordering = ("server_id", "allocated_at", "id")
    ordering_fields = ["allocated_at"]


class BuildStepViewSet(ScopedReadOnlyViewSet):
    """Logged build steps with their measurements and photo ids; new ones through a server's `steps`."""

    queryset = BuildStep.objects.select_related("actor").prefetch_related("photos")
    serializer_class = BuildStepSerializer
    filterset_class = BuildStepFilter
    ordering_fields = ["created_at", "kind"]


class BuildPhotoViewSet(ScopedReadOnlyViewSet):
    """Bench photos; `download` serves the file only after the scoped lookup."""

    queryset = BuildPhoto.objects.select_related("uploaded_by")
    serializer_class = BuildPhotoSerializer
    filterset_class = BuildPhotoFilter
    ordering_fields = ["created_at"]

    @extend_schema(
        responses={
            (200, content_type): OpenApiResponse(OpenApiTypes.BINARY)
            for content_type in ("image/jpeg", "image/png", "image/heic")
        },
        summary="The photo file, as an attachment.",
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def download(self, request: Request, pk: str | None = None) -> FileResponse:
        photo = self.get_object()
        response = FileResponse(
            photo.file.open("rb"),
            as_attachment=True,
            filename=f"{photo.server_id}-photo-{photo.pk}.{photo.content_type.split('/')[-1]}",
            content_type=photo.content_type,
        )
        response["X-Content-Type-Options"] = "nosniff"
        return response


class ChassisLayoutViewSet(ScopedReadOnlyViewSet):
    """Chassis layouts with their named connectors: the partners' work instructions.

    Layouts are not tenant data: PMs and every member of an assembly partner read them all, nobody else any.
    """

    queryset = ChassisLayout.objects.select_related("chassis").prefetch_related("connectors")
    serializer_class = ChassisLayoutSerializer
    filterset_class = ChassisLayoutFilter
    ordering_fields = ["chassis__mpn"]
