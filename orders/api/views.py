"""API views of the orders app: thin viewsets whose writes call the services."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from orders.api.serializers import (
    ApprovalChecksSerializer,
    ApproveSerializer,
    OrderSerializer,
    ProcureSerializer,
    ROIAssessmentSerializer,
    ROIInputSerializer,
    ROIResultSerializer,
    ServerConfigurationSerializer,
    SizingResultSerializer,
    TransitionChecksSerializer,
    TransitionSerializer,
    WorkloadSerializer,
    WorkloadWithSizingSerializer,
)
from orders.choices import REASON_REQUIRED
from orders.filters import OrderFilter, ROIAssessmentFilter, ServerConfigurationFilter
from orders.models import Order, ROIAssessment, ServerConfiguration, Workload
from orders.selectors import approval_checks, order_events, order_sizing, transition_checks
from orders.services import (
    TRANSITION_SERVICES,
    configuration_create,
    configuration_update,
    order_create,
    order_update,
    roi_assess,
    roi_preview,
    workload_set,
)
from werkbank.access import is_pm
from werkbank.api.serializers import AuditEventSerializer, ReasonSerializer
from werkbank.api.transitions import transition_action
from werkbank.api.viewsets import ScopedReadOnlyViewSet, ScopedViewSet
from werkbank.audiences import audiences_of


def _lines(validated: dict[str, Any]) -> list[tuple[Any, int]] | None:
    lines = validated.pop("lines", None)
    return None if lines is None else [(line["part"], line["quantity"]) for line in lines]


class ServerConfigurationViewSet(ScopedViewSet):
    """Server configurations: a bill of materials and a PSU layout."""

    queryset = ServerConfiguration.objects.prefetch_related("lines__part")
    serializer_class = ServerConfigurationSerializer
    filterset_class = ServerConfigurationFilter
    ordering_fields = ["name", "created_at"]

    def perform_create(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        lines = _lines(data) or []
        serializer.instance = configuration_create(actor=self.request.user, lines=lines, **data)

    def perform_update(self, serializer: Any) -> None:
        data = dict(serializer.validated_data)
        lines = _lines(data)
        serializer.instance = configuration_update(
            configuration=serializer.instance, actor=self.request.user, lines=lines, **data
        )


def _transition_action(name: str) -> Any:
    """The POST action for one transition; its body is a note, or a reason where one is required."""
    body = {"approve": ApproveSerializer, "procure": ProcureSerializer}.get(
        name, ReasonSerializer if name in REASON_REQUIRED else TransitionSerializer
    )
    return transition_action(
        name, service=TRANSITION_SERVICES[name], subject="order", body=body, response=OrderSerializer
    )


class OrderViewSet(ScopedViewSet):
    """Customer orders. Status changes only through the POST actions, one per transition."""

    queryset = Order.objects.select_related("customer", "configuration").prefetch_related(
        "purchase_order_links"
    )
    serializer_class = OrderSerializer
    filterset_class = OrderFilter
    ordering_fields = ["created_at", "reference", "status"]

    def perform_create(self, serializer: Any) -> None:
        serializer.instance = order_create(actor=self.request.user, **serializer.validated_data)

    def perform_update(self, serializer: Any) -> None:
        serializer.instance = order_update(
            order=serializer.instance, actor=self.request.user, **serializer.validated_data
        )

    submit = _transition_action("submit")
    approve = _transition_action("approve")
    reject = _transition_action("reject")
    procure = _transition_action("procure")
    start_assembly = _transition_action("start_assembly")
    start_burn_in = _transition_action("start_burn_in")
    start_deployment = _transition_action("start_deployment")
    hand_over = _transition_action("hand_over")
    close = _transition_action("close")
    cancel = _transition_action("cancel")

    @extend_schema(responses={200: AuditEventSerializer(many=True)}, summary="The order's audit timeline.")
    @action(detail=True, methods=["get"], pagination_class=None, filterset_class=None)
    def events(self, request: Request, pk: str | None = None) -> Response:
        order = self.get_object()
        events = order_events(order=order, audiences=audiences_of(request.user))
        return Response(AuditEventSerializer(events, many=True, context={"request": request}).data)

    @extend_schema(
        methods=["GET"],
        responses={200: ROIAssessmentSerializer(many=True)},
        summary="The order's ROI versions.",
    )
    @extend_schema(
        methods=["POST"],
        request=ROIInputSerializer,
        responses={201: ROIAssessmentSerializer},
        summary="Save a new ROI assessment version (the latest one counts for approval).",
    )
    @action(
        detail=True,
        methods=["get", "post"],
        url_path="roi-assessments",
        pagination_class=None,
        filterset_class=None,
    )
    def roi_assessments(self, request: Request, pk: str | None = None) -> Response:
        order = self.get_object()
        if request.method == "GET":
            return Response(
                ROIAssessmentSerializer(
                    order.roi_assessments.select_related("created_by", "order"),
                    many=True,
                    context={"request": request},
                ).data
            )
        payload = ROIInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        assessment = roi_assess(order=order, actor=request.user, **payload.validated_data)
        return Response(
            ROIAssessmentSerializer(assessment, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        methods=["GET"], responses={200: WorkloadWithSizingSerializer}, summary="Workload and VRAM sizing."
    )
    @extend_schema(
        methods=["PUT"],
        request=WorkloadSerializer,
        responses={200: WorkloadWithSizingSerializer},
        summary="Set the customer's workload (a preset or an explicit architecture).",
    )
    @action(detail=True, methods=["get", "put"], pagination_class=None, filterset_class=None)
    def workload(self, request: Request, pk: str | None = None) -> Response:
        order = self.get_object()
        if request.method == "PUT":
            payload = WorkloadSerializer(data=request.data)
            payload.is_valid(raise_exception=True)
            workload_set(order=order, actor=request.user, **payload.validated_data)
        workload = Workload.objects.filter(order=order).first()
        if workload is None:
            raise NotFound(f"Order {order.reference} has no workload yet.")
        sizing = order_sizing(order=order)
        return Response(
            {"workload": WorkloadSerializer(workload).data, "sizing": SizingResultSerializer(sizing).data}
        )

    @extend_schema(
        responses={200: ApprovalChecksSerializer}, summary="The approval gate's checks with their numbers."
    )
    @action(
        detail=True, methods=["get"], url_path="approval-checks", pagination_class=None, filterset_class=None
    )
    def approval_checks(self, request: Request, pk: str | None = None) -> Response:
        order = self.get_object()
        checks = approval_checks(order=order)
        return Response(
            ApprovalChecksSerializer(
                {
                    "approvable": all(check.ok for check in checks),
                    "override_reason": order.approval_override_reason,
                    "checks": [asdict(check) for check in checks],
                },
                context={"request": request},
            ).data
        )

    @extend_schema(
        responses={200: TransitionChecksSerializer},
        summary="For each transition the order's status allows, what is still missing (PMs only).",
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="transition-checks",
        pagination_class=None,
        filterset_class=None,
    )
    def transition_checks(self, request: Request, pk: str | None = None) -> Response:
        order = self.get_object()
        if not is_pm(request.user):
            raise PermissionDenied("Only project managers move orders through their statuses.")
        return Response(
            {
                "order": order.reference,
                "status": order.status,
                "transitions": [asdict(check) for check in transition_checks(order=order)],
            }
        )


class ROIAssessmentViewSet(ScopedReadOnlyViewSet):
    """Every ROI assessment version the user may see; `preview` computes one without saving."""

    queryset = ROIAssessment.objects.select_related("order", "created_by")
    serializer_class = ROIAssessmentSerializer
    filterset_class = ROIAssessmentFilter
    ordering_fields = ["created_at", "version"]

    @extend_schema(
        request=ROIInputSerializer,
        responses={200: ROIResultSerializer},
        summary="Compute an ROI assessment without saving it (PMs only).",
    )
    @action(detail=False, methods=["post"], pagination_class=None, filterset_class=None)
    def preview(self, request: Request) -> Response:
        if not is_pm(request.user):
            raise PermissionDenied("Only project managers compute ROI previews.")
        payload = ROIInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        values = {
            key: value for key, value in payload.validated_data.items() if key not in {"currency", "note"}
        }
        result = roi_preview(**values)
        data = asdict(result)
        if data["payback_months"] == float("inf"):
            data["payback_months"] = None
        return Response(ROIResultSerializer(data).data)
