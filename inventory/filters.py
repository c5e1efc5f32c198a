"""FilterSets of the inventory app."""

import django_filters
from django.db.models import Q, QuerySet

from inventory.models import Part


class PartFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search MPN, name or manufacturer")

    class Meta:
        model = Part
        fields = ["category", "manufacturer", "pcie_gen"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(mpn__icontains=value) | Q(name__icontains=value) | Q(manufacturer__icontains=value)
        )
