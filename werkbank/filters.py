"""FilterSets of the core app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import django_filters
from django import forms
from django.db.models import Q, QuerySet

from werkbank.models import Organization


class TimestampField(django_filters.fields.IsoDateTimeField):
    """An ISO 8601 timestamp whose UTC offset is one a clock can have (within ±14:00).

    Python accepts offsets up to ±23:59 and PostgreSQL refuses those past ±15:59 with an error, so a
    filter value like `…T08:05:10+21:18` is refused here as bad input instead."""

    def to_python(self, value: Any) -> Any:
        parsed = super().to_python(value)
        offset = parsed.utcoffset() if parsed is not None else None
        if offset is not None and abs(offset.total_seconds()) > 14 * 3600:
            raise forms.ValidationError("The UTC offset must lie within ±14:00.", code="invalid")
        return parsed


class TimestampFilter(django_filters.IsoDateTimeFilter):
    """Filters by an ISO 8601 timestamp (see TimestampField)."""

    field_class = TimestampField


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
