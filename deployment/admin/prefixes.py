"""Admin of the sites' IP prefixes (imported by deployment.admin, which registers the rest).

Every write goes through `deployment.services.prefixes`: the canonical form, the gateway inside the prefix,
no overlap within a site, and no delete while a server's address lies in the prefix, with the audit rows.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from deployment.models import IPPrefix
from deployment.services import prefix_create, prefix_delete, prefix_update
from werkbank.admin import PMAdmin, admin_link

FIELDS = ["prefix", "role", "vlan", "gateway", "description"]


@admin.register(IPPrefix)
class IPPrefixAdmin(PMAdmin):
    list_display = ["prefix", "site_link", "role", "vlan", "gateway", "description"]
    list_filter = ["role", "site"]
    search_fields = ["prefix", "gateway", "description", "site__name"]
    list_select_related = ["site"]
    actions = ["delete_prefixes"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        return ["site", *FIELDS, "created_at"] if obj else ["site", *FIELDS]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        return ["site", "created_at"] if obj else []

    @admin.display(description="Site", ordering="site__name")
    def site_link(self, obj: IPPrefix) -> str:
        return admin_link(obj.site, obj.site.name)

    def save_model(self, request: HttpRequest, obj: IPPrefix, form: Any, change: bool) -> None:
        values = {field: form.cleaned_data.get(field) for field in FIELDS}
        values["description"] = values["description"] or ""
        if change:
            prefix_update(ip_prefix=IPPrefix.objects.get(pk=obj.pk), actor=request.user, **values)
        else:
            obj.pk = prefix_create(site=form.cleaned_data["site"], actor=request.user, **values).pk

    @admin.action(description="Delete selected prefixes (not while a server's address lies in one)")
    def delete_prefixes(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request,
            queryset.select_related("site"),
            lambda prefix: prefix_delete(ip_prefix=prefix, actor=request.user),
            "deleted",
        )
