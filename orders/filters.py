"""FilterSets of the orders app."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from orders.models import Order, ROIAssessment, ServerConfiguration
from werkbank.choices import OrganizationKind
from werkbank.filters import TimestampFilter, visible_choices
from werkbank.models import Organization


class ServerConfigurationFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search name or description")

    class Meta:
        model = ServerConfiguration
        fields = ["psu_count"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(name__icontains=value) | Q(description__icontains=value))


class OrderFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search reference or customer")
    customer = django_filters.ModelChoiceFilter(
        queryset=visible_choices(Organization, kind=OrganizationKind.CUSTOMER)
    )
    configuration = django_filters.ModelChoiceFilter(queryset=visible_choices(ServerConfiguration))
    status = django_filters.MultipleChoiceFilter(choices=Order._meta.get_field("status").choices)
    created_after = TimestampFilter(field_name="created_at", lookup_expr="gte")
    created_before = TimestampFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = Order
        fields = ["customer", "configuration", "status", "warranty_months"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(reference__icontains=value) | Q(customer__name__icontains=value))


class ROIAssessmentFilter(django_filters.FilterSet):
    order = django_filters.ModelChoiceFilter(queryset=visible_choices(Order))
    q = django_filters.CharFilter(field_name="order__reference", lookup_expr="icontains", label="Order")

    class Meta:
        model = ROIAssessment
        fields = ["order", "version", "currency"]
