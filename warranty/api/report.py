"""The PM's warranty report in the API (issue #29): records across customers by how soon they end, and the
spares in stock near the end of their supplier warranty. The same selectors as the page /pm/warranty/.

PMs only, as the supplier returns: anyone else gets an empty list (nothing to see, nothing leaked; the
report reads every customer's records, so a customer's own are in /api/v1/warranty/records/). A filter the
report does not know is a 400 that names it, for anyone.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets

from inventory.selectors import SpareWarranty, spares_supplier_warranty_ending
from warranty.choices import RecordKind
from warranty.models import WarrantyRecord
from warranty.selectors import (
    DEFAULT_REPORT_BUCKET,
    REPORT_BUCKETS,
    report_bucket,
    report_customer,
    report_kind,
    warranty_report,
)
from werkbank.access import is_pm

#: The spares' horizon in days (as the page's): supplier warranties ending within it, or ended.
SPARES_WITHIN_DAYS = 90


class ReportRecordSerializer(serializers.ModelSerializer):
    customer_name = serializers.CharField(source="customer.name", read_only=True)
    server_hostname = serializers.CharField(source="server.hostname", read_only=True)
    order_reference = serializers.CharField(source="order.reference", read_only=True)
    days_left = serializers.SerializerMethodField(help_text="Days until the end date; negative: ended.")

    class Meta:
        model = WarrantyRecord
        fields = [
            "id",
            "kind",
            "serial",
            "description",
            "customer",
            "customer_name",
            "server",
            "server_hostname",
            "order",
            "order_reference",
            "start_date",
            "term_months",
            "end_date",
            "days_left",
        ]
        read_only_fields = fields

    def get_days_left(self, record: WarrantyRecord) -> int:
        return (record.end_date - self.context["today"]).days


class SpareWarrantySerializer(serializers.Serializer):
    component = serializers.IntegerField(source="component.pk", read_only=True)
    serial = serializers.CharField(source="component.serial", read_only=True)
    part = serializers.IntegerField(source="component.part_id", read_only=True)
    mpn = serializers.CharField(source="component.part.mpn", read_only=True)
    part_name = serializers.CharField(source="component.part.name", read_only=True)
    supplier = serializers.IntegerField(source="component.lot.supplier_id", read_only=True)
    supplier_name = serializers.CharField(source="component.lot.supplier.name", read_only=True)
    lot = serializers.IntegerField(source="component.lot_id", read_only=True)
    lot_code = serializers.CharField(source="component.lot.lot_code", read_only=True)
    received_at = serializers.DateTimeField(source="component.received_at", read_only=True)
    supplier_warranty_months = serializers.IntegerField(
        source="component.lot.supplier.warranty_months", read_only=True
    )
    supplier_warranty_ends = serializers.DateField(source="ends", read_only=True)
    days_left = serializers.IntegerField(read_only=True, help_text="Negative: ended that many days ago.")
    ended = serializers.BooleanField(read_only=True)


@extend_schema_view(
    list=extend_schema(
        summary="Warranty records of every customer ending within 30/60/90/180 days, or expired (PMs only).",
        parameters=[
            OpenApiParameter(
                "bucket",
                OpenApiTypes.STR,
                enum=list(REPORT_BUCKETS),
                description=f"Records ending within so many days (not ended yet), or `expired`; "
                f"default {DEFAULT_REPORT_BUCKET}. 400 for another value.",
            ),
            OpenApiParameter("customer", OpenApiTypes.INT, description="Only this customer's records."),
            OpenApiParameter("kind", OpenApiTypes.STR, enum=list(RecordKind.values)),
        ],
    )
)
class WarrantyReportViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """The warranty report: current records (replaced ones left out) by how soon they end, soonest first
    (expired: the most recently ended first), along the records' (end date, id) index."""

    serializer_class = ReportRecordSerializer
    filter_backends: list[Any] = []  # the filters are the selector's (bucket, customer, kind)

    def get_queryset(self) -> QuerySet[WarrantyRecord]:
        params = self.request.query_params
        filters = {
            "bucket": report_bucket(params.get("bucket")),
            "customer": report_customer(params.get("customer")),
            "kind": report_kind(params.get("kind")),
        }
        if not is_pm(self.request.user):
            return WarrantyRecord.objects.none()
        return warranty_report(**filters, today=self._today())

    def _today(self) -> date:
        if not hasattr(self, "today"):
            self.today = timezone.localdate()
        return self.today

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "today": self._today()}


@extend_schema_view(
    list=extend_schema(
        summary="Spares in stock whose supplier warranty ends within 90 days, or has ended (PMs only).",
    )
)
class SparesEndingViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Components in stock near the end of their supplier warranty (receipt + the supplier's months),
    soonest end first; those already ended come first, with `ended`."""

    serializer_class = SpareWarrantySerializer
    filter_backends: list[Any] = []

    def get_queryset(self) -> list[SpareWarranty]:  # type: ignore[override]
        if not is_pm(self.request.user):
            return []
        return spares_supplier_warranty_ending(within_days=SPARES_WITHIN_DAYS)
