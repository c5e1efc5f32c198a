"""FilterSets of the orders app."""

from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import Q, QuerySet

from orders.models import Order, ROIAssessment, ServerConfiguration
from werkbank.models import Organization


def _visible_customers(request: Any) -> QuerySet:
    # Filter choices go through the chokepoint too: no listing of other tenants' names.
    if request is None:
        return Organization.objects.none()
    return Organization.objects.visible_to(request.user).customers()


def _visible_configurations(request: Any) -> QuerySet:
    if request is None:
        return ServerConfiguration.objects.none()
    return ServerConfiguration.objects.visible_to(request.user)


class ServerConfigurationFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search name or description")

    class Meta:
        model = ServerConfiguration
        fields = ["psu_count"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(name__icontains=value) | Q(description__icontains=value))


class OrderFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search reference or customer")
    customer = django_filters.ModelChoiceFilter(queryset=_visible_customers)
    configuration = django_filters.ModelChoiceFilter(queryset=_visible_configurations)
    status = django_filters.MultipleChoiceFilter(choices=Order._meta.get_field("status").choices)
    created_after = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="gte")
    created_before = django_filters.IsoDateTimeFilter(field_name="created_at", lookup_expr="lt")

    class Meta:
        model = Order
        fields = ["customer", "configuration", "status", "warranty_months"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(reference__icontains=value) | Q(customer__name__icontains=value))


def _visible_orders(request: Any) -> QuerySet:
    if request is None:
        return Order.objects.none()
    return Order.objects.visible_to(request.user)


class ROIAssessmentFilter(django_filters.FilterSet):
    order = django_filters.ModelChoiceFilter(queryset=_visible_orders)
    q = django_filters.CharFilter(field_name="order__reference", lookup_expr="icontains", label="Order")

    class Meta:
        model = ROIAssessment
        fields = ["order", "version", "currency"]
