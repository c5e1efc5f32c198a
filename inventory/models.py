"""Inventory models: the part catalogue, suppliers, purchase orders, lots, components and their ledger.

Lots are per supplier receipt, never shared across purchase orders (see `BatchLot`): receiving on one PO
can neither extend, nor count, nor reveal the codes of a lot that another tenant received.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce, Upper

from inventory.choices import ComponentStatus, PartCategory, PurchaseOrderStatus
from inventory.eu import is_eu
from inventory.serials import normalize_serial
from werkbank.access import Purpose, VisibleToQuerySet
from werkbank.choices import FileJobStatus, OrganizationKind
from werkbank.filejobs import RenderedFileJob, file_job_constraints
from werkbank.models import Organization, member_organizations


class PartQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> PartQuerySet:
        # The catalogue is not tenant-owned: every member of an organization may read it.
        return self.filter(Exists(member_organizations(user)))


class Part(models.Model):
    """A catalogue entry: one manufacturer part number, with the specs the checks need."""

    category = models.CharField(max_length=16, choices=PartCategory.choices)
    manufacturer = models.CharField(max_length=100)
    mpn = models.CharField("MPN", max_length=100, help_text="Manufacturer part number")
    name = models.CharField(max_length=200)
    vram_gb = models.PositiveIntegerField("VRAM (GB)", null=True, blank=True)
    tdp_w = models.PositiveIntegerField("TDP (W)", null=True, blank=True)
    pcie_gen = models.PositiveSmallIntegerField("PCIe gen", null=True, blank=True)
    pcie_lanes = models.PositiveSmallIntegerField("PCIe lanes", null=True, blank=True)
    u_height = models.PositiveSmallIntegerField("Height (U)", null=True, blank=True)
    specs = models.JSONField(default=dict, blank=True, help_text="Further specs, e.g. capacity_gb, cores")
    list_price = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="Expected unit price (EUR) for new POs",
    )
    preferred_supplier = models.ForeignKey(
        "inventory.Supplier", null=True, blank=True, on_delete=models.SET_NULL, related_name="preferred_parts"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = PartQuerySet.as_manager()

    class Meta:
        ordering = ["category", "manufacturer", "mpn"]
        constraints = [
            models.UniqueConstraint(
                fields=["manufacturer", "mpn"],
                name="%(app_label)s_%(class)s_unique_manufacturer_mpn",
                violation_error_message="A part with this manufacturer and MPN already exists.",
            ),
            models.CheckConstraint(
                condition=Q(category__in=PartCategory.values),
                name="%(app_label)s_%(class)s_category_valid",
                violation_error_message="Unknown part category.",
            ),
            models.CheckConstraint(
                condition=Q(vram_gb__isnull=True) | Q(category=PartCategory.GPU),
                name="%(app_label)s_%(class)s_vram_only_gpu",
                violation_error_message="Only a GPU has VRAM.",
            ),
            models.CheckConstraint(
                condition=Q(u_height__isnull=True) | Q(category=PartCategory.CHASSIS, u_height__gte=1),
                name="%(app_label)s_%(class)s_u_height_only_chassis",
                violation_error_message="Only a chassis has a U height, of at least 1U.",
            ),
            models.CheckConstraint(
                condition=Q(list_price__isnull=True) | Q(list_price__gte=0),
                name="%(app_label)s_%(class)s_list_price_not_negative",
                violation_error_message="The list price cannot be negative.",
            ),
            models.CheckConstraint(
                condition=Q(pcie_gen__isnull=True) | Q(pcie_gen__gte=1, pcie_gen__lte=7),
                name="%(app_label)s_%(class)s_pcie_gen_range",
                violation_error_message="PCIe generation must be between 1 and 7.",
            ),
            models.CheckConstraint(
                condition=Q(pcie_lanes__isnull=True) | Q(pcie_lanes__in=[1, 2, 4, 8, 16, 32]),
                name="%(app_label)s_%(class)s_pcie_lanes_valid",
                violation_error_message="PCIe lanes must be 1, 2, 4, 8, 16 or 32.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.manufacturer} {self.name} ({self.mpn})"


class SupplierQuerySet(VisibleToQuerySet):
    """Suppliers are the PMs' business: members see none (a PO shows its supplier's name)."""


class Supplier(models.Model):
    """A vendor we buy components from. EU membership follows from its country (inventory.eu)."""

    name = models.CharField(max_length=200, unique=True)
    vat_id = models.CharField("VAT ID", max_length=32, blank=True)
    country = models.CharField(max_length=2, help_text="ISO 3166-1 alpha-2, e.g. DE")
    contact_name = models.CharField(max_length=200, blank=True)
    contact_email = models.EmailField(blank=True)
    warranty_months = models.PositiveSmallIntegerField(
        default=36,
        help_text="The supplier's warranty on what it delivers, from receipt (for returns and spares).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = SupplierQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(country__regex=r"^[A-Z]{2}$"),
                name="%(app_label)s_%(class)s_country_iso",
                violation_error_message="The country is a two-letter ISO 3166 code in capitals.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.country})"

    @property
    def is_eu(self) -> bool:
        return is_eu(self.country)


class PurchaseOrderQuerySet(VisibleToQuerySet):
    purposes = frozenset({Purpose.VIEW, Purpose.RECEIVE})

    def scope_for_member(self, user: Any, purpose: Purpose) -> PurchaseOrderQuerySet:
        # A partner sees, and receives on, the purchase orders delivered to its workshop; customers neither.
        return self.filter(deliver_to__in=member_organizations(user, kind=OrganizationKind.PARTNER))


def po_document_upload_to(po: PurchaseOrder, filename: str) -> str:
    return f"purchase-orders/{po.created_at:%Y/%m}/{filename}"


class PurchaseOrder(models.Model):
    """An order to one supplier, PO-YYYY-NNNN, optionally delivered to an assembly partner's workshop."""

    number = models.CharField(max_length=16, unique=True, editable=False)
    supplier = models.ForeignKey(Supplier, on_delete=models.PROTECT, related_name="purchase_orders")
    status = models.CharField(
        max_length=20, choices=PurchaseOrderStatus.choices, default=PurchaseOrderStatus.DRAFT, editable=False
    )
    currency = models.CharField(max_length=3, default="EUR")
    deliver_to = models.ForeignKey(
        Organization,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="inbound_purchase_orders",
        help_text="The assembly partner whose workshop receives the goods; empty: our own warehouse.",
    )
    non_eu_override_reason = models.TextField(blank=True, editable=False)
    quality_override_reason = models.TextField(
        blank=True,
        editable=False,
        help_text="Why it was sent although a supplier or part of it is flagged for its failure rate.",
    )
    notes = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True, editable=False)
    # The PDF the supplier was sent (issue #24), rendered once when the PO is sent, and whom it went to.
    document = models.FileField(upload_to=po_document_upload_to, blank=True, max_length=255, editable=False)
    document_sha256 = models.CharField(max_length=64, blank=True, editable=False)
    document_emailed_to = models.JSONField(default=list, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = PurchaseOrderQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["-created_at", "-id"], name="purchaseorder_newest")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=PurchaseOrderStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
                violation_error_message="Unknown purchase order status.",
            ),
            models.CheckConstraint(
                condition=Q(number__regex=r"^PO-[0-9]{4}-[0-9]{4,}$"),
                name="%(app_label)s_%(class)s_number_format",
                violation_error_message="The number has the form PO-YYYY-NNNN.",
            ),
        ]

    def __str__(self) -> str:
        return self.number


class PurchaseOrderLineQuerySet(VisibleToQuerySet):
    purposes = PurchaseOrderQuerySet.purposes

    def scope_for_member(self, user: Any, purpose: Purpose) -> PurchaseOrderLineQuerySet:
        return self.filter(purchase_order__in=PurchaseOrder.objects.scope_for_member(user, purpose))


class PurchaseOrderLine(models.Model):
    """One part on a PO: how many were ordered, at what price, and how many have arrived."""

    purchase_order = models.ForeignKey(PurchaseOrder, on_delete=models.CASCADE, related_name="lines")
    part = models.ForeignKey(Part, on_delete=models.PROTECT, related_name="purchase_order_lines")
    quantity = models.PositiveIntegerField()
    unit_price = models.DecimalField(max_digits=12, decimal_places=2)
    quantity_received = models.PositiveIntegerField(default=0, editable=False)

    objects = PurchaseOrderLineQuerySet.as_manager()

    class Meta:
        ordering = ["purchase_order_id", "id"]
        indexes = [models.Index(fields=["purchase_order", "id"], name="purchaseorderline_po")]
        constraints = [
            models.UniqueConstraint(
                fields=["purchase_order", "part"],
                name="%(app_label)s_%(class)s_unique_part",
                violation_error_message="This part is already on the purchase order.",
            ),
            models.CheckConstraint(
                condition=Q(quantity__gte=1),
                name="%(app_label)s_%(class)s_quantity_positive",
                violation_error_message="Quantity must be at least 1.",
            ),
            models.CheckConstraint(
                condition=Q(unit_price__gte=0),
                name="%(app_label)s_%(class)s_price_not_negative",
                violation_error_message="The unit price cannot be negative.",
            ),
            models.CheckConstraint(
                condition=Q(quantity_received__lte=F("quantity")),
                name="%(app_label)s_%(class)s_not_over_received",
                violation_error_message="More received than ordered.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.purchase_order} · {self.quantity}× {self.part.mpn}"

    @property
    def remaining(self) -> int:
        return self.quantity - self.quantity_received


class BatchLotQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> BatchLotQuerySet:
        # A lot belongs to one purchase order's delivery: a partner sees the lots delivered to its workshop.
        partners = member_organizations(user, kind=OrganizationKind.PARTNER)
        return self.filter(purchase_order__deliver_to__in=partners)

    def with_component_count(self, user: Any) -> BatchLotQuerySet:
        """Annotate `component_count`: the lot's components that `user` may see, never anyone else's."""
        components = Component.objects.visible_to(user).filter(lot=OuterRef("pk")).order_by()
        count = components.values("lot").annotate(n=Count("pk")).values("n")
        return self.annotate(component_count=Coalesce(Subquery(count), 0))


class BatchLot(models.Model):
    """A manufacturer's production lot of one part, as received on one purchase order.

    A lot is per supplier receipt, not shared: the same manufacturer lot code delivered on two purchase
    orders (to two workshops, or twice to one) is two rows. So a receipt only ever adds to a lot of its own
    purchase order, a lot's date code and origin are those its own receiver recorded, and a lot's
    components all came on one PO, delivered to one place: whoever may see the PO sees the whole lot, and
    nobody learns from a receipt what another tenant received. Tracing a manufacturer lot across receipts
    (a recall) is a PM's query by `lot_code`, `part` and `supplier`.
    """

    part = models.ForeignKey(Part, on_delete=models.PROTECT, related_name="lots")
    supplier = models.ForeignKey(Supplier, on_delete=models.PROTECT, related_name="lots")
    purchase_order = models.ForeignKey(
        PurchaseOrder,
        on_delete=models.PROTECT,
        related_name="lots",
        help_text="The receipt this lot arrived on; the same lot code on another PO is another lot.",
    )
    lot_code = models.CharField(max_length=64)
    date_code = models.CharField(
        max_length=16, help_text="Manufacturer date code, e.g. 2526 (year 25, week 26)"
    )
    country_of_origin = models.CharField(max_length=2)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = BatchLotQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["-created_at", "-id"], name="batchlot_newest")]
        constraints = [
            models.UniqueConstraint(
                fields=["purchase_order", "part", "lot_code"],
                name="%(app_label)s_%(class)s_unique_lot_per_purchase_order",
                violation_error_message="This lot of this part is already on record for this purchase order.",
            ),
            models.CheckConstraint(
                condition=Q(country_of_origin__regex=r"^[A-Z]{2}$"),
                name="%(app_label)s_%(class)s_origin_iso",
                violation_error_message="The country of origin is a two-letter ISO 3166 code in capitals.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.lot_code} ({self.part.mpn})"


class ComponentQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> ComponentQuerySet:
        partners = member_organizations(user, kind=OrganizationKind.PARTNER)
        return self.filter(Q(holder__in=partners) | Q(po_line__purchase_order__deliver_to__in=partners))

    def with_serial(self, *serials: str) -> ComponentQuerySet:
        """Components whose serial is one of `serials`, compared in their normal form (inventory.serials):
        in any letter case, whitespace around them ignored. Of any manufacturer: the caller narrows by
        `manufacturer` where it knows it.

        The filter is on UPPER(serial), the leading column of the unique index, so it is an index lookup.
        """
        keys = sorted({normalize_serial(serial) for serial in serials})
        return self.alias(serial_key=Upper("serial")).filter(serial_key__in=keys)


class Component(models.Model):
    """One physical item with a serial number: its part, lot, PO line, status and where it is.

    Status and location change only through inventory.services, which writes a StockMovement each time.
    """

    part = models.ForeignKey(Part, on_delete=models.PROTECT, related_name="components")
    manufacturer = models.CharField(
        max_length=100, editable=False, help_text="Copied from the part: serials are unique per manufacturer"
    )
    serial = models.CharField(
        max_length=64, help_text="As printed; compared in any letter case (inventory.serials)"
    )
    lot = models.ForeignKey(BatchLot, on_delete=models.PROTECT, related_name="components")
    po_line = models.ForeignKey(PurchaseOrderLine, on_delete=models.PROTECT, related_name="components")
    status = models.CharField(
        max_length=16, choices=ComponentStatus.choices, default=ComponentStatus.IN_STOCK, editable=False
    )
    location = models.CharField(max_length=200, editable=False)
    holder = models.ForeignKey(
        Organization,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="held_components",
        editable=False,
        help_text="The partner workshop that has it; empty: our own warehouse.",
    )
    received_at = models.DateTimeField(auto_now_add=True)

    objects = ComponentQuerySet.as_manager()

    class Meta:
        ordering = ["part_id", "serial", "id"]
        constraints = [
            # Serial identity (inventory.serials): the serial in upper case, per manufacturer. The serial
            # leads, so that the bench scan's lookup by serial alone uses this index too.
            models.UniqueConstraint(
                Upper("serial"),
                "manufacturer",
                name="%(app_label)s_%(class)s_unique_serial_per_manufacturer",
                violation_error_message="A component with this serial from this manufacturer already exists "
                "(serials are compared in any letter case).",
            ),
            models.CheckConstraint(
                condition=Q(status__in=ComponentStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
                violation_error_message="Unknown component status.",
            ),
        ]
        indexes = [
            models.Index(fields=["serial"], name="component_serial"),
            models.Index(fields=["part", "serial", "id"], name="component_part_serial"),
        ]

    def __str__(self) -> str:
        return f"{self.part.mpn} {self.serial}"


class StockMovementQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> StockMovementQuerySet:
        return self.filter(component__in=Component.objects.scope_for_member(user, purpose))


class StockMovement(models.Model):
    """The ledger: every change of a component's status or location, with who, when and why."""

    component = models.ForeignKey(Component, on_delete=models.CASCADE, related_name="movements")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    from_status = models.CharField(max_length=16, blank=True)
    to_status = models.CharField(max_length=16)
    from_location = models.CharField(max_length=200, blank=True)
    to_location = models.CharField(max_length=200)
    reason = models.CharField(max_length=500)

    objects = StockMovementQuerySet.as_manager()

    class Meta:
        ordering = ["component_id", "created_at", "id"]
        indexes = [models.Index(fields=["component", "created_at", "id"], name="movement_component_time_id")]

    def __str__(self) -> str:
        return f"{self.component}: {self.from_status or '—'} → {self.to_status}"


class LabelBatchQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> LabelBatchQuerySet:
        # A batch prints the serials its requester could see when asking: it is theirs alone (and the PMs').
        return self.filter(requested_by=user)


def label_batch_upload_to(batch: LabelBatch, filename: str) -> str:
    return f"labels/{batch.created_at:%Y/%m}/{filename}"


class LabelBatch(RenderedFileJob):
    """A large set of serial labels (A4 sheets, inventory/labels.py) rendered by a Celery task.

    What it prints is fixed when it is asked for: the ids of the components its requester could see then,
    of one lot, one purchase order or a list (`component_ids`, in print order). The task renders them into
    one PDF, stored through `werkbank.files.save_with_file` with its SHA-256.
    """

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+",
        help_text="Who asked for the labels; they (and PMs) see the batch and download its PDF.",
    )  # fmt: skip
    lot = models.ForeignKey(BatchLot, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    purchase_order = models.ForeignKey(
        PurchaseOrder, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    title = models.CharField(max_length=200, help_text="What is printed, e.g. “Labels of lot L-2291”.")
    component_ids = models.JSONField(default=list, help_text="The components to label, in print order.")
    count = models.PositiveIntegerField()
    pdf = models.FileField(upload_to=label_batch_upload_to, blank=True, max_length=255)
    pdf_sha256 = models.CharField(max_length=64, blank=True)
    pdf_size = models.PositiveIntegerField(null=True, blank=True)

    objects = LabelBatchQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["requested_by", "-created_at"], name="labelbatch_requester_time")]
        constraints = [
            *file_job_constraints("label batch"),
            models.CheckConstraint(
                condition=Q(count__gte=1),
                name="%(app_label)s_%(class)s_not_empty",
                violation_error_message="A label batch prints at least one label.",
            ),
            models.CheckConstraint(
                # A repeated task finds the batch ready and leaves it: a ready batch has exactly its one file.
                condition=~Q(status=FileJobStatus.READY)
                | (~Q(pdf="") & Q(pdf_sha256__regex=r"^[0-9a-f]{64}$", progress=100)),
                name="%(app_label)s_%(class)s_ready_has_file",
                violation_error_message="A ready label batch has its PDF with its SHA-256.",
            ),
        ]
        verbose_name_plural = "label batches"

    def __str__(self) -> str:
        return f"{self.title} ({self.count})"
