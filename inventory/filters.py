"""FilterSets of the inventory app."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from inventory.choices import ComponentStatus, LabelBatchStatus, PurchaseOrderStatus
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
from werkbank.filters import visible_choices
from werkbank.models import Organization


class PartFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search MPN, name or manufacturer")

    class Meta:
        model = Part
        fields = ["category", "manufacturer", "pcie_gen"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(mpn__icontains=value) | Q(name__icontains=value) | Q(manufacturer__icontains=value)
        )


class SupplierFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search name or VAT ID")

    class Meta:
        model = Supplier
        fields = ["country"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(name__icontains=value) | Q(vat_id__icontains=value))


class PurchaseOrderFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search number or supplier")
    supplier = django_filters.ModelChoiceFilter(queryset=visible_choices(Supplier))
    deliver_to = django_filters.ModelChoiceFilter(queryset=visible_choices(Organization))
    status = django_filters.MultipleChoiceFilter(choices=PurchaseOrderStatus.choices)

    class Meta:
        model = PurchaseOrder
        fields = ["supplier", "deliver_to", "status", "currency"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(number__icontains=value) | Q(supplier__name__icontains=value))


class PurchaseOrderLineFilter(django_filters.FilterSet):
    purchase_order = django_filters.ModelChoiceFilter(queryset=visible_choices(PurchaseOrder))
    part = django_filters.ModelChoiceFilter(queryset=visible_choices(Part))
    q = django_filters.CharFilter(method="search", label="Search PO number or MPN")

    class Meta:
        model = PurchaseOrderLine
        fields = ["purchase_order", "part"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(purchase_order__number__icontains=value) | Q(part__mpn__icontains=value))


class BatchLotFilter(django_filters.FilterSet):
    part = django_filters.ModelChoiceFilter(queryset=visible_choices(Part))
    supplier = django_filters.ModelChoiceFilter(queryset=visible_choices(Supplier))
    q = django_filters.CharFilter(method="search", label="Search lot code or MPN")

    class Meta:
        model = BatchLot
        fields = ["part", "supplier", "lot_code", "country_of_origin", "date_code"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(lot_code__icontains=value) | Q(part__mpn__icontains=value))


class ComponentFilter(django_filters.FilterSet):
    serial = django_filters.CharFilter(field_name="serial", lookup_expr="exact", label="Serial (exact)")
    serial_prefix = django_filters.CharFilter(
        field_name="serial", lookup_expr="startswith", label="Serial prefix"
    )
    part = django_filters.ModelChoiceFilter(queryset=visible_choices(Part))
    lot = django_filters.ModelChoiceFilter(queryset=visible_choices(BatchLot))
    supplier = django_filters.ModelChoiceFilter(
        field_name="lot__supplier", queryset=visible_choices(Supplier)
    )
    purchase_order = django_filters.ModelChoiceFilter(
        field_name="po_line__purchase_order", queryset=visible_choices(PurchaseOrder)
    )
    status = django_filters.MultipleChoiceFilter(choices=ComponentStatus.choices)
    q = django_filters.CharFilter(method="search", label="Search serial, MPN or lot")

    class Meta:
        model = Component
        fields = ["serial", "part", "lot", "status"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(serial__icontains=value) | Q(part__mpn__icontains=value) | Q(lot__lot_code__icontains=value)
        )


class StockMovementFilter(django_filters.FilterSet):
    component = django_filters.ModelChoiceFilter(queryset=visible_choices(Component))
    serial = django_filters.CharFilter(field_name="component__serial", lookup_expr="exact")
    to_status = django_filters.MultipleChoiceFilter(choices=ComponentStatus.choices)

    class Meta:
        model = StockMovement
        fields = ["component", "to_status"]


class LabelBatchFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=LabelBatchStatus.choices)
    lot = django_filters.ModelChoiceFilter(queryset=visible_choices(BatchLot))
    purchase_order = django_filters.ModelChoiceFilter(queryset=visible_choices(PurchaseOrder))
    q = django_filters.CharFilter(field_name="title", lookup_expr="icontains", label="Search the title")

    class Meta:
        model = LabelBatch
        fields = ["status", "lot", "purchase_order"]
