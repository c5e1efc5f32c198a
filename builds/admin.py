"""Admin of the builds app: servers with their connector map, blacklist and history; layouts; checklists.

Writes that carry rules (assignment, transitions) go through the services; the blacklist is read-only here
and can never be removed (there is no delete anywhere, and the database refuses it).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin import helpers
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html, format_html_join

from builds.choices import AT_LEAST_ASSEMBLED
from builds.gates import assembly_gaps
from builds.models import (
    Allocation,
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
    checklist_item_add,
    checklist_item_remove,
    checklist_item_update,
    layout_connector_add,
    layout_connector_remove,
    layout_connector_update,
    layout_create,
    layout_update,
    order_assign_partner,
    server_mark_assembled,
    server_set_chassis_serial,
    server_start_assembly,
)
from inventory.admin import ComponentAdmin as InventoryComponentAdmin
from inventory.models import Component
from orders.admin import OrderAdmin as OrdersOrderAdmin
from orders.models import Order
from werkbank.access import is_pm
from werkbank.admin import (
    PMAdmin,
    ReadOnlyInline,
    admin_link,
    audit_timeline,
    badge,
    progress,
    shortened,
)
from werkbank.choices import OrganizationKind
from werkbank.models import Organization


class InstallationInline(ReadOnlyInline):
    model = Installation
    fk_name = "server"
    fields = ["connector", "component", "installed_at", "installed_by", "removed_at", "removal_reason"]
    readonly_fields = fields
    verbose_name_plural = "Installations (history)"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .select_related("connector__server", "component__part", "installed_by", "server")
        )


class StepInline(ReadOnlyInline):
    model = BuildStep
    fields = ["kind", "actor", "created_at", "notes", "data"]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("actor", "server")


@admin.register(Server)
class ServerAdmin(PMAdmin):
    list_display = ["hostname", "order_link", "customer", "partner_name", "status_badge", "asset_tag"]
    list_filter = ["status", "partner", "order"]
    search_fields = ["hostname", "asset_tag", "chassis_serial", "order__reference"]
    list_select_related = ["order__customer", "partner"]
    # By the order's key, not through the order's own ordering (a join over every row; issue #15).
    ordering = ["order_id", "sequence"]
    fields = [
        "hostname",
        "order_link",
        "sequence",
        "asset_tag",
        "chassis_serial",
        "partner",
        "status_badge",
        "missing",
        "burn_in",
        "connector_map",
        "timeline",
    ]
    readonly_fields = [
        "hostname",
        "order_link",
        "sequence",
        "asset_tag",
        "partner",
        "status_badge",
        "missing",
        "burn_in",
        "connector_map",
        "timeline",
    ]
    inlines = [InstallationInline, StepInline]
    actions = ["assign_partner", "start_assembly", "mark_assembled"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # servers come from the order (procurement) or the API

    def save_model(self, request: HttpRequest, obj: Server, form: Any, change: bool) -> None:
        # The chassis serial is the one editable field: through the service, which audits it.
        if "chassis_serial" in form.changed_data:
            server_set_chassis_serial(
                server=obj, actor=request.user, chassis_serial=form.cleaned_data["chassis_serial"]
            )

    @admin.display(description="Order", ordering="order__reference")
    def order_link(self, obj: Server) -> str:
        return admin_link(obj.order, obj.order.reference)

    @admin.display(description="Customer", ordering="order__customer__name")
    def customer(self, obj: Server) -> str:
        return shortened(obj.order.customer.name, 28)

    @admin.display(description="Partner", ordering="partner__name")
    def partner_name(self, obj: Server) -> str:
        return shortened(obj.partner.name, 24) if obj.partner_id else "—"

    @admin.display(description="Status", ordering="status")
    def status_badge(self, obj: Server) -> str:
        return badge(obj.status, obj.get_status_display())

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
            inst.connector_id: inst.component
            for inst in obj.installations.active().select_related("component")
        }
        blacklisted = {
            b.connector_id: b.reason for b in ConnectorBlacklist.objects.filter(connector__server=obj)
        }

        def state(connector: Connector) -> str:
            if connector.pk in blacklisted:
                return format_html("{} {}", badge("blacklisted", "Blacklisted"), blacklisted[connector.pk])
            component = installed.get(connector.pk)
            return admin_link(component, component.serial) if component else "free"

        rows = ((c.name, c.get_kind_display(), state(c)) for c in obj.connectors.order_by("position"))
        return format_html_join("", "<div><strong>{}</strong> ({}) · {}</div>", rows)

    @admin.display(description="Audit timeline")
    def timeline(self, obj: Server) -> str:
        return audit_timeline(obj)

    @admin.action(description="Assign the selected servers to an assembly partner")
    def assign_partner(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        """An intermediate page picks the partner; then one assignment per order (one e-mail each)."""
        partners = Organization.objects.filter(kind=OrganizationKind.PARTNER).order_by("name")
        partner = partners.filter(pk=request.POST.get("partner") or 0).first()
        if "apply" not in request.POST or partner is None:
            return TemplateResponse(
                request,
                "admin/builds/server/assign_partner.html",
                {
                    **self.admin_site.each_context(request),
                    "title": "Assign servers to an assembly partner",
                    "servers": queryset.select_related("order", "partner"),
                    "partners": partners,
                    "action": request.POST.get("action"),
                    "missing_partner": "apply" in request.POST,
                    "opts": self.model._meta,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        by_order: dict[int, list[Server]] = {}
        for server in queryset.select_related("order").order_by("order_id", "sequence"):
            by_order.setdefault(server.order_id, []).append(server)
        self.run_for_each(
            request,
            [servers[0].order for servers in by_order.values()],
            lambda order: order_assign_partner(
                order=order, actor=request.user, partner=partner, servers=by_order[order.pk]
            ),
            f"assigned to {partner.name}",
        )
        return None

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

    list_display = ["server_link", "connector_name", "short_reason", "created_by", "created_at"]
    search_fields = ["connector__name", "connector__server__hostname", "reason"]
    list_select_related = ["connector__server", "created_by"]

    @admin.display(description="Server", ordering="connector__server__hostname")
    def server_link(self, obj: ConnectorBlacklist) -> str:
        return admin_link(obj.connector.server, obj.connector.server.hostname)

    @admin.display(description="Connector", ordering="connector__name")
    def connector_name(self, obj: ConnectorBlacklist) -> str:
        return obj.connector.name

    @admin.display(description="Reason")
    def short_reason(self, obj: ConnectorBlacklist) -> str:
        return shortened(obj.reason, 48)

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
    list_display = ["server_link", "name", "kind", "numa_node", "pcie_gen", "pcie_lanes", "cooling_block"]
    list_filter = ["kind", "server__order"]
    search_fields = ["server__hostname", "name"]
    list_select_related = ["server"]
    # Several dozen per server: by the server's key (no join), never counted in full.
    ordering = ["server_id", "position"]
    show_full_result_count = False

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, obj: Connector) -> str:
        return admin_link(obj.server, obj.server.hostname)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(BuildPhoto)
class BuildPhotoAdmin(PMAdmin):
    list_display = ["server_link", "step", "content_type", "size_bytes", "uploaded_by", "created_at"]
    list_select_related = ["server", "step", "uploaded_by"]
    search_fields = ["server__hostname", "server__asset_tag"]

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, obj: BuildPhoto) -> str:
        return admin_link(obj.server, obj.server.hostname)

    exclude = ["file"]  # served only through the access-checked download route

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


# --- the lower apps' admins, with what only builds knows ------------------------------------------------
# Servers and allocations are this app's: the orders and inventory admins cannot see them (layers,
# DESIGN.md), so this app re-registers them with the servers' progress and the component's server.

admin.site.unregister(Order)


@admin.register(Order)
class OrderAdmin(OrdersOrderAdmin):
    """The orders app's admin, plus how many of the order's servers are built, and links to them."""

    list_display = [
        *OrdersOrderAdmin.list_display[: OrdersOrderAdmin.list_display.index("status_badge") + 1],
        "build_progress",
        *OrdersOrderAdmin.list_display[OrdersOrderAdmin.list_display.index("status_badge") + 1 :],
    ]
    search_fields = [*OrdersOrderAdmin.search_fields, "servers__hostname", "servers__asset_tag"]
    readonly_fields = [*OrdersOrderAdmin.readonly_fields, "servers_list"]
    fields = [
        *OrdersOrderAdmin.fields[: OrdersOrderAdmin.fields.index("next_steps")],
        "servers_list",
        *OrdersOrderAdmin.fields[OrdersOrderAdmin.fields.index("next_steps") :],
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # Two counts over the servers, grouped in the page's one query (not one query per row).
        return (
            super()
            .get_queryset(request)
            .annotate(
                server_rows=Count("servers", distinct=True),
                servers_built=Count(
                    "servers", filter=Q(servers__status__in=sorted(AT_LEAST_ASSEMBLED)), distinct=True
                ),
            )
        )

    @admin.display(description="Built", ordering="servers_built")
    def build_progress(self, obj: Order) -> str:
        # Before procurement no server exists yet: the order's planned count is the whole.
        total = obj.server_rows or obj.server_count  # type: ignore[attr-defined]
        return progress(obj.servers_built, total, "assembled")  # type: ignore[attr-defined]

    @admin.display(description="Servers")
    def servers_list(self, obj: Order) -> str:
        if not obj.pk:
            return "—"
        servers = obj.servers.select_related("partner").order_by("sequence")
        rows = format_html_join(
            "",
            "<div>{} · {} · {}</div>",
            (
                (
                    admin_link(server, server.hostname),
                    server.partner.name if server.partner_id else "no partner yet",
                    badge(server.status, server.get_status_display()),
                )
                for server in servers
            ),
        )
        return rows or "none yet (procurement creates them)"


admin.site.unregister(Component)


def _active_allocation(field: str) -> Subquery:
    return Subquery(
        Allocation.objects.filter(component=OuterRef("pk"), released_at__isnull=True)
        .order_by()
        .values(field)[:1]
    )


@admin.register(Component)
class ComponentAdmin(InventoryComponentAdmin):
    """Inventory's component admin, plus the server it is allocated to or installed in (a link), and the
    search by that server's hostname or asset tag."""

    list_display = [
        *InventoryComponentAdmin.list_display[:4],
        "server_link",
        *InventoryComponentAdmin.list_display[4:],
    ]
    search_fields = [
        *InventoryComponentAdmin.search_fields,
        "allocations__server__hostname",
        "allocations__server__asset_tag",
    ]
    fields = [
        *InventoryComponentAdmin.fields[: InventoryComponentAdmin.fields.index("status_badge") + 1],
        "server_link",
        *InventoryComponentAdmin.fields[InventoryComponentAdmin.fields.index("status_badge") + 1 :],
    ]
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The active allocation's server, per listed row (a subquery the database runs for the page only).
        return (
            super()
            .get_queryset(request)
            .annotate(
                server_pk=_active_allocation("server_id"),
                server_hostname=_active_allocation("server__hostname"),
            )
        )

    @admin.display(description="Server", ordering="server_hostname")
    def server_link(self, obj: Component) -> str:
        server_pk = getattr(obj, "server_pk", None)
        if server_pk is None:
            return "—"
        return format_html(
            '<a href="{}">{}</a>',
            reverse("admin:builds_server_change", args=[server_pk]),
            obj.server_hostname,  # type: ignore[attr-defined]
        )
