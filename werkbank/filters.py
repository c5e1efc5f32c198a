"""FilterSets of the core app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


def visible_choices(model: Any, **narrow: Any) -> Callable[[Any], QuerySet]:
    """The queryset callable of a ModelChoiceFilter: only rows visible to the requesting user.

    Filter choices go through the chokepoint too, so nobody can name (or probe for) another tenant's rows.
    """

    def queryset(request: Any) -> QuerySet:
        if request is None:
            return model.objects.none()
        return model.objects.visible_to(request.user).filter(**narrow)

    return queryset
