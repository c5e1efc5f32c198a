"""Serializers of the inventory app. Statuses are read-only: they change through actions."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from inventory.choices import LabelBatchStatus
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
from werkbank.api.serializers import AudienceFieldsMixin, VisiblePrimaryKeyField
from werkbank.models import Organization

MAX_PACKING_LIST_BYTES = 2 * 1024 * 1024  # 10,000 serials of 64 characters fit easily


class PartSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    preferred_supplier = VisiblePrimaryKeyField(Supplier, required=False, allow_null=True)

    class Meta:
        model = Part
        fields = [
            "id",
            "category",
            "manufacturer",
            "mpn",
            "name",
            "vram_gb",
            "tdp_w",
            "pcie_gen",
            "pcie_lanes",
            "u_height",
            "specs",
            "list_price",
            "preferred_supplier",
            "created_at",
        ]
        read_only_fields = ["id", "created_at"]
        validators: list = []  # the service checks (manufacturer, mpn) and names the field
        # The builder's purchasing: what a part costs it, and whom it buys from.
        pm_only_fields = ["list_price", "preferred_supplier"]


class SupplierSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    is_eu = serializers.BooleanField(read_only=True)

    class Meta:
        model = Supplier
        fields = ["id", "name", "vat_id", "country", "is_eu", "contact_name", "contact_email", "created_at"]
        read_only_fields = ["id", "is_eu", "created_at"]
        extra_kwargs = {"name": {"validators": []}}
        # Only PMs see suppliers at all (`visible_to`); their contacts stay internal should that ever change.
        pm_only_fields = ["vat_id", "contact_name", "contact_email"]


class PurchaseOrderLineSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    part = VisiblePrimaryKeyField(Part)
    part_mpn = serializers.CharField(source="part.mpn", read_only=True)
    part_name = serializers.CharField(source="part.name", read_only=True)
    remaining = serializers.IntegerField(read_only=True)

    class Meta:
        model = PurchaseOrderLine
        fields = [
            "id",
            "purchase_order",
            "part",
            "part_mpn",
            "part_name",
            "quantity",
            "unit_price",
            "quantity_received",
            "remaining",
        ]
        read_only_fields = ["id", "purchase_order", "quantity_received", "remaining"]
        extra_kwargs = {"quantity": {"min_value": 1}, "unit_price": {"min_value": Decimal("0")}}
        pm_only_fields = ["unit_price"]


class PurchaseOrderSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    supplier = VisiblePrimaryKeyField(Supplier)
    supplier_name = serializers.CharField(source="supplier.name", read_only=True)
    supplier_country = serializers.CharField(source="supplier.country", read_only=True)
    deliver_to = VisiblePrimaryKeyField(Organization, required=False, allow_null=True)
    lines = PurchaseOrderLineSerializer(many=True)

    class Meta:
        model = PurchaseOrder
        fields = [
            "id",
            "number",
            "supplier",
            "supplier_name",
            "supplier_country",
            "status",
            "currency",
            "deliver_to",
            "non_eu_override_reason",
            "quality_override_reason",
            "notes",
            "sent_at",
            "created_at",
            "lines",
        ]
        read_only_fields = [
            "id",
            "number",
            "status",
            "non_eu_override_reason",
            "quality_override_reason",
            "sent_at",
            "created_at",
        ]
        # A partner gets the PO as a delivery note: its number, status, parts and quantities.
        pm_only_fields = [
            "supplier",
            "supplier_name",
            "supplier_country",
            "currency",
            "non_eu_override_reason",
            "quality_override_reason",
            "notes",
        ]


class PurchaseOrderDetailSerializer(PurchaseOrderSerializer):
    """One PO, with what the quality checks say about its supplier and parts (issue #29). Not on the list:
    the checks read failure rates, which a page of POs should not pay for."""

    quality_warnings = serializers.SerializerMethodField(
        help_text="Sentences with the figures of each flag on the PO's supplier or parts; sending needs a "
        "quality override reason while there are any."
    )

    class Meta(PurchaseOrderSerializer.Meta):
        fields = [*PurchaseOrderSerializer.Meta.fields, "quality_warnings"]
        pm_only_fields = [*PurchaseOrderSerializer.Meta.pm_only_fields, "quality_warnings"]

    def get_quality_warnings(self, po: PurchaseOrder) -> list[str]:
        # Left out for a partner anyway (pm_only_fields): not computed for one either.
        return po_quality_warnings(po) if self._is_pm() else []


class POSendSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    override_reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=4000,
        help_text="Why a PO to a non-EU supplier is sent (seed 000: EU-Bezug).",
    )
    quality_override_reason = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=4000,
        help_text="Why a PO is sent although its supplier or a part is flagged (its quality_warnings).",
    )


class POLineAddSerializer(serializers.Serializer):
    """A line added to a draft PO; the service checks the quantity, the price and that the part is new."""

    part = VisiblePrimaryKeyField(Part, pk_field=serializers.IntegerField(), help_text="A part's id.")
    quantity = serializers.IntegerField()
    unit_price = serializers.DecimalField(max_digits=12, decimal_places=2)


class PurchaseOrderLineAddedSerializer(PurchaseOrderLineSerializer):
    """The added line, and the PO's quality warnings with it (issue #29)."""

    quality_warnings = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta(PurchaseOrderLineSerializer.Meta):
        fields = [*PurchaseOrderLineSerializer.Meta.fields, "quality_warnings"]


class ReceiveSerializer(serializers.Serializer):
    """Receive one PO line: the lot, and the serials from a packing-list CSV or a scanner field."""

    lot = serializers.CharField(max_length=64, help_text="The manufacturer's lot code")
    date_code = serializers.CharField(max_length=16, help_text="The manufacturer's date code, e.g. 2526")
    origin = serializers.CharField(
        max_length=2, min_length=2, help_text="Country of origin, ISO 3166 alpha-2"
    )
    file = serializers.FileField(
        required=False, help_text="Packing-list CSV: a header row with `serial` and optionally `mpn`"
    )
    serials = serializers.CharField(
        required=False, trim_whitespace=False, help_text="Scanner input: one serial per line"
    )

    def validate_file(self, upload: Any) -> Any:
        if upload.size > MAX_PACKING_LIST_BYTES:
            raise serializers.ValidationError(
                f"is {upload.size} bytes; a packing list may have at most {MAX_PACKING_LIST_BYTES} bytes."
            )
        return upload

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("file" in attrs) == ("serials" in attrs):
            raise serializers.ValidationError(
                {"serials": "give either a packing-list file or scanned serials."}
            )
        return attrs


class BatchLotSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    part_mpn = serializers.CharField(source="part.mpn", read_only=True)
    supplier_name = serializers.CharField(source="supplier.name", read_only=True)
    component_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = BatchLot
        fields = [
            "id",
            "lot_code",
            "part",
            "part_mpn",
            "supplier_name",
            "date_code",
            "country_of_origin",
            "component_count",
            "created_at",
        ]
        read_only_fields = fields
        pm_only_fields = ["supplier_name"]


class ComponentSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    part_mpn = serializers.CharField(source="part.mpn", read_only=True)
    lot_code = serializers.CharField(source="lot.lot_code", read_only=True)
    purchase_order = serializers.CharField(source="po_line.purchase_order.number", read_only=True)
    supplier_name = serializers.CharField(source="lot.supplier.name", read_only=True)
    country_of_origin = serializers.CharField(source="lot.country_of_origin", read_only=True)

    class Meta:
        model = Component
        fields = [
            "id",
            "serial",
            "manufacturer",
            "part",
            "part_mpn",
            "lot",
            "lot_code",
            "purchase_order",
            "supplier_name",
            "country_of_origin",
            "status",
            "location",
            "received_at",
        ]
        read_only_fields = fields
        # The PO number is the partner's delivery reference (components are never a customer's rows).
        pm_only_fields = ["supplier_name"]


class StockMovementSerializer(serializers.ModelSerializer):
    serial = serializers.CharField(source="component.serial", read_only=True)
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = StockMovement
        fields = [
            "id",
            "component",
            "serial",
            "actor",
            "created_at",
            "from_status",
            "to_status",
            "from_location",
            "to_location",
            "reason",
        ]
        read_only_fields = fields


class ReceiptSerializer(AudienceFieldsMixin, serializers.Serializer):
    purchase_order = serializers.CharField()
    line = serializers.IntegerField()
    lot = BatchLotSerializer()
    lot_created = serializers.BooleanField()
    received = serializers.IntegerField()
    line_received = serializers.IntegerField()
    line_quantity = serializers.IntegerField()
    serials = serializers.ListField(child=serializers.CharField())
    quality_warnings = serializers.ListField(
        child=serializers.CharField(),
        help_text="What the quality checks say about this lot code of the part (a flagged lot reappearing).",
    )

    class Meta:
        # Failure rates across the fleet (and the supplier they may name) are the builder's business.
        pm_only_fields = ["quality_warnings"]


class LabelBatchSerializer(serializers.ModelSerializer):
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    pdf_url = serializers.SerializerMethodField()

    class Meta:
        model = LabelBatch
        fields = [
            "id",
            "title",
            "lot",
            "purchase_order",
            "count",
            "status",
            "progress",
            "error",
            "attempts",
            "pdf_url",
            "pdf_sha256",
            "pdf_size",
            "requested_by",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.URLField(allow_null=True))  # null until ready
    def get_pdf_url(self, batch: LabelBatch) -> str | None:
        if batch.status != LabelBatchStatus.READY:
            return None
        request = self.context.get("request")
        path = f"/api/v1/inventory/label-batches/{batch.pk}/pdf/"
        return request.build_absolute_uri(path) if request is not None else path


class LabelBatchRequestSerializer(serializers.Serializer):
    """Exactly one of the three: the labels of a lot, of a purchase order, or of the components listed."""

    lot = VisiblePrimaryKeyField(
        BatchLot,
        required=False,
        pk_field=serializers.IntegerField(),
        help_text="A lot's id: all its serials.",
    )
    purchase_order = VisiblePrimaryKeyField(
        PurchaseOrder,
        required=False,
        pk_field=serializers.IntegerField(),
        help_text="A purchase order's id: every serial received on it.",
    )
    components = serializers.ListField(
        child=serializers.IntegerField(min_value=1),
        required=False,
        allow_empty=False,
        max_length=20_000,
        help_text="Component ids, printed in this order.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if len(attrs) != 1:
            raise serializers.ValidationError(
                {"lot": "give exactly one of lot, purchase_order or components."}
            )
        return attrs
