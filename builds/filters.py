"""FilterSets of the builds app. Foreign-key choices go through `visible_choices`: no probing tenants."""

from __future__ import annotations

import django_filters
from django.db.models import Exists, OuterRef, Q, QuerySet

from builds.choices import BuildStepKind, ConnectorKind, ServerStatus
from builds.models import (
    Allocation,
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    Connector,
    Installation,
    Server,
)
from inventory.models import Part
from orders.models import Order
from werkbank.filters import visible_choices
from werkbank.models import Organization


class ServerFilter(django_filters.FilterSet):
    order = django_filters.ModelChoiceFilter(queryset=visible_choices(Order))
    partner = django_filters.ModelChoiceFilter(queryset=visible_choices(Organization))
    status = django_filters.MultipleChoiceFilter(choices=ServerStatus.choices)
    q = django_filters.CharFilter(
        method="search",
        label="Search hostname, asset tag, chassis serial, order or the serial of an installed component",
    )

    class Meta:
        model = Server
        fields = ["order", "partner", "status"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return search_servers(queryset, value)


def search_servers(queryset: QuerySet, value: str) -> QuerySet:
    """Servers whose hostname, asset tag, chassis serial or order reference contains `value`, or that hold
    a component whose serial starts with it (a scanned serial finds the server it is built into)."""
    value = (value or "").strip()
    if not value:
        return queryset
    holds = Installation.objects.active().filter(server=OuterRef("pk"), component__serial__istartswith=value)
    return queryset.filter(
        Q(hostname__icontains=value)
        | Q(asset_tag__icontains=value)
        | Q(chassis_serial__icontains=value)
        | Q(order__reference__icontains=value)
        | Exists(holds)
    )


class ConnectorFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    kind = django_filters.MultipleChoiceFilter(choices=ConnectorKind.choices)
    blacklisted = django_filters.BooleanFilter(
        field_name="blacklist", lookup_expr="isnull", exclude=True, label="Blacklisted"
    )
    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Search name")

    class Meta:
        model = Connector
        fields = ["server", "kind"]


class InstallationFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    connector = django_filters.ModelChoiceFilter(queryset=visible_choices(Connector))
    serial = django_filters.CharFilter(field_name="component__serial", lookup_expr="exact", label="Serial")
    active = django_filters.BooleanFilter(
        field_name="removed_at", lookup_expr="isnull", label="Still installed"
    )
    q = django_filters.CharFilter(method="search", label="Search serial, MPN or connector")

    class Meta:
        model = Installation
        fields = ["server", "connector", "serial", "active"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(component__serial__icontains=value)
            | Q(component__part__mpn__icontains=value)
            | Q(connector__name__icontains=value)
        )


class AllocationFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    serial = django_filters.CharFilter(field_name="component__serial", lookup_expr="exact", label="Serial")
    active = django_filters.BooleanFilter(
        field_name="released_at", lookup_expr="isnull", label="Not released"
    )
    q = django_filters.CharFilter(method="search", label="Search serial, MPN or lot")

    class Meta:
        model = Allocation
        fields = ["server", "serial", "active"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(component__serial__icontains=value)
            | Q(component__part__mpn__icontains=value)
            | Q(component__lot__lot_code__icontains=value)
        )


class BuildStepFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    kind = django_filters.MultipleChoiceFilter(choices=BuildStepKind.choices)
    q = django_filters.CharFilter(field_name="notes", lookup_expr="icontains", label="Search notes")

    class Meta:
        model = BuildStep
        fields = ["server", "kind"]


class BuildPhotoFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    step = django_filters.ModelChoiceFilter(queryset=visible_choices(BuildStep))
    q = django_filters.CharFilter(field_name="content_type", lookup_expr="icontains", label="Search type")

    class Meta:
        model = BuildPhoto
        fields = ["server", "step"]


class ChassisLayoutFilter(django_filters.FilterSet):
    chassis = django_filters.ModelChoiceFilter(queryset=visible_choices(Part))
    q = django_filters.CharFilter(method="search", label="Search chassis MPN or name")

    class Meta:
        model = ChassisLayout
        fields = ["chassis"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(chassis__mpn__icontains=value) | Q(chassis__name__icontains=value))
