"""FilterSets of the core app."""

import django_filters
from django.db.models import Q, QuerySet

from werkbank.models import Organization


class OrganizationFilter(django_filters.FilterSet):
    q = django_filters.CharFilter(method="search", label="Search name or contact")

    class Meta:
        model = Organization
        fields = ["kind", "language"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(name__icontains=value) | Q(contact_email__icontains=value))
