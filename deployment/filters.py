"""FilterSets of the deployment app, one per listed model, each with a `q` search. Foreign-key choices go
through `visible_choices`: nobody can name (or probe for) another tenant's rows."""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import Q, QuerySet

from builds.models import Server
from deployment.choices import FeedLeg, Platform, PrefixRole, RackFace, SiteKind, Verification
from deployment.models import (
    IPPrefix,
    PlatformListing,
    PowerFeed,
    Rack,
    RackPlacement,
    ServerNetwork,
    Site,
)
from werkbank.filters import visible_choices
from werkbank.models import Organization


class SiteFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=SiteKind.choices)
    customer = django_filters.ModelChoiceFilter(queryset=visible_choices(Organization))
    country = django_filters.CharFilter(field_name="country", lookup_expr="iexact")
    eu = django_filters.BooleanFilter(field_name="eu")
    q = django_filters.CharFilter(method="search", label="Search name, operator or address")

    class Meta:
        model = Site
        fields = ["kind", "customer", "country", "eu"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(name__icontains=value) | Q(operator__icontains=value) | Q(address__icontains=value)
        )


class RackFilter(django_filters.FilterSet):
    site = django_filters.ModelChoiceFilter(queryset=visible_choices(Site))
    q = django_filters.CharFilter(method="search", label="Search rack or site name")

    class Meta:
        model = Rack
        fields = ["site"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(name__icontains=value) | Q(site__name__icontains=value))


class PowerFeedFilter(django_filters.FilterSet):
    rack = django_filters.ModelChoiceFilter(queryset=visible_choices(Rack))
    site = django_filters.ModelChoiceFilter(field_name="rack__site", queryset=visible_choices(Site))
    leg = django_filters.ChoiceFilter(choices=FeedLeg.choices)
    q = django_filters.CharFilter(method="search", label="Search feed or rack name")

    class Meta:
        model = PowerFeed
        fields = ["rack", "site", "leg"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(Q(name__icontains=value) | Q(rack__name__icontains=value))


def _server_search(prefix: str, value: str) -> Q:
    return Q(**{f"{prefix}hostname__icontains": value}) | Q(**{f"{prefix}asset_tag__icontains": value})


class RackPlacementFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    rack = django_filters.ModelChoiceFilter(queryset=visible_choices(Rack))
    site = django_filters.ModelChoiceFilter(field_name="rack__site", queryset=visible_choices(Site))
    face = django_filters.ChoiceFilter(choices=RackFace.choices)
    q = django_filters.CharFilter(method="search", label="Search hostname, asset tag or rack name")

    class Meta:
        model = RackPlacement
        fields = ["server", "rack", "site", "face"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(_server_search("server__", value) | Q(rack__name__icontains=value))


class ServerNetworkFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    q = django_filters.CharFilter(method="search", label="Search hostname, asset tag, IP or MAC")

    class Meta:
        model = ServerNetwork
        fields = ["server"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            _server_search("server__", value)
            | Q(management_ip__contains=value)
            | Q(bmc_ip__contains=value)
            | Q(bmc_mac__icontains=value)
        )


class PlatformListingFilter(django_filters.FilterSet):
    server = django_filters.ModelChoiceFilter(queryset=visible_choices(Server))
    platform = django_filters.ChoiceFilter(choices=Platform.choices)
    verification = django_filters.ChoiceFilter(choices=Verification.choices)
    q = django_filters.CharFilter(method="search", label="Search hostname, asset tag or machine id")

    class Meta:
        model = PlatformListing
        fields = ["server", "platform", "verification"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(_server_search("server__", value) | Q(machine_id__icontains=value))


class IntegerFilter(django_filters.Filter):
    """A whole number (a decimal or text is a 400, as is one outside the field's bounds)."""

    field_class = forms.IntegerField


class IPPrefixFilter(django_filters.FilterSet):
    site = django_filters.ModelChoiceFilter(queryset=visible_choices(Site))
    role = django_filters.ChoiceFilter(choices=PrefixRole.choices)
    vlan = IntegerFilter(field_name="vlan", min_value=1, max_value=4094, label="VLAN id")
    q = django_filters.CharFilter(method="search", label="Search prefix, gateway, description or site name")

    class Meta:
        model = IPPrefix
        fields = ["site", "role", "vlan"]

    def search(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        return queryset.filter(
            Q(prefix__icontains=value)
            | Q(gateway__contains=value)
            | Q(description__icontains=value)
            | Q(site__name__icontains=value)
        )
