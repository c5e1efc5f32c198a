"""API views of the warranty app: thin viewsets whose writes call the services (warranty/services).

Reads: anyone who sees the rows through `visible_to` (PMs; a customer its own records, registrations and
claims; partners none). A customer or a PM opens a claim and attaches logs and photos to it while it is in
progress; PMs decide, ship and close (a member who sees the claim gets a 403, anyone else a 404: the lookup
runs first). An attachment's file is served after the same lookup. The hand-over is by asset tag, PMs only.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import FileResponse, Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from builds.api.views import ServerStateViewSet
from builds.choices import ServerStatus
from builds.models import Server
from deployment.minimum_selectors import reverify_warnings
from warranty.api.serializers import (
    ClaimAttachmentSerializer,
    ClaimAttachSerializer,
    ClaimDraftDecisionSerializer,
    ClaimNoteSerializer,
    ClaimOpenSerializer,
    ClaimRejectSerializer,
    HandoverNoteSerializer,
    HandoverStateSerializer,
    ShippedClaimSerializer,
    ShipReplacementSerializer,
    WarrantyClaimSerializer,
    WarrantyRecordSerializer,
    WarrantyRegistrationSerializer,
)
from warranty.choices import ATTACHMENT_TYPES
from warranty.filters import WarrantyClaimFilter, WarrantyRecordFilter, WarrantyRegistrationFilter
from warranty.models import ClaimAttachment, WarrantyClaim, WarrantyRecord, WarrantyRegistration
from warranty.selectors import hand_over_missing
from warranty.services import (
    Upload,
    claim_approve,
    claim_attach,
    claim_close,
    claim_confirm,
    claim_dismiss,
    claim_open,
    claim_reject,
    claim_ship_replacement,
    server_hand_over,
)
from warranty.services.attachments import attachment_limit
from werkbank.api.parsers import MultiPartParser
from werkbank.api.permissions import require_pm
from werkbank.api.viewsets import ScopedReadOnlyViewSet, VisibleToMixin
from werkbank.errors import UnknownObject

CONFLICT = OpenApiResponse(description="A business rule refuses it: `missing` says what is needed.")


def _attachment_body_limit() -> int:
    """An attachment's upload body (werkbank.api.parsers): the file at its limit, plus the usual fields."""
    return attachment_limit() + settings.DATA_UPLOAD_MAX_MEMORY_SIZE


class WarrantyRecordViewSet(ScopedReadOnlyViewSet):
    """Warranty records per serial; `?serial=` looks one up. A serial the caller may not see is not found
    (an empty list; 404 on its detail)."""

    queryset = WarrantyRecord.objects.select_related("server", "order", "replaces", "replaced_by")
    serializer_class = WarrantyRecordSerializer
    filterset_class = WarrantyRecordFilter
    ordering_fields = ["end_date", "start_date", "serial"]
    ordering = ["server_id", "kind", "serial", "id"]


class WarrantyRegistrationViewSet(ScopedReadOnlyViewSet):
    """The warranty of each allocated component, registered in the customer's name (seed 000)."""

    queryset = WarrantyRegistration.objects.select_related("component", "server", "customer")
    serializer_class = WarrantyRegistrationSerializer
    filterset_class = WarrantyRegistrationFilter
    ordering_fields = ["registered_at"]
    ordering = ["registered_at", "id"]


class WarrantyClaimViewSet(
    VisibleToMixin, mixins.CreateModelMixin, mixins.RetrieveModelMixin, mixins.ListModelMixin,
    viewsets.GenericViewSet,
):  # fmt: skip
    """Claims (RMA): open → approved or rejected → replacement_shipped → closed, one POST per step; a claim
    drafted from a drift finding is confirmed (→ open) or dismissed first."""

    queryset = WarrantyClaim.objects.select_related(
        "record", "opened_by", "supplier_return"
    ).prefetch_related("attachments__uploaded_by")
    #: The attachment upload sets its own body limit (werkbank.api.parsers); the rest keep the global one.
    max_body_bytes: Any = None
    # A customer files claims too: the record's lookup answers 404 to whoever does not see it, and the
    # decisions say 403 to a member who sees the claim (require_pm).
    permission_classes = [IsAuthenticated]
    serializer_class = WarrantyClaimSerializer
    filterset_class = WarrantyClaimFilter
    ordering_fields = ["created_at", "number"]
    ordering = ["-created_at", "-id"]

    def _answer(self, claim: WarrantyClaim, code: int = status.HTTP_200_OK) -> Response:
        return Response(self.get_serializer(self.get_queryset().get(pk=claim.pk)).data, status=code)

    @extend_schema(
        request=ClaimOpenSerializer,
        responses={
            201: WarrantyClaimSerializer,
            404: OpenApiResponse(description="No such record."),
            409: CONFLICT,
        },
        summary="File a claim on a record (its customer, or a PM).",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        payload = ClaimOpenSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        record = (
            WarrantyRecord.objects.visible_to(request.user)
            .filter(pk=payload.validated_data["record"])
            .first()
        )
        if record is None:
            raise UnknownObject("record", "no warranty record with this id.")
        claim = claim_open(
            record=record, actor=request.user, description=payload.validated_data["description"]
        )
        return self._answer(claim, status.HTTP_201_CREATED)

    @extend_schema(
        request={"multipart/form-data": ClaimAttachSerializer},
        responses={
            201: WarrantyClaimSerializer,
            400: OpenApiResponse(description="The file is no log or photo, by its content, or too big."),
            404: OpenApiResponse(description="No such claim."),
            409: CONFLICT,
        },
        summary="Attach a log or a photo to a claim in progress (its customer, or a PM).",
    )
    @action(
        detail=True,
        methods=["post"],
        permission_classes=[IsAuthenticated],
        parser_classes=[MultiPartParser],
        max_body_bytes=_attachment_body_limit,
    )
    def attachments(self, request: Request, pk: str | None = None) -> Response:
        claim = self.get_object()
        payload = ClaimAttachSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        claim_attach(claim=claim, actor=request.user, upload=Upload.of(payload.validated_data["file"]))
        return self._answer(claim, status.HTTP_201_CREATED)

    def _decide(self, request: Request, serializer: type, service: Any, message: str) -> Response:
        claim = self.get_object()
        require_pm(request, message)
        payload = serializer(data=request.data)
        payload.is_valid(raise_exception=True)
        return self._answer(service(claim=claim, actor=request.user, **payload.validated_data))

    @extend_schema(
        request=ClaimDraftDecisionSerializer,
        responses={200: WarrantyClaimSerializer, 409: CONFLICT},
        summary="draft → open: a claim drafted from a drift finding is a fault (PMs only, with a reason).",
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated])
    def confirm(self, request: Request, pk: str | None = None) -> Response:
        return self._decide(
            request, ClaimDraftDecisionSerializer, claim_confirm, "Only project managers confirm claims."
        )

    @extend_schema(
        request=ClaimDraftDecisionSerializer,
        responses={200: WarrantyClaimSerializer, 409: CONFLICT},
        summary="draft → dismissed, with the reason the customer reads (PMs only).",
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated])
    def dismiss(self, request: Request, pk: str | None = None) -> Response:
        return self._decide(
            request, ClaimDraftDecisionSerializer, claim_dismiss, "Only project managers dismiss claims."
        )

    @extend_schema(
        request=ClaimNoteSerializer,
        responses={200: WarrantyClaimSerializer, 409: CONFLICT},
        summary="open → approved (PMs only).",
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated])
    def approve(self, request: Request, pk: str | None = None) -> Response:
        return self._decide(
            request, ClaimNoteSerializer, claim_approve, "Only project managers approve claims."
        )

    @extend_schema(
        request=ClaimRejectSerializer,
        responses={200: WarrantyClaimSerializer, 409: CONFLICT},
        summary="open → rejected, with the reason (PMs only).",
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated])
    def reject(self, request: Request, pk: str | None = None) -> Response:
        return self._decide(
            request, ClaimRejectSerializer, claim_reject, "Only project managers reject claims."
        )

    @extend_schema(
        request=ShipReplacementSerializer,
        responses={200: ShippedClaimSerializer, 409: CONFLICT},
        summary="approved → replacement_shipped: install the replacement, new record (PMs only); "
        "`warnings` says when the server's platform will re-verify it (Vast.ai).",
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated], url_path="ship-replacement")
    def ship_replacement(self, request: Request, pk: str | None = None) -> Response:
        response = self._decide(
            request,
            ShipReplacementSerializer,
            claim_ship_replacement,
            "Only project managers ship replacements.",
        )
        claim = self.get_object()
        response.data["warnings"] = reverify_warnings(server=claim.record.server)
        return response

    @extend_schema(
        request=ClaimNoteSerializer,
        responses={200: WarrantyClaimSerializer, 409: CONFLICT},
        summary="replacement_shipped → closed (PMs only); after a GPU swap only once a passing post-repair "
        "run measured the new card (409 `post_repair_missing`).",
    )
    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated])
    def close(self, request: Request, pk: str | None = None) -> Response:
        return self._decide(request, ClaimNoteSerializer, claim_close, "Only project managers close claims.")


class ClaimAttachmentViewSet(VisibleToMixin, viewsets.GenericViewSet):
    """A claim's logs and photos, listed on their claim; `download` serves the file only after the scoped
    lookup (the claim's customer's members and PMs; anyone else a 404)."""

    queryset = ClaimAttachment.objects.select_related("claim")
    serializer_class = ClaimAttachmentSerializer

    @extend_schema(
        responses={
            (200, content_type): OpenApiResponse(OpenApiTypes.BINARY)
            for content_types in ATTACHMENT_TYPES.values()
            for content_type in content_types
        },
        summary="The attachment's file, as an attachment (photos re-encoded, logs as they came).",
    )
    @action(detail=True, methods=["get"])
    def download(self, request: Request, pk: str | None = None) -> FileResponse:
        attachment = self.get_object()
        try:
            handle = attachment.file.open("rb")
        except FileNotFoundError as missing:  # the moment between the commit and the file's write
            raise Http404(f"{attachment.original_name} is being stored; try again in a moment.") from missing
        text = attachment.content_type == "text/plain"
        response = FileResponse(
            handle,
            as_attachment=True,
            filename=attachment.download_name,
            content_type="text/plain; charset=utf-8" if text else attachment.content_type,
        )
        response["X-Content-Type-Options"] = "nosniff"
        return response


def handover_state(server: Server) -> dict[str, Any]:
    missing = [] if server.status == ServerStatus.HANDED_OVER else hand_over_missing(server=server)
    return {
        "server": server,
        "handed_over": server.status == ServerStatus.HANDED_OVER,
        "ready": server.status == ServerStatus.DEPLOYED and not missing,
        "missing": missing,
    }


class HandoverServerViewSet(ServerStateViewSet):
    """A server's handover, by asset tag: what it still lacks, and the PM's hand-over."""

    serializer_class = HandoverStateSerializer

    @extend_schema(responses={200: HandoverStateSerializer}, summary="The server's handover state.")
    def retrieve(self, request: Request, asset_tag: str | None = None) -> Response:
        return Response(HandoverStateSerializer(handover_state(self.get_object())).data)

    @extend_schema(
        request=HandoverNoteSerializer,
        responses={200: HandoverStateSerializer, 409: CONFLICT},
        summary="deployed → handed_over (PMs only); 409 lists everything missing. The last server closes "
        "the order.",
    )
    @action(
        detail=True,
        methods=["post"],
        permission_classes=[IsAuthenticated],
        filterset_class=None,
        pagination_class=None,
        url_path="hand-over",
    )
    def hand_over(self, request: Request, asset_tag: str | None = None) -> Response:
        server = self.get_object()
        require_pm(request, "Only project managers hand a server over.")
        payload = HandoverNoteSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        handed = server_hand_over(server=server, actor=request.user, note=payload.validated_data["note"])
        return Response(HandoverStateSerializer(handover_state(handed)).data)
