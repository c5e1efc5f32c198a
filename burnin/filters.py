"""FilterSets of the burn-in app. Foreign-key choices go through `visible_choices`: no probing tenants."""

from __future__ import annotations

import django_filters
from django.db.models import Q, QuerySet

from builds.models import Server
from burnin.choices import ReportPurpose, RunResult
from burnin.models import BurnInRun
from werkbank.filters import visible_choices


class RunFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    asset_tag = django_filters.CharFilter(field_name="server__asset_tag", lookup_expr="iexact")
    result = django_filters.MultipleChoiceFilter(choices=RunResult.choices)
    purpose = django_filters.MultipleChoiceFilter(choices=ReportPurpose.choices)
    q = django_filters.CharFilter(method="search", label="Search asset tag, hostname or report id")

    class Meta:
        model = BurnInRun
        fields = ["server", "asset_tag", "result", "purpose"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(server__asset_tag__icontains=value)
            | Q(server__hostname__icontains=value)
            | Q(report_id__startswith=value.lower())
        )
