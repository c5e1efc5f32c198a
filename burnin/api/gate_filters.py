"""The findings list's FilterSet. Foreign-key choices go through `visible_choices`: no probing tenants.

(Kept beside the gate's viewsets while the app's other lists are written in parallel; it can join
`burnin/filters.py` once that exists.)"""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from builds.models import Server
from burnin.choices import Severity
from burnin.models import BurnInRun, Finding
from werkbank.filters import visible_choices


class FindingFilter(django_filters.FilterSet):
    run = django_filters.ModelChoiceFilter(queryset=visible_choices(BurnInRun))
    server = django_filters.ModelChoiceFilter(field_name="run__server", queryset=visible_choices(Server))
    severity = django_filters.MultipleChoiceFilter(choices=Severity.choices)
    waived = django_filters.BooleanFilter(
        field_name="waived_at", lookup_expr="isnull", exclude=True, label="Waived"
    )
    code = django_filters.CharFilter(field_name="code", lookup_expr="exact", label="Rule code")
    q = django_filters.CharFilter(method="search", label="Search code, subject or message")

    class Meta:
        model = Finding
        fields = ["run", "server", "severity", "waived", "code"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(code__icontains=value) | Q(subject__icontains=value) | Q(message__icontains=value)
        )
