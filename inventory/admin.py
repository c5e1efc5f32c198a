"""Admin of the inventory app. Writes go through the services; statuses change through actions."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import Count, F, Q, QuerySet
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

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
from inventory.resources import PartResource, SupplierResource
from inventory.services import (
    label_batch_request,
    part_create,
    part_update,
    po_close,
    po_send,
    supplier_create,
    supplier_update,
)
from inventory.services.catalogue import PART_FIELDS, SUPPLIER_FIELDS
from werkbank.access import is_pm
from werkbank.admin import (
    PMAdmin,
    ReadOnlyInline,
    admin_link,
    audit_timeline,
    badge,
    day,
    minute,
    progress,
    shortened,
)
from werkbank.admin_io import ServiceImportMixin
from werkbank.errors import DomainError


class ReadOnlyPMAdmin(PMAdmin):
    """Rows written only by services (receiving, the ledger): PMs look, nobody edits here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Part)
class PartAdmin(ServiceImportMixin, PMAdmin):
    resource_classes = [PartResource]  # CSV import through part_create / part_update
    list_display = [
        "mpn",
        "short_name",
        "category",
        "specs_short",
        "list_price",
        "supplier",
    ]
    list_filter = ["category", "manufacturer", "pcie_gen", "preferred_supplier"]
    search_fields = ["mpn", "name", "manufacturer"]
    list_select_related = ["preferred_supplier"]

    @admin.display(description="Name", ordering="name")
    def short_name(self, obj: Part) -> str:
        # The manufacturer leads the name here (its own column cost the width the key columns need).
        return shortened(f"{obj.manufacturer} {obj.name}", 36)

    @admin.display(description="VRAM · TDP")
    def specs_short(self, obj: Part) -> str:
        figures = [f"{obj.vram_gb} GB" if obj.vram_gb else "", f"{obj.tdp_w} W" if obj.tdp_w else ""]
        return " · ".join(figure for figure in figures if figure) or "—"

    @admin.display(description="Preferred supplier", ordering="preferred_supplier__name")
    def supplier(self, obj: Part) -> str:
        supplier = obj.preferred_supplier
        return admin_link(supplier, shortened(supplier.name, 20) if supplier else None)

    def save_model(self, request: HttpRequest, obj: Part, form: Any, change: bool) -> None:
        if change:
            part_update(part=obj, actor=request.user, **self.changed_values(form))
        else:
            created = part_create(
                actor=request.user, **{key: form.cleaned_data.get(key) for key in PART_FIELDS}
            )
            obj.pk = created.pk


@admin.register(Supplier)
class SupplierAdmin(ServiceImportMixin, PMAdmin):
    resource_classes = [SupplierResource]  # CSV import through supplier_create / supplier_update
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

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("part", "purchase_order")


@admin.register(PurchaseOrder)
class PurchaseOrderAdmin(ReadOnlyPMAdmin):
    """POs are drafted by `order_procure` or the API; here PMs review them and send or close them."""

    list_display = ["number", "supplier_link", "status_badge", "lines_received", "deliver_to", "sent"]
    list_filter = ["status", "supplier", "deliver_to"]
    search_fields = ["number", "supplier__name"]
    list_select_related = ["supplier", "deliver_to"]
    inlines = [PurchaseOrderLineInline]
    readonly_fields = ["timeline"]
    actions = ["send_selected", "close_selected", "print_labels"]
    #: Read-only links on the change page, after the model's own fields.
    links = ["lines_received", "lots", "quality_warnings", "supplier_copy"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The receipt progress for the listed page: two counts over the PO's lines, grouped in one query.
        return (
            super()
            .get_queryset(request)
            .annotate(
                line_count=Count("lines", distinct=True),
                lines_done=Count(
                    "lines", filter=Q(lines__quantity_received__gte=F("lines__quantity")), distinct=True
                ),
            )
        )

    @admin.display(description="Supplier", ordering="supplier__name")
    def supplier_link(self, obj: PurchaseOrder) -> str:
        return admin_link(obj.supplier, shortened(obj.supplier.name, 26))

    @admin.display(description="Sent", ordering="sent_at")
    def sent(self, obj: PurchaseOrder) -> str:
        return day(obj.sent_at)

    @admin.display(description="Status", ordering="status")
    def status_badge(self, obj: PurchaseOrder) -> str:
        return badge(obj.status, obj.get_status_display())

    @admin.display(description="Received", ordering="lines_done")
    def lines_received(self, obj: PurchaseOrder) -> str:
        return progress(obj.lines_done, obj.line_count, "lines received")  # type: ignore[attr-defined]

    @admin.display(description="Lots received")
    def lots(self, obj: PurchaseOrder) -> str:
        lots = list(obj.lots.select_related("part").order_by("lot_code"))
        if not lots:
            return "—"
        return format_html_join(", ", "{}", ((admin_link(lot, lot.lot_code),) for lot in lots))

    @admin.display(description="Quality warnings")
    def quality_warnings(self, obj: PurchaseOrder) -> str:
        warnings = po_quality_warnings(obj)
        if not warnings:
            return "—"
        items = format_html_join("", "<li>{}</li>", ((sentence,) for sentence in warnings))
        return format_html('<ul class="gate-fail">{}</ul>', items)

    @admin.display(description="Supplier's copy (PDF)")
    def supplier_copy(self, obj: PurchaseOrder) -> str:
        if not obj.document_sha256:
            return "— (made and e-mailed when the PO is sent)"
        sent_to = ", ".join(obj.document_emailed_to) or "nobody: the supplier has no contact e-mail"
        url = reverse("admin:inventory_purchaseorder_document", args=[obj.pk])
        return format_html(
            '<a href="{}">{}.pdf</a> · e-mailed to {} · SHA-256 <code>{}</code>',
            url,
            obj.number,
            sent_to,
            obj.document_sha256,
        )

    def get_urls(self) -> list[Any]:
        download = self.admin_site.admin_view(self.document_view)
        return [
            path("<int:pk>/document.pdf", download, name="inventory_purchaseorder_document"),
            *super().get_urls(),
        ]

    def document_view(self, request: HttpRequest, pk: int) -> FileResponse:
        """The supplier's copy, for whoever may see the PO in the admin (PMs)."""
        po = self.get_queryset(request).filter(pk=pk).first()
        if po is None or not is_pm(request.user) or not po.document:
            raise Http404("No such document.")
        return FileResponse(po.document.open("rb"), as_attachment=True, filename=f"{po.number}.pdf")

    @admin.display(description="Audit timeline")
    def timeline(self, obj: PurchaseOrder) -> str:
        return audit_timeline(obj)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # The change list's actions need it; the form itself shows only read-only fields.
        return is_pm(request.user)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        shown = [field.name for field in PurchaseOrder._meta.fields if not field.name.startswith("document")]
        return [*shown, *self.links, "timeline"]

    @admin.action(
        description="Send selected purchase orders (a quality-flagged or non-EU one asks for its override "
        "reasons)"
    )
    def send_selected(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        """Send at once; where a selected PO is flagged for quality (issue #29) or its supplier is outside the
        EU, first a page that shows why and asks for the override reasons (issue #24)."""
        pos = list(queryset.select_related("supplier"))
        flagged = [(po, po_quality_warnings(po)) for po in pos]
        needs_non_eu = any(not po.supplier.is_eu for po in pos)
        if "apply" not in request.POST and (needs_non_eu or any(warnings for _po, warnings in flagged)):
            return TemplateResponse(
                request,
                "admin/inventory/purchaseorder/send.html",
                {
                    **self.admin_site.each_context(request),
                    "title": "Send purchase orders",
                    "rows": flagged,
                    "needs_non_eu": needs_non_eu,
                    "action": request.POST.get("action"),
                    "opts": self.model._meta,
                    "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
                },
            )
        reasons = {
            "override_reason": request.POST.get("override_reason", "").strip(),
            "quality_override_reason": request.POST.get("quality_override_reason", "").strip(),
        }
        self.run_for_each(request, pos, lambda po: po_send(po=po, actor=request.user, **reasons), "sent")
        return None

    @admin.action(description="Close selected purchase orders")
    def close_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(request, queryset, lambda po: po_close(po=po, actor=request.user), "closed")

    @admin.action(description="Print the labels of every serial received (a label batch per PO)")
    def print_labels(self, request: HttpRequest, queryset: QuerySet) -> None:
        queue_label_batches(request, queryset, "purchase_order")


def queue_label_batches(request: HttpRequest, queryset: QuerySet, source: str) -> None:
    """Ask for one label batch per selected lot or purchase order (`source`), each rendered by a task; one
    message each, linking to the batches' list where the PDF appears once it is ready."""
    batches = reverse("admin:inventory_labelbatch_changelist")
    for obj in queryset:
        try:
            batch = label_batch_request(actor=request.user, **{source: obj})
        except DomainError as exc:
            messages.error(request, exc.message)
        else:
            messages.success(
                request,
                format_html(
                    '{}: {} labels queued as <a href="{}">label batch {}</a>.',
                    batch.title,
                    batch.count,
                    batches,
                    batch.pk,
                ),
            )


@admin.register(BatchLot)
class BatchLotAdmin(ReadOnlyPMAdmin):
    list_display = [
        "lot_code",
        "part_mpn",
        "supplier_link",
        "origin",
        "date_code",
        "po_link",
        "labels",
    ]
    list_filter = ["supplier", "country_of_origin", "part"]
    search_fields = ["lot_code", "part__mpn", "purchase_order__number", "supplier__name"]
    list_select_related = ["part", "supplier", "purchase_order"]
    readonly_fields = ["supplier_link", "po_link", "labels", "created"]
    actions = ["print_labels"]

    @admin.display(description="Part", ordering="part__mpn")
    def part_mpn(self, obj: BatchLot) -> str:
        return format_html('<span title="{}">{}</span>', obj.part.name, obj.part.mpn)

    @admin.display(description="Supplier", ordering="supplier__name")
    def supplier_link(self, obj: BatchLot) -> str:
        # The country stays whole (EU or not matters): only the name is cut.
        name = format_html("{} ({})", shortened(obj.supplier.name, 28), obj.supplier.country)
        return admin_link(obj.supplier, name)

    @admin.display(description="Received", ordering="created_at")
    def created(self, obj: BatchLot) -> str:
        return day(obj.created_at)

    @admin.display(description="Origin", ordering="country_of_origin")
    def origin(self, obj: BatchLot) -> str:
        return obj.country_of_origin

    @admin.display(description="Purchase order", ordering="purchase_order__number")
    def po_link(self, obj: BatchLot) -> str:
        return admin_link(obj.purchase_order, obj.purchase_order.number if obj.purchase_order else None)

    @admin.display(description="Labels")
    def labels(self, obj: BatchLot) -> str:
        # The sheet renders in the request (≤ 200 labels in about 0.4 s); bigger lots: the action below.
        return format_html('<a href="{}">PDF</a>', reverse("lot-labels", args=[obj.pk]))

    @admin.action(description="Print the labels of the selected lots in the background (a label batch each)")
    def print_labels(self, request: HttpRequest, queryset: QuerySet) -> None:
        queue_label_batches(request, queryset.select_related("part"), "lot")


@admin.register(Component)
class ComponentAdmin(ReadOnlyPMAdmin):
    """One row per serial. The builds app adds the server a component is allocated to or installed in."""

    list_display = ["serial", "part_mpn", "lot_link", "status_badge", "where", "received"]
    list_filter = ["status", "part", "lot__supplier"]
    search_fields = ["serial", "lot__lot_code", "part__mpn"]
    list_select_related = ["part", "lot"]
    # A big table: ordered by its own indexed column, and not counted in full (issue #15).
    ordering = ["serial"]
    show_full_result_count = False
    #: The change page (read only): the lot and the purchase order as links, the status as a badge.
    fields = [
        "serial",
        "part",
        "manufacturer",
        "lot_link",
        "po_link",
        "status_badge",
        "location",
        "holder",
        "received_at",
    ]
    readonly_fields = fields

    @admin.display(description="Part", ordering="part__mpn")
    def part_mpn(self, obj: Component) -> str:
        return format_html('<span title="{}">{}</span>', obj.part.name, obj.part.mpn)

    @admin.display(description="Lot", ordering="lot__lot_code")
    def lot_link(self, obj: Component) -> str:
        return admin_link(obj.lot, obj.lot.lot_code)

    @admin.display(description="Purchase order")
    def po_link(self, obj: Component) -> str:
        return admin_link(obj.po_line.purchase_order, obj.po_line.purchase_order.number)

    @admin.display(description="Status", ordering="status")
    def status_badge(self, obj: Component) -> str:
        return badge(obj.status, obj.get_status_display())

    @admin.display(description="Location", ordering="location")
    def where(self, obj: Component) -> str:
        return shortened(obj.location, 28)

    @admin.display(description="Received", ordering="received_at")
    def received(self, obj: Component) -> str:
        return day(obj.received_at)


@admin.register(StockMovement)
class StockMovementAdmin(ReadOnlyPMAdmin):
    list_display = ["created", "component_link", "change", "where", "actor", "short_reason"]
    list_filter = ["to_status"]
    search_fields = ["component__serial", "reason"]
    list_select_related = ["component", "actor"]
    # The stock ledger grows with every movement: newest first by its key, never counted in full.
    ordering = ["-pk"]
    show_full_result_count = False

    @admin.display(description="When", ordering="created_at")
    def created(self, obj: StockMovement) -> str:
        return minute(obj.created_at)

    @admin.display(description="Component", ordering="component__serial")
    def component_link(self, obj: StockMovement) -> str:
        return admin_link(obj.component, obj.component.serial)

    @admin.display(description="Status")
    def change(self, obj: StockMovement) -> str:
        before = badge(obj.from_status, obj.from_status.replace("_", " ")) if obj.from_status else "—"
        return format_html("{} → {}", before, badge(obj.to_status, obj.to_status.replace("_", " ")))

    @admin.display(description="To", ordering="to_location")
    def where(self, obj: StockMovement) -> str:
        return shortened(obj.to_location, 28)

    @admin.display(description="Reason")
    def short_reason(self, obj: StockMovement) -> str:
        return shortened(obj.reason, 32)


@admin.register(LabelBatch)
class LabelBatchAdmin(ReadOnlyPMAdmin):
    """Label batches, newest first: what they print, how far the task is, and the PDF once it is ready."""

    list_display = ["title", "count", "status_badge", "done", "requested_by", "requested", "pdf_link"]
    list_filter = ["status"]
    search_fields = ["title"]
    list_select_related = ["requested_by"]
    show_full_result_count = False
    fields = [
        "title",
        "count",
        "status_badge",
        "done",
        "error",
        "attempts",
        "pdf_link",
        "pdf_sha256",
        "pdf_size",
        "requested_by",
        "requested",
        "started_at",
        "finished_at",
    ]
    readonly_fields = fields

    @admin.display(description="Status", ordering="status")
    def status_badge(self, obj: LabelBatch) -> str:
        return badge(obj.status, obj.get_status_display())

    @admin.display(description="Progress")
    def done(self, obj: LabelBatch) -> str:
        # The bar of werkbank.admin.progress, with a percentage instead of "done / total".
        return format_html(
            '<span class="wb-progress"><progress value="{}" max="100"></progress> {} %</span>',
            obj.progress,
            obj.progress,
        )

    @admin.display(description="Asked", ordering="created_at")
    def requested(self, obj: LabelBatch) -> str:
        return minute(obj.created_at)

    @admin.display(description="PDF")
    def pdf_link(self, obj: LabelBatch) -> str:
        if obj.status != LabelBatchStatus.READY:
            return "—"
        return format_html('<a href="{}">PDF</a>', reverse("label-batch-pdf", args=[obj.pk]))
