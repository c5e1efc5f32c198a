"""Admin of the inventory app. Writes go through the services; statuses change through actions."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from inventory.models import (
    BatchLot,
    Component,
    Part,
    PurchaseOrder,
    PurchaseOrderLine,
    StockMovement,
    Supplier,
)
from inventory.services import (
    PART_FIELDS,
    SUPPLIER_FIELDS,
    part_create,
    part_update,
    po_close,
    po_send,
    supplier_create,
    supplier_update,
)
from werkbank.access import is_pm
from werkbank.admin import PMAdmin, ReadOnlyInline, audit_timeline


class ReadOnlyPMAdmin(PMAdmin):
    """Rows written only by services (receiving, the ledger): PMs look, nobody edits here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Part)
class PartAdmin(PMAdmin):
    list_display = [
        "mpn",
        "name",
        "category",
        "manufacturer",
        "vram_gb",
        "tdp_w",
        "list_price",
        "preferred_supplier",
    ]
    list_filter = ["category", "manufacturer", "pcie_gen", "preferred_supplier"]
    search_fields = ["mpn", "name", "manufacturer"]

    def save_model(self, request: HttpRequest, obj: Part, form: Any, change: bool) -> None:
        if change:
            part_update(part=obj, actor=request.user, **self.changed_values(form))
        else:
            created = part_create(
                actor=request.user, **{key: form.cleaned_data.get(key) for key in PART_FIELDS}
            )
            obj.pk = created.pk


@admin.register(Supplier)
class SupplierAdmin(PMAdmin):
    list_display = ["name", "country", "is_eu", "vat_id", "contact_email"]
    list_filter = ["country"]
    search_fields = ["name", "vat_id"]

    @admin.display(boolean=True, description="EU")
    def is_eu(self, obj: Supplier) -> bool:
        return obj.is_eu

    def save_model(self, request: HttpRequest, obj: Supplier, form: Any, change: bool) -> None:
        if change:
            supplier_update(supplier=obj, actor=request.user, **self.changed_values(form))
        else:
            data = {key: form.cleaned_data.get(key) or "" for key in SUPPLIER_FIELDS}
            obj.pk = supplier_create(actor=request.user, **data).pk


class PurchaseOrderLineInline(ReadOnlyInline):
    model = PurchaseOrderLine
    fields = ["part", "quantity", "unit_price", "quantity_received"]
    readonly_fields = fields


@admin.register(PurchaseOrder)
class PurchaseOrderAdmin(ReadOnlyPMAdmin):
    """POs are drafted by `order_procure` or the API; here PMs review them and send or close them."""

    list_display = ["number", "supplier", "status", "deliver_to", "currency", "sent_at", "created_at"]
    list_filter = ["status", "supplier", "deliver_to"]
    search_fields = ["number", "supplier__name"]
    list_select_related = ["supplier", "deliver_to"]
    inlines = [PurchaseOrderLineInline]
    readonly_fields = ["timeline"]
    actions = ["send_selected", "close_selected"]

    @admin.display(description="Audit timeline")
    def timeline(self, obj: PurchaseOrder) -> str:
        return audit_timeline(obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # The change list's actions need it; the form itself shows only read-only fields.
        return is_pm(request.user)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [field.name for field in PurchaseOrder._meta.fields] + ["timeline"]

    @admin.action(
        description="Send selected purchase orders (EU suppliers; non-EU needs the API with a reason)"
    )
    def send_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request,
            queryset.select_related("supplier"),
            lambda po: po_send(po=po, actor=request.user),
            "sent",
        )

    @admin.action(description="Close selected purchase orders")
    def close_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(request, queryset, lambda po: po_close(po=po, actor=request.user), "closed")


@admin.register(BatchLot)
class BatchLotAdmin(ReadOnlyPMAdmin):
    list_display = [
        "lot_code",
        "part",
        "supplier",
        "purchase_order",
        "date_code",
        "country_of_origin",
        "labels",
        "created_at",
    ]
    list_filter = ["supplier", "country_of_origin", "part"]
    search_fields = ["lot_code", "part__mpn", "purchase_order__number"]
    list_select_related = ["part", "supplier", "purchase_order"]

    @admin.display(description="Labels")
    def labels(self, obj: BatchLot) -> str:
        return format_html('<a href="{}">PDF</a>', reverse("lot-labels", args=[obj.pk]))


@admin.register(Component)
class ComponentAdmin(ReadOnlyPMAdmin):
    list_display = ["serial", "part", "lot", "status", "location", "received_at"]
    list_filter = ["status", "part", "lot__supplier"]
    search_fields = ["serial", "lot__lot_code", "part__mpn"]
    list_select_related = ["part", "lot"]


@admin.register(StockMovement)
class StockMovementAdmin(ReadOnlyPMAdmin):
    list_display = ["created_at", "component", "from_status", "to_status", "to_location", "actor", "reason"]
    list_filter = ["to_status"]
    search_fields = ["component__serial", "reason"]
    list_select_related = ["component__part", "actor"]
