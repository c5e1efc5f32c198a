"""The handover-pack part of warranty's API: packs (list, detail, a PM's request, the PDF and ZIP
downloads) and the warranty certificate of an order. Kept apart from the records and claims so that each
part grows on its own.

Reads: PMs, and the members of the server's (or order's) customer, through `visible_to`; the assembly
partner built the server but is not handed its pack (404). Requesting a pack: PMs only (a customer who sees
the server's packs gets 403); a request while one in that language is queued or running returns that one.
A download checks access first (404 for anyone who may not see the pack), and a pack that is not ready has
no file yet (404 saying so): warranty/downloads.py.
"""

from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import Q, QuerySet
from django.http import FileResponse, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from builds.models import Server
from orders.models import Order
from warranty.choices import PackLanguage, PackStatus
from warranty.downloads import certificate_response, pack_file_response
from warranty.models import HandoverPack
from warranty.services.packs import pack_request
from werkbank.api.permissions import require_pm
from werkbank.api.serializers import AudienceFieldsMixin
from werkbank.api.viewsets import VisibleToMixin
from werkbank.errors import UnknownObject
from werkbank.filters import visible_choices

PDF = OpenApiResponse(OpenApiTypes.BINARY, description="The PDF, as an attachment.")
ZIP = OpenApiResponse(OpenApiTypes.BINARY, description="The ZIP, as an attachment.")


class HandoverPackSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    server = serializers.IntegerField(source="server_id", read_only=True)
    asset_tag = serializers.CharField(source="server.asset_tag", read_only=True)
    hostname = serializers.CharField(source="server.hostname", read_only=True)
    generated_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    pdf_url = serializers.SerializerMethodField()
    zip_url = serializers.SerializerMethodField()

    class Meta:
        model = HandoverPack
        fields = [
            "id",
            "server",
            "asset_tag",
            "hostname",
            "revision",
            "language",
            "status",
            "progress",
            "error",
            "attempts",
            "pdf_url",
            "pdf_sha256",
            "pdf_size",
            "zip_url",
            "zip_sha256",
            "zip_size",
            "generated_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields
        # A failure's text and the retries are the PMs' to act on; the login that asked is a PM's username.
        pm_only_fields = ["error", "attempts", "generated_by"]

    def _url(self, pack: HandoverPack, kind: str) -> str | None:
        if pack.status != PackStatus.READY:
            return None
        request = self.context.get("request")
        path = f"/api/v1/handover/packs/{pack.pk}/{kind}/"
        return request.build_absolute_uri(path) if request is not None else path

    @extend_schema_field(serializers.URLField(allow_null=True))  # null until ready
    def get_pdf_url(self, pack: HandoverPack) -> str | None:
        return self._url(pack, "pdf")

    @extend_schema_field(serializers.URLField(allow_null=True))  # null until ready
    def get_zip_url(self, pack: HandoverPack) -> str | None:
        return self._url(pack, "zip")


class PackRequestSerializer(serializers.Serializer):
    server = serializers.IntegerField(help_text="The server's id.")
    language = serializers.ChoiceField(
        choices=PackLanguage.choices,
        required=False,
        help_text="en or de; by default the customer's language.",
    )
    new_revision = serializers.BooleanField(
        required=False,
        default=False,
        help_text="A new revision even while one in this language is running (the server's data changed "
        "while it renders). Without it, a queued or running revision is returned (200) instead of a new "
        "one; a queued one is returned either way, as it renders the data of when its task starts.",
    )


class HandoverPackFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    status = django_filters.ChoiceFilter(choices=PackStatus.choices)
    language = django_filters.ChoiceFilter(choices=PackLanguage.choices)
    q = django_filters.CharFilter(method="search", label="Search asset tag or hostname")

    class Meta:
        model = HandoverPack
        fields = ["server", "status", "language"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(server__asset_tag__icontains=value) | Q(server__hostname__icontains=value))


class HandoverPackViewSet(
    VisibleToMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Handover packs: each revision of a server's pack with its status, progress and file hashes.

    A PM asks for a new revision with POST (the language defaults to the customer's); a Celery task renders
    it, and `pdf` / `zip` download the files once it is ready. While a revision in that language is queued
    or running, POST returns that one (200) instead of a new one (201), unless `new_revision` asks for a
    new one while it runs.
    """

    queryset = HandoverPack.objects.select_related("server", "generated_by")
    serializer_class = HandoverPackSerializer
    filterset_class = HandoverPackFilter
    ordering_fields = ["created_at", "revision"]
    ordering = ["-created_at", "-id"]

    @extend_schema(
        request=PackRequestSerializer,
        responses={
            201: OpenApiResponse(HandoverPackSerializer, description="A new revision, queued."),
            200: OpenApiResponse(
                HandoverPackSerializer, description="The revision in this language already queued or running."
            ),
        },
        summary="Ask for a new revision of a server's handover pack (PMs only): 409 unless it is deployed.",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        require_pm(request, "Only project managers ask for handover packs.")
        payload = PackRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        server = Server.objects.visible_to(request.user).filter(pk=payload.validated_data["server"]).first()
        if server is None:
            raise UnknownObject("server", f"no server with id {payload.validated_data['server']}.")
        pack, created = pack_request(
            server=server,
            actor=request.user,
            language=payload.validated_data.get("language"),
            new_revision=payload.validated_data["new_revision"],
        )
        return Response(
            self.get_serializer(self.get_queryset().get(pk=pack.pk)).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(responses={(200, "application/pdf"): PDF}, summary="The pack's PDF, once it is ready.")
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def pdf(self, request: Request, pk: str | None = None) -> FileResponse:
        return pack_file_response(self.get_object(), "pdf")

    @extend_schema(
        responses={(200, "application/zip"): ZIP},
        summary="The pack's ZIP (PDF, telemetry CSV, probe report, manifest.json), once it is ready.",
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def zip(self, request: Request, pk: str | None = None) -> FileResponse:
        return pack_file_response(self.get_object(), "zip")


class WarrantyCertificateViewSet(VisibleToMixin, viewsets.GenericViewSet):
    """The warranty certificate of an order: its customer, and every serial with start and end."""

    queryset = Order.objects.select_related("customer")
    serializer_class = None
    filterset_class = None
    pagination_class = None

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "language",
                OpenApiTypes.STR,
                OpenApiParameter.QUERY,
                enum=PackLanguage.values,
                description="en or de; by default the customer's language.",
            )
        ],
        responses={(200, "application/pdf"): PDF},
        summary="The order's warranty certificate (PDF).",
    )
    def retrieve(self, request: Request, pk: str | None = None) -> HttpResponse:
        return certificate_response(self.get_object(), language=request.query_params.get("language"))
