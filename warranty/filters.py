"""FilterSets of the warranty app, one per listed model, each with a `q` search. Foreign-key choices go
through `visible_choices`: nobody can name (or probe for) another tenant's rows."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from builds.models import Server
from inventory.models import Supplier
from warranty.choices import (
    ClaimStatus,
    FailureCause,
    FailureStage,
    RecordKind,
    SupplierReturnOutcome,
    SupplierReturnStatus,
)
from warranty.models import Attribution, SupplierReturn, WarrantyClaim, WarrantyRecord, WarrantyRegistration
from werkbank.filters import visible_choices


class WarrantyRecordFilter(django_filters.FilterSet):
    serial = django_filters.CharFilter(
        field_name="serial", lookup_expr="iexact", label="The whole serial, in any letter case"
    )
    kind = django_filters.ChoiceFilter(choices=RecordKind.choices)
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    q = django_filters.CharFilter(method="search", label="Search serial or description")

    class Meta:
        model = WarrantyRecord
        fields = ["serial", "kind", "server"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(serial__icontains=value) | Q(description__icontains=value))


class WarrantyRegistrationFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    q = django_filters.CharFilter(method="search", label="Search serial")

    class Meta:
        model = WarrantyRegistration
        fields = ["server"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(component__serial__icontains=value)


class WarrantyClaimFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=ClaimStatus.choices)
    record = django_filters.ModelChoiceFilter(queryset=visible_choices(WarrantyRecord))
    q = django_filters.CharFilter(method="search", label="Search number, serial or description")

    class Meta:
        model = WarrantyClaim
        fields = ["status", "record"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(number__icontains=value) | Q(record__serial__icontains=value) | Q(description__icontains=value)
        )


class SupplierReturnFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=SupplierReturnStatus.choices)
    supplier = django_filters.ModelChoiceFilter(queryset=visible_choices(Supplier))
    outcome = django_filters.ChoiceFilter(choices=SupplierReturnOutcome.choices)
    q = django_filters.CharFilter(method="search", label="Search number, serial, RMA number or claim number")

    class Meta:
        model = SupplierReturn
        fields = ["status", "supplier", "outcome"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(number__icontains=value)
            | Q(component__serial__icontains=value)
            | Q(supplier_rma_number__icontains=value)
            | Q(claim__number__icontains=value)
        )


class AttributionFilter(django_filters.FilterSet):
    stage = django_filters.ChoiceFilter(choices=FailureStage.choices)
    cause = django_filters.ChoiceFilter(choices=FailureCause.choices)
    confirmed = django_filters.BooleanFilter(method="by_confirmed", label="Confirmed (or corrected) by a PM")
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    q = django_filters.CharFilter(method="search", label="Search serial, connector, finding code or claim")

    class Meta:
        model = Attribution
        fields = ["stage", "cause", "confirmed", "server"]

    def by_confirmed(self, queryset: QuerySet, name: str, value: bool) -> QuerySet:
        return queryset.filter(confirmed_at__isnull=not value)

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(component__serial__icontains=value)
            | Q(connector__name__iexact=value)
            | Q(finding__code__icontains=value)
            | Q(claim__number__icontains=value)
        )
