"""Admin of the builds app: servers with their connector map, blacklist and history; layouts; checklists.

Writes that carry rules (assignment, transitions) go through the services; the blacklist is read-only here
and can never be removed (there is no delete anywhere, and the database refuses it).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join

from builds.models import (
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    ChecklistItem,
    Connector,
    ConnectorBlacklist,
    Installation,
    LayoutConnector,
    Server,
)
from builds.services import (
    assembly_gaps,
    checklist_item_add,
    checklist_item_remove,
    checklist_item_update,
    layout_connector_add,
    layout_connector_remove,
    layout_connector_update,
    layout_create,
    layout_update,
    server_mark_assembled,
    server_set_chassis_serial,
    server_start_assembly,
)
from werkbank.access import is_pm
from werkbank.admin import PMAdmin, ReadOnlyInline, audit_timeline


class InstallationInline(ReadOnlyInline):
    model = Installation
    fk_name = "server"
    fields = ["connector", "component", "installed_at", "installed_by", "removed_at", "removal_reason"]
    readonly_fields = fields
    verbose_name_plural = "Installations (history)"


class StepInline(ReadOnlyInline):
    model = BuildStep
    fields = ["kind", "actor", "created_at", "notes", "data"]
    readonly_fields = fields


@admin.register(Server)
class ServerAdmin(PMAdmin):
    list_display = ["hostname", "order", "sequence", "partner", "status", "asset_tag"]
    list_filter = ["status", "partner", "order"]
    search_fields = ["hostname", "asset_tag", "chassis_serial", "order__reference"]
    list_select_related = ["order", "partner"]
    fields = [
        "hostname",
        "order",
        "sequence",
        "asset_tag",
        "chassis_serial",
        "partner",
        "status",
        "missing",
        "burn_in",
        "connector_map",
        "timeline",
    ]
    readonly_fields = [
        "hostname",
        "order",
        "sequence",
        "asset_tag",
        "partner",
        "status",
        "missing",
        "burn_in",
        "connector_map",
        "timeline",
    ]
    inlines = [InstallationInline, StepInline]
    actions = ["start_assembly", "mark_assembled"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # servers come from the order (procurement) or the API

    def save_model(self, request: HttpRequest, obj: Server, form: Any, change: bool) -> None:
        # The chassis serial is the one editable field: through the service, which audits it.
        if "chassis_serial" in form.changed_data:
            server_set_chassis_serial(
                server=obj, actor=request.user, chassis_serial=form.cleaned_data["chassis_serial"]
            )

    @admin.display(description="Missing before assembled")
    def missing(self, obj: Server) -> str:
        gaps = assembly_gaps(obj)
        return format_html_join("", "<div>{}</div>", ((gap,) for gap in gaps)) if gaps else "nothing"

    @admin.display(description="Burn-in")
    def burn_in(self, obj: Server) -> str:
        # By URL name: the burn-in app sits above builds, which must not import it.
        try:
            url = reverse("burnin:server", args=[obj.pk])
        except NoReverseMatch:
            return "—"
        return format_html('<a href="{}">Burn-in results, telemetry and findings</a>', url)

    @admin.display(description="Connectors")
    def connector_map(self, obj: Server) -> str:
        installed = {
            inst.connector_id: inst.component.serial
            for inst in obj.installations.filter(removed_at__isnull=True).select_related("component")
        }
        blacklisted = {
            b.connector_id: b.reason for b in ConnectorBlacklist.objects.filter(connector__server=obj)
        }
        rows = (
            (
                c.name,
                c.get_kind_display(),
                f"BLACKLISTED: {blacklisted[c.pk]}" if c.pk in blacklisted else installed.get(c.pk, "free"),
            )
            for c in obj.connectors.order_by("position")
        )
        return format_html_join("", "<div><strong>{}</strong> ({}) · {}</div>", rows)

    @admin.display(description="Audit timeline")
    def timeline(self, obj: Server) -> str:
        return audit_timeline(obj)

    @admin.action(description="Start assembly of the selected servers")
    def start_assembly(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request,
            queryset,
            lambda s: server_start_assembly(server=s, actor=request.user),
            "assembly started",
        )

    @admin.action(description="Mark the selected servers assembled")
    def mark_assembled(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request, queryset, lambda s: server_mark_assembled(server=s, actor=request.user), "assembled"
        )


@admin.register(ConnectorBlacklist)
class ConnectorBlacklistAdmin(PMAdmin):
    """Read only, for ever: no change, no delete (the database refuses both too)."""

    list_display = ["connector", "reason", "created_by", "created_at"]
    search_fields = ["connector__name", "connector__server__hostname", "reason"]
    list_select_related = ["connector__server", "created_by"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class LayoutConnectorInline(admin.TabularInline):
    model = LayoutConnector
    extra = 0
    fields = ["position", "name", "kind", "numa_node", "pcie_gen", "pcie_lanes", "cooling_block"]

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_pm(request.user)

    has_add_permission = has_change_permission = has_delete_permission = has_view_permission


@admin.register(ChassisLayout)
class ChassisLayoutAdmin(PMAdmin):
    """Catalogue data: a chassis and its named connectors. Servers copy them when they are created."""

    list_display = ["chassis", "description", "columns"]
    inlines = [LayoutConnectorInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["chassis"] if obj else []

    def save_model(self, request: HttpRequest, obj: ChassisLayout, form: Any, change: bool) -> None:
        values = {key: form.cleaned_data[key] for key in ("description", "columns")}
        if change:
            layout_update(layout=obj, actor=request.user, **values)
        else:
            obj.pk = layout_create(actor=request.user, chassis=form.cleaned_data["chassis"], **values).pk

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        formset.save(commit=False)  # sorts the forms into new, changed and deleted; writes nothing
        layout = ChassisLayout.objects.get(pk=form.instance.pk)
        for connector in formset.deleted_objects:
            layout_connector_remove(connector=connector, actor=request.user)
        for connector, changed in formset.changed_objects:
            layout_connector_update(
                connector=connector,
                actor=request.user,
                **{name: getattr(connector, name) for name in changed},
            )
        for connector in formset.new_objects:
            layout_connector_add(
                layout=layout,
                actor=request.user,
                **{name: getattr(connector, name) for name in LayoutConnectorInline.fields},
            )


@admin.register(ChecklistItem)
class ChecklistItemAdmin(PMAdmin):
    list_display = ["configuration", "kind"]
    list_filter = ["configuration", "kind"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_pm(request.user)

    def save_model(self, request: HttpRequest, obj: ChecklistItem, form: Any, change: bool) -> None:
        configuration, kind = form.cleaned_data["configuration"], form.cleaned_data["kind"]
        if change:
            checklist_item_update(item=obj, actor=request.user, kind=kind, configuration=configuration)
        else:
            obj.pk = checklist_item_add(configuration=configuration, actor=request.user, kind=kind).pk

    def delete_model(self, request: HttpRequest, obj: ChecklistItem) -> None:
        checklist_item_remove(item=obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for item in queryset:
            checklist_item_remove(item=item, actor=request.user)


@admin.register(Connector)
class ConnectorAdmin(PMAdmin):
    list_display = ["server", "name", "kind", "numa_node", "pcie_gen", "pcie_lanes", "cooling_block"]
    list_filter = ["kind", "server__order"]
    search_fields = ["server__hostname", "name"]
    list_select_related = ["server"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(BuildPhoto)
class BuildPhotoAdmin(PMAdmin):
    list_display = ["server", "step", "content_type", "size_bytes", "uploaded_by", "created_at"]
    list_select_related = ["server", "step", "uploaded_by"]
    exclude = ["file"]  # served only through the access-checked download route

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
