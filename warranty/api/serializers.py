"""Serializers of the warranty API: records with their lineage, registrations, claims, the hand-over."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from inventory.models import Component
from warranty.models import (
    ClaimAttachment,
    SupplierReturn,
    WarrantyClaim,
    WarrantyRecord,
    WarrantyRegistration,
)
from warranty.selectors import attachment_download_url
from werkbank.api.serializers import AudienceFieldsMixin


class WarrantyRecordSerializer(serializers.ModelSerializer):
    server_hostname = serializers.CharField(source="server.hostname", read_only=True)
    order_reference = serializers.CharField(source="order.reference", read_only=True)
    replaces_serial = serializers.CharField(source="replaces.serial", read_only=True, allow_null=True)
    replaced_by = serializers.SerializerMethodField(help_text="The id of the record that replaced this one.")
    replaced_by_serial = serializers.SerializerMethodField()

    class Meta:
        model = WarrantyRecord
        fields = [
            "id",
            "kind",
            "serial",
            "description",
            "server",
            "server_hostname",
            "order",
            "order_reference",
            "customer",
            "start_date",
            "term_months",
            "end_date",
            "replaces",
            "replaces_serial",
            "replaced_by",
            "replaced_by_serial",
            "replaced_at",
        ]
        read_only_fields = fields

    def _successor(self, record: WarrantyRecord) -> WarrantyRecord | None:
        try:
            return record.replaced_by
        except WarrantyRecord.DoesNotExist:
            return None

    def get_replaced_by(self, record: WarrantyRecord) -> int | None:
        successor = self._successor(record)
        return successor.pk if successor else None

    def get_replaced_by_serial(self, record: WarrantyRecord) -> str | None:
        successor = self._successor(record)
        return successor.serial if successor else None


class WarrantyRegistrationSerializer(serializers.ModelSerializer):
    serial = serializers.CharField(source="component.serial", read_only=True)
    server_hostname = serializers.CharField(source="server.hostname", read_only=True)
    customer_name = serializers.CharField(source="customer.name", read_only=True)

    class Meta:
        model = WarrantyRegistration
        fields = [
            "id",
            "component",
            "serial",
            "server",
            "server_hostname",
            "customer",
            "customer_name",
            "registered_at",
        ]
        read_only_fields = fields


class SupplierReturnLinkSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.CharField()
    status = serializers.CharField()


class ClaimAttachmentSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    """A log or photo of a claim; `download_url` serves the file after the access check."""

    uploaded_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username", read_only=True
    )
    download_url = serializers.SerializerMethodField(help_text="The file, after the access check.")

    class Meta:
        model = ClaimAttachment
        fields = [
            "id",
            "kind",
            "content_type",
            "original_name",
            "size_bytes",
            "sha256",
            "uploaded_by",
            "uploaded_at",
            "download_url",
        ]
        read_only_fields = fields
        pm_only_fields = ["uploaded_by"]  # a login name (werkbank/audiences.py)

    def get_download_url(self, attachment: ClaimAttachment) -> str:
        url = attachment_download_url(attachment.pk)
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request is not None else url


class ClaimAttachSerializer(serializers.Serializer):
    file = serializers.FileField(
        help_text="A log (plain text, gzip or ZIP) or a photo (JPEG, PNG or WebP, stored re-encoded); its "
        "content decides, not its name.",
    )


class WarrantyClaimSerializer(AudienceFieldsMixin, serializers.ModelSerializer):
    serial = serializers.CharField(source="record.serial", read_only=True)
    opened_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    supplier_return = serializers.SerializerMethodField(
        help_text="The return of the failed component to its supplier, if any (PMs only)."
    )
    attachments = ClaimAttachmentSerializer(many=True, read_only=True)

    class Meta:
        model = WarrantyClaim
        fields = [
            "id",
            "number",
            "record",
            "serial",
            "customer",
            "status",
            "description",
            "decision_note",
            "replacement_record",
            "finding",
            "opened_by",
            "supplier_return",
            "attachments",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields
        # A login name, and the builder's business with its supplier (werkbank/audiences.py).
        pm_only_fields = ["opened_by", "supplier_return"]

    @extend_schema_field(SupplierReturnLinkSerializer(allow_null=True))
    def get_supplier_return(self, claim: WarrantyClaim) -> dict[str, Any] | None:
        try:
            supplier_return = claim.supplier_return
        except SupplierReturn.DoesNotExist:
            return None
        return {"id": supplier_return.pk, "number": supplier_return.number, "status": supplier_return.status}


class ClaimOpenSerializer(serializers.Serializer):
    record = serializers.IntegerField(min_value=1, help_text="The warranty record's id.")
    description = serializers.CharField(max_length=5000)


class ClaimNoteSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class ClaimRejectSerializer(serializers.Serializer):
    note = serializers.CharField(max_length=5000, help_text="Why: the customer reads it.")


class ClaimDraftDecisionSerializer(serializers.Serializer):
    """A PM's decision on a claim drafted from a drift finding: confirm or dismiss, always with a reason."""

    note = serializers.CharField(
        max_length=5000,
        help_text="Why: confirming, the PM's reason (audited); dismissing, the reason the customer reads.",
    )


class ShippedClaimSerializer(WarrantyClaimSerializer):
    """The claim once its replacement went in, with what the PM must know about the swap (PMs only: the
    action is theirs)."""

    warnings = serializers.ListField(
        child=serializers.CharField(),
        read_only=True,
        help_text="E.g. the server is listed on Vast.ai, which re-verifies a machine whose components "
        "change.",
    )

    class Meta(WarrantyClaimSerializer.Meta):
        fields = [*WarrantyClaimSerializer.Meta.fields, "warnings"]
        read_only_fields = fields


class ShipReplacementSerializer(serializers.Serializer):
    component = serializers.PrimaryKeyRelatedField(
        queryset=Component.objects.all(), help_text="The replacement: the same part, in stock."
    )
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)


class HandoverStateSerializer(serializers.Serializer):
    """Where a server stands on its way to the customer."""

    asset_tag = serializers.CharField(source="server.asset_tag")
    hostname = serializers.CharField(source="server.hostname")
    status = serializers.CharField(source="server.status")
    handed_over = serializers.BooleanField()
    ready = serializers.BooleanField(help_text="The server may be handed over now.")
    missing = serializers.ListField(child=serializers.CharField())


class HandoverNoteSerializer(serializers.Serializer):
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
