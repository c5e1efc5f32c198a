"""API views of the inventory app: thin viewsets whose writes call the services."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import FileResponse, Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from inventory.api.serializers import (
    MAX_PACKING_LIST_BYTES,
    BatchLotSerializer,
    ComponentSerializer,
    LabelBatchRequestSerializer,
    LabelBatchSerializer,
    PartSerializer,
    POLineAddSerializer,
    POSendSerializer,
    PurchaseOrderDetailSerializer,
    PurchaseOrderLineAddedSerializer,
    PurchaseOrderLineSerializer,
    PurchaseOrderSerializer,
    ReceiptSerializer,
    ReceiveSerializer,
    StockMovementSerializer,
    SupplierSerializer,
)
from inventory.choices import LabelBatchStatus
from inventory.filters import (
    BatchLotFilter,
    ComponentFilter,
    LabelBatchFilter,
    PartFilter,
    PurchaseOrderFilter,
    PurchaseOrderLineFilter,
    StockMovementFilter,
    SupplierFilter,
)
from inventory.gates import po_quality_warnings
from inventory.models import (
    BatchLot,
    Component,
    LabelBatch,
    Part,
    PurchaseOrder,
    PurchaseOrderLine,
    StockMovement,
    Supplier,
)
from inventory.packing import parse_csv, parse_scanner
from inventory.selectors import lot_component_counts, lot_labels_pdf
from inventory.services import (
    label_batch_request,
    part_create,
    part_update,
    po_create,
    po_line_add,
    po_line_receive,
    supplier_create,
    supplier_update,
)
from inventory.services.purchase_orders import PO_TRANSITION_SERVICES
from werkbank.access import Purpose
from werkbank.api.pagination import KeysetOrOffsetPagination
from werkbank.api.parsers import FormParser, JSONParser, MultiPartParser
from werkbank.api.serializers import NoteSerializer, ReasonSerializer
from werkbank.api.transitions import transition_action
from werkbank.api.viewsets import ScopedReadOnlyViewSet, ScopedViewSet, VisibleToMixin


def _receive_body_limit() -> int:
    """A receipt's body (werkbank.api.parsers): a packing list at its limit, plus the form fields."""
    return MAX_PACKING_LIST_BYTES + settings.DATA_UPLOAD_MAX_MEMORY_SIZE


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


class SupplierViewSet(ScopedViewSet):
    """Suppliers with their country; EU membership is derived from it."""

    queryset = Supplier.objects.all()
    serializer_class = SupplierSerializer
    filterset_class = SupplierFilter
    ordering_fields = ["name", "country"]

    def perform_create(self, serializer: Any) -> None:
        serializer.instance = supplier_create(actor=self.request.user, **serializer.validated_data)

    def perform_update(self, serializer: Any) -> None:
        serializer.instance = supplier_update(
            supplier=serializer.instance, actor=self.request.user, **serializer.validated_data
        )


def _po_action(name: str) -> Any:
    """The POST action for one PO transition."""
    body = {"send": POSendSerializer, "cancel": ReasonSerializer}.get(name, NoteSerializer)
    return transition_action(
        name,
        service=PO_TRANSITION_SERVICES[name],
        subject="po",
        body=body,
        response=PurchaseOrderDetailSerializer,
    )


class PurchaseOrderViewSet(
    VisibleToMixin,
    mixins.CreateModelMixin,
    mixins.RetrieveModelMixin,
    mixins.ListModelMixin,
    viewsets.GenericViewSet,
):
    """Purchase orders. Partners see those delivered to their workshop. Status changes through actions.

    One PO (not the list) carries its `quality_warnings`; `lines` adds a line to a draft (PMs only)."""

    queryset = PurchaseOrder.objects.select_related("supplier").prefetch_related("lines__part")
    serializer_class = PurchaseOrderSerializer
    filterset_class = PurchaseOrderFilter
    ordering_fields = ["created_at", "number", "status"]

    def get_serializer_class(self) -> Any:
        return PurchaseOrderSerializer if self.action == "list" else PurchaseOrderDetailSerializer

    def perform_create(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        lines = [(line["part"], line["quantity"], line["unit_price"]) for line in data.pop("lines")]
        serializer.instance = po_create(actor=self.request.user, lines=lines, **data)

    send = _po_action("send")
    cancel = _po_action("cancel")
    close = _po_action("close")

    @extend_schema(
        request=POLineAddSerializer,
        responses={201: PurchaseOrderLineAddedSerializer},
        summary="Add a line to a draft PO; the answer carries the PO's quality warnings.",
    )
    @action(detail=True, methods=["post"], filterset_class=None, pagination_class=None)
    def lines(self, request: Request, pk: str | None = None) -> Response:
        po = self.get_object()
        payload = POLineAddSerializer(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        line: Any = po_line_add(po=po, actor=request.user, **payload.validated_data)
        line.quality_warnings = po_quality_warnings(line.purchase_order)
        context = self.get_serializer_context()
        return Response(PurchaseOrderLineAddedSerializer(line, context=context).data, status=201)


class PurchaseOrderLineViewSet(ScopedReadOnlyViewSet):
    """PO lines with what has arrived; `receive` books serials by lot.

    Receiving looks the line up for `Purpose.RECEIVE`: PMs on any PO, a partner's members on POs delivered
    to their workshop; anyone else gets a 404.
    """

    queryset = PurchaseOrderLine.objects.select_related("part", "purchase_order")
    serializer_class = PurchaseOrderLineSerializer
    #: `receive` sets its own body limit (werkbank.api.parsers); the rest keep the global one.
    max_body_bytes: Any = None
    filterset_class = PurchaseOrderLineFilter

    @extend_schema(
        request={"multipart/form-data": ReceiveSerializer, "application/json": ReceiveSerializer},
        responses={201: ReceiptSerializer},
        summary="Receive serials into a lot, all or nothing: 400 names each bad row and column.",
    )
    @action(
        detail=True,
        methods=["post"],
        permission_classes=[IsAuthenticated],
        purpose=Purpose.RECEIVE,
        parser_classes=[MultiPartParser, FormParser, JSONParser],
        max_body_bytes=_receive_body_limit,
        filterset_class=None,
        pagination_class=None,
    )
    def receive(self, request: Request, pk: str | None = None) -> Response:
        line = self.get_object()
        payload = ReceiveSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        packing = parse_csv(data["file"].read()) if "file" in data else parse_scanner(data["serials"])
        receipt = po_line_receive(
            line=line,
            actor=request.user,
            lot_code=data["lot"],
            date_code=data["date_code"],
            origin=data["origin"],
            packing=packing,
        )
        lot = (
            BatchLot.objects.select_related("part", "supplier")
            .with_component_count(request.user)
            .get(pk=receipt.lot.pk)
        )
        return Response(
            ReceiptSerializer(
                {
                    "purchase_order": receipt.line.purchase_order.number,
                    "line": receipt.line.pk,
                    "lot": lot,
                    "lot_created": receipt.lot_created,
                    "received": len(receipt.components),
                    "line_received": receipt.line.quantity_received,
                    "line_quantity": receipt.line.quantity,
                    "serials": [component.serial for component in receipt.components],
                    "quality_warnings": receipt.quality_warnings,
                },
                context=self.get_serializer_context(),
            ).data,
            status=201,
        )


class BatchLotViewSet(ScopedReadOnlyViewSet):
    """Production lots; `labels` is a PDF of QR labels, one per serial."""

    queryset = BatchLot.objects.select_related("part", "supplier")
    serializer_class = BatchLotSerializer
    filterset_class = BatchLotFilter

    def get_queryset(self) -> QuerySet:
        # The count is of the components the caller may see, never of another tenant's. A list counts for
        # its page only (paginate_queryset); a single lot keeps the annotation.
        queryset = super().get_queryset()
        if self.action == "list":
            return queryset
        return queryset.with_component_count(self.request.user)

    def paginate_queryset(self, queryset: QuerySet) -> list | None:
        page = super().paginate_queryset(queryset)
        if page is not None:
            lot_component_counts(user=self.request.user, lots=page)
        return page

    @extend_schema(
        responses={(200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY)},
        summary="The lot's QR labels (PDF), one per component the caller sees.",
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def labels(self, request: Request, pk: str | None = None) -> HttpResponse:
        lot = self.get_object()
        visible = Component.objects.visible_to(request.user).filter(lot=lot)
        response = HttpResponse(lot_labels_pdf(lot=lot, components=visible), content_type="application/pdf")
        response["Content-Disposition"] = f'attachment; filename="labels-{lot.pk}.pdf"'
        response["X-Content-Type-Options"] = "nosniff"
        return response


class ComponentViewSet(ScopedReadOnlyViewSet):
    """One row per serial. `?serial=…` looks one up; `?serial_prefix=…` lists a range.

    A big list: `?cursor=` pages it by keyset in id order, as fast at the end as at the start."""

    queryset = Component.objects.select_related("part", "lot__supplier", "po_line__purchase_order")
    serializer_class = ComponentSerializer
    filterset_class = ComponentFilter
    ordering_fields = ["serial", "received_at", "status"]
    pagination_class = KeysetOrOffsetPagination


class StockMovementViewSet(ScopedReadOnlyViewSet):
    """The stock ledger: every change of a component's status or location.

    A big list: `?cursor=` pages it by keyset in id order, as fast at the end as at the start."""

    queryset = StockMovement.objects.select_related("component", "actor")
    serializer_class = StockMovementSerializer
    filterset_class = StockMovementFilter
    pagination_class = KeysetOrOffsetPagination


class LabelBatchViewSet(
    VisibleToMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    """Label batches: the A4 label sheets of a lot, a purchase order or a list of components, rendered by a
    Celery task. POST asks for one (201, queued), GET polls its status and progress, `pdf` downloads it once
    it is ready. A batch is its requester's (and the PMs'): anyone else gets a 404. A lot's sheet of up to
    200 labels also renders at once: `lots/{id}/labels/`."""

    queryset = LabelBatch.objects.select_related("requested_by")
    serializer_class = LabelBatchSerializer
    # Not PMs only: partners label what they receive. Anyone prints only the components they may see.
    permission_classes = [IsAuthenticated]
    filterset_class = LabelBatchFilter
    ordering_fields = ["created_at"]
    ordering = ["-created_at", "-id"]

    @extend_schema(
        request=LabelBatchRequestSerializer,
        responses={201: LabelBatchSerializer},
        summary="Ask for the labels of a lot, a purchase order or a list of components (rendered by a task).",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        payload = LabelBatchRequestSerializer(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        batch = label_batch_request(actor=request.user, **payload.validated_data)
        return Response(
            self.get_serializer(self.get_queryset().get(pk=batch.pk)).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        responses={(200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY)},
        summary="The batch's label sheets (PDF), once the task has rendered them.",
    )
    @action(detail=True, methods=["get"], filterset_class=None, pagination_class=None)
    def pdf(self, request: Request, pk: str | None = None) -> FileResponse:
        batch = self.get_object()
        if batch.status != LabelBatchStatus.READY or not batch.pdf.name:
            raise Http404(f"Label batch {batch.pk} is {batch.status}: it has no PDF yet.")
        try:
            handle = batch.pdf.open("rb")
        except FileNotFoundError as missing:
            message = f"Label batch {batch.pk}'s PDF is being stored; try again in a moment."
            raise Http404(message) from missing
        response = FileResponse(
            handle, as_attachment=True, filename=f"labels-{batch.pk}.pdf", content_type="application/pdf"
        )
        response["X-Content-Type-Options"] = "nosniff"
        return response
