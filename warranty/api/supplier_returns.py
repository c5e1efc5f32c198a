"""The supplier-return part of warranty's API (issue #29): a failed component back to its supplier.

PMs only, as every row of the builder's purchasing: `SupplierReturn.objects.visible_to` gives members
nothing, so a member's list is empty, a return's detail and its actions answer 404, and opening one
answers 403 (the default `PMWritesOthersRead`). Opening, shipping and closing go through
`warranty.services.supplier_returns`; the claim a return came from shows it back (`supplier_return` on
the claim, for PMs).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from dateutil.relativedelta import relativedelta
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from inventory.models import Component
from warranty.choices import SupplierReturnOutcome
from warranty.filters import SupplierReturnFilter
from warranty.models import Attribution, SupplierReturn, WarrantyClaim
from warranty.services.supplier_returns import (
    supplier_return_close,
    supplier_return_open,
    supplier_return_ship,
)
from werkbank.api.transitions import transition_action
from werkbank.api.viewsets import VisibleToMixin
from werkbank.errors import InvalidInput, UnknownObject

CONFLICT = OpenApiResponse(description="A business rule refuses it: `missing` says what is needed.")


class SupplierReturnSerializer(serializers.ModelSerializer):
    serial = serializers.CharField(source="component.serial", read_only=True)
    mpn = serializers.CharField(source="component.part.mpn", read_only=True)
    lot_code = serializers.CharField(source="component.lot.lot_code", read_only=True)
    supplier_name = serializers.CharField(source="supplier.name", read_only=True)
    supplier_warranty_ends = serializers.SerializerMethodField(
        help_text="The supplier's warranty on the component: its receipt plus the supplier's warranty months."
    )
    claim_number = serializers.CharField(source="claim.number", read_only=True, allow_null=True)
    currency = serializers.CharField(
        source="component.lot.purchase_order.currency", read_only=True, help_text="Of the credit amount."
    )
    replacement_serial = serializers.CharField(source="replacement.serial", read_only=True, allow_null=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)

    class Meta:
        model = SupplierReturn
        fields = [
            "id",
            "number",
            "status",
            "component",
            "serial",
            "mpn",
            "lot_code",
            "supplier",
            "supplier_name",
            "supplier_warranty_ends",
            "claim",
            "claim_number",
            "attribution",
            "reason",
            "supplier_rma_number",
            "shipped_at",
            "closed_at",
            "outcome",
            "outcome_note",
            "credit_amount",
            "currency",
            "replacement",
            "replacement_serial",
            "created_by",
            "created_at",
        ]
        read_only_fields = fields

    def get_supplier_warranty_ends(self, supplier_return: SupplierReturn) -> date:
        received = supplier_return.component.received_at.date()
        return received + relativedelta(months=supplier_return.supplier.warranty_months)


class SupplierReturnOpenSerializer(serializers.Serializer):
    component = serializers.IntegerField(
        min_value=1, required=False, help_text="The failed component's id (or give its serial)."
    )
    serial = serializers.CharField(
        max_length=64, required=False, help_text="The failed component's serial, in any letter case."
    )
    claim = serializers.CharField(
        max_length=20, required=False, allow_blank=True, help_text="The claim's number (RMA-YYYY-NNNNN)."
    )
    attribution = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    reason = serializers.CharField(
        max_length=5000, help_text="What is wrong with it, as the supplier is told."
    )

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("component" in data) == bool(data.get("serial", "").strip()):
            raise serializers.ValidationError({"component": "give the component's id or its serial (one)."})
        return data


class SupplierReturnShipSerializer(serializers.Serializer):
    supplier_rma_number = serializers.CharField(max_length=64, help_text="The supplier's RMA number.")
    shipped_at = serializers.DateTimeField(required=False, allow_null=True, default=None)


class SupplierReturnCloseSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=SupplierReturnOutcome.choices)
    note = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=5000, help_text="Required for refused."
    )
    received_at = serializers.DateTimeField(
        required=False, allow_null=True, default=None, help_text="When the supplier's answer came back."
    )
    replacement_serial = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)
    lot_code = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=64,
        help_text="The replacement's lot: empty for the original's, else a lot on the same purchase order.",
    )
    date_code = serializers.CharField(required=False, allow_blank=True, default="", max_length=16)
    credit_amount = serializers.DecimalField(
        max_digits=12, decimal_places=2, required=False, allow_null=True, default=None
    )


def _component(user: Any, data: dict[str, Any]) -> Component:
    components = Component.objects.visible_to(user)
    if "component" in data:
        found = components.filter(pk=data["component"]).first()
        if found is None:
            raise UnknownObject("component", "no component with this id.")
        return found
    matches = list(components.with_serial(data["serial"])[:2])
    if not matches:
        raise UnknownObject("serial", f"no component with the serial {data['serial']!r}.")
    if len(matches) > 1:
        raise InvalidInput("serial", "more than one manufacturer has this serial: give the component's id.")
    return matches[0]


class SupplierReturnViewSet(
    VisibleToMixin, mixins.CreateModelMixin, mixins.RetrieveModelMixin, mixins.ListModelMixin,
    viewsets.GenericViewSet,
):  # fmt: skip
    """Returns to suppliers: open → shipped → closed, one POST per step (PMs only)."""

    queryset = SupplierReturn.objects.select_related(
        "component__part", "component__lot__purchase_order", "supplier", "claim", "replacement", "created_by"
    )
    serializer_class = SupplierReturnSerializer
    filterset_class = SupplierReturnFilter
    ordering_fields = ["created_at", "number"]
    ordering = ["-created_at", "-id"]

    @extend_schema(
        request=SupplierReturnOpenSerializer,
        responses={
            201: SupplierReturnSerializer,
            404: OpenApiResponse(description="No such component."),
            409: CONFLICT,
        },
        summary="Open a return of a failed component to its supplier (PMs only).",
    )
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        payload = SupplierReturnOpenSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        claim = attribution = None
        if data.get("claim"):
            claim = (
                WarrantyClaim.objects.visible_to(request.user).filter(number=data["claim"].strip()).first()
            )
            if claim is None:
                raise UnknownObject("claim", "no claim with this number.")
        if data.get("attribution") is not None:
            attribution = Attribution.objects.visible_to(request.user).filter(pk=data["attribution"]).first()
            if attribution is None:
                raise UnknownObject("attribution", "no attribution with this id.")
        opened = supplier_return_open(
            component=_component(request.user, data),
            actor=request.user,
            reason=data["reason"],
            claim=claim,
            attribution=attribution,
        )
        answer = self.get_serializer(self.get_queryset().get(pk=opened.pk))
        return Response(answer.data, status=status.HTTP_201_CREATED)

    ship = transition_action(
        "ship",
        service=supplier_return_ship,
        subject="supplier_return",
        body=SupplierReturnShipSerializer,
        response=SupplierReturnSerializer,
        summary="open → shipped, with the supplier's RMA number: the component goes to its supplier "
        "(PMs only).",
    )
    close = transition_action(
        "close",
        service=supplier_return_close,
        subject="supplier_return",
        body=SupplierReturnCloseSerializer,
        response=SupplierReturnSerializer,
        summary="shipped → closed with the outcome: credit (amount), replacement (serial into stock) or "
        "refused (note) (PMs only).",
    )
