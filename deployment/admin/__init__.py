"""Admin of the deployment app, for PMs: sites and racks with their elevations, power feeds, placements
(with a "Deploy" action), network records and the platform listing history.

Every write goes through the services (`deployment.services`), so the rules (no overlap, circuit limits,
unique addresses, append-only listings) and the audit rows are the same as through the API. BMC credentials
are write-only here: the password input never renders a value, and lists say only "set" or "none".
One module per concern beside this one (issue #28): `phases` (a placement's feed phases and their review),
`accounts` (rental-platform accounts and the poll's alerts), `earnings` (months of platform earnings) and
`prefixes` (a site's IP prefixes).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from builds.models import Server
from deployment.admin import (  # each registers its admins: earnings months, platform accounts, IP prefixes
    accounts,  # noqa: F401
    earnings,  # noqa: F401
    prefixes,  # noqa: F401
)
from deployment.admin.phases import (
    PhaseReviewFilter,
    PlacementFeedInline,
    PlacementPhasesMixin,
    feed_phases,
    with_links,
)
from deployment.elevation import rack_elevation_svg
from deployment.forms import PlacementForm
from deployment.models import PlatformListing, PowerFeed, Rack, RackPlacement, ServerNetwork, Site
from deployment.resources import RackResource, ServerNetworkResource, SiteResource
from deployment.services import (
    feed_create,
    feed_delete,
    feed_update,
    listing_record,
    network_set,
    placement_create,
    rack_create,
    rack_update,
    server_deploy,
    site_create,
    site_update,
)
from deployment.services.network import normalize_mac
from deployment.views import network_initial
from werkbank.access import is_pm
from werkbank.admin import PMAdmin, ReadOnlyInline, admin_link, audit_timeline, badge, day, shortened
from werkbank.admin_io import ServiceImportMixin
from werkbank.errors import InvalidInput

#: The PM viewing a change page: the elevations are drawn for them (a PM sees every server).
_viewer: ContextVar[Any] = ContextVar("deployment_admin_viewer", default=None)


@contextmanager
def _viewing(request: HttpRequest) -> Iterator[None]:
    token = _viewer.set(request.user)
    try:
        yield
    finally:
        _viewer.reset(token)


class ViewerAdmin(PMAdmin):
    """Remembers who is looking, for the read-only fields that draw what that user may see."""

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with _viewing(request):
            response = super().changeform_view(request, *args, **kwargs)
            if hasattr(response, "render") and not getattr(response, "is_rendered", True):
                response.render()  # draw while the viewer is known
            return response


def _svg(rack: Rack) -> SafeString:
    # Built with escape() from our own data (deployment.elevation).
    return mark_safe(rack_elevation_svg(rack=rack, user=_viewer.get()))


def _elevations(racks: Any) -> str:
    cells = format_html_join(
        "",
        '<div class="rack-elevation-cell"><p><a href="{}">{}</a></p>{}</div>',
        ((reverse("admin:deployment_rack_change", args=[rack.pk]), rack.name, _svg(rack)) for rack in racks),
    )
    if not cells:
        return "No racks yet."
    # Laid out by werkbank/static/werkbank/admin.css: the CSP refuses inline style attributes.
    return format_html('<div class="rack-elevations">{}</div>', cells)


def _text(field: str, message: str) -> forms.ValidationError:
    return forms.ValidationError(f"{field}: {message}")


# --- sites --------------------------------------------------------------------------------------------


@admin.register(Site)
class SiteAdmin(ServiceImportMixin, ViewerAdmin):
    resource_classes = [SiteResource]  # CSV import through site_create / site_update
    list_display = ["name", "kind", "short_operator", "customer_link", "country", "eu"]
    list_filter = ["kind", "country", "eu"]
    search_fields = ["name", "operator", "address", "customer__name"]
    list_select_related = ["customer"]
    fields = [
        "name",
        "kind",
        "operator",
        "customer",
        "address",
        "country",
        "eu",
        "page",
        "elevations",
        "timeline",
    ]
    readonly_fields = ["eu", "page", "elevations", "timeline"]

    @admin.display(description="Operator", ordering="operator")
    def short_operator(self, obj: Site) -> str:
        return shortened(obj.operator, 24)

    @admin.display(description="Customer", ordering="customer__name")
    def customer_link(self, obj: Site) -> str:
        return admin_link(obj.customer, shortened(obj.customer.name, 28)) if obj.customer_id else "—"

    @admin.display(description="Page")
    def page(self, obj: Site) -> str:
        return (
            format_html('<a href="{}">Site page</a>', reverse("deployment:site", args=[obj.pk]))
            if obj.pk
            else "—"
        )

    @admin.display(description="Racks (front elevations)")
    def elevations(self, obj: Site) -> str:
        return _elevations(obj.racks.order_by("name")) if obj.pk else "—"

    @admin.display(description="Audit timeline")
    def timeline(self, obj: Site) -> str:
        return audit_timeline(obj) if obj.pk else "—"

    def save_model(self, request: HttpRequest, obj: Site, form: Any, change: bool) -> None:
        values = {
            key: form.cleaned_data[key]
            for key in ("name", "kind", "operator", "customer", "address", "country")
        }
        if change:
            site_update(site=obj, actor=request.user, **values)
        else:
            obj.pk = site_create(actor=request.user, **values).pk


# --- racks and their feeds -----------------------------------------------------------------------------


class PowerFeedInline(admin.TabularInline):
    model = PowerFeed
    extra = 0
    fields = ["name", "leg", "voltage_v", "current_a", "phases"]

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return is_pm(request.user)

    has_add_permission = has_change_permission = has_delete_permission = has_view_permission


class PlacementInline(ReadOnlyInline):
    model = RackPlacement
    fields = ["server", "u_range", "face", "feed_names", "measured_wall_w", "placed_by", "placed_at"]
    readonly_fields = fields
    verbose_name_plural = "Placements"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("server", "placed_by").prefetch_related("feeds")

    @admin.display(description="U range")
    def u_range(self, obj: RackPlacement) -> str:
        return f"U{obj.lowest_u}–U{obj.top_u}"

    @admin.display(description="Feeds")
    def feed_names(self, obj: RackPlacement) -> str:
        return ", ".join(sorted(feed.name for feed in obj.feeds.all())) or "—"


@admin.register(Rack)
class RackAdmin(ServiceImportMixin, ViewerAdmin):
    resource_classes = [RackResource]  # CSV import through rack_create / rack_update
    list_display = ["name", "site", "height_u", "placed", "created_at"]
    list_filter = ["site"]
    search_fields = ["name", "site__name"]
    list_select_related = ["site"]
    fields = ["site", "name", "height_u", "page", "elevation"]
    inlines = [PowerFeedInline, PlacementInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        from django.db.models import Count

        return super().get_queryset(request).annotate(placement_count=Count("placements"))

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["site", "page", "elevation"] if obj else ["page", "elevation"]

    @admin.display(description="Servers", ordering="placement_count")
    def placed(self, obj: Rack) -> int:
        return obj.placement_count  # type: ignore[attr-defined]

    @admin.display(description="Page")
    def page(self, obj: Rack) -> str:
        return (
            format_html('<a href="{}">Rack page</a>', reverse("deployment:rack", args=[obj.pk]))
            if obj.pk
            else "—"
        )

    @admin.display(description="Front elevation and placements")
    def elevation(self, obj: Rack) -> str:
        if not obj.pk:
            return "—"
        placements = RackPlacement.objects.filter(rack=obj).select_related("server").order_by("-lowest_u")
        rows = format_html_join(
            "",
            '<tr><td>U{}–U{}</td><td><a href="{}">{}</a></td><td>{}</td></tr>',
            (
                (
                    p.lowest_u,
                    p.top_u,
                    reverse("admin:deployment_rackplacement_change", args=[p.pk]),
                    p.server.hostname,
                    p.server.get_status_display(),
                )
                for p in placements
            ),
        )
        table = format_html(
            '<table class="placements"><thead><tr><th>U</th><th>Server</th><th>Status</th></tr></thead>'
            "<tbody>{}</tbody></table>",
            rows or format_html('<tr><td colspan="3">No server in this rack yet.</td></tr>'),
        )
        return format_html(
            '<div class="rack-elevations rack-elevation-pair">'
            '<div class="rack-elevation-cell">{}</div><div>{}</div></div>',
            _svg(obj),
            table,
        )

    def save_model(self, request: HttpRequest, obj: Rack, form: Any, change: bool) -> None:
        if change:
            rack_update(
                rack=obj,
                actor=request.user,
                name=form.cleaned_data["name"],
                height_u=form.cleaned_data["height_u"],
            )
        else:
            created = rack_create(
                site=form.cleaned_data["site"],
                actor=request.user,
                name=form.cleaned_data["name"],
                height_u=form.cleaned_data["height_u"],
            )
            obj.pk = created.pk

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        formset.save(commit=False)  # sorts the forms into new, changed and deleted; writes nothing
        if formset.model is not PowerFeed:
            return  # the placements are read-only here
        rack = Rack.objects.get(pk=form.instance.pk)
        for feed in formset.deleted_objects:
            feed_delete(feed=feed, actor=request.user)
        for feed, changed in formset.changed_objects:
            feed_update(feed=feed, actor=request.user, **{name: getattr(feed, name) for name in changed})
        for feed in formset.new_objects:
            feed_create(
                rack=rack,
                actor=request.user,
                **{name: getattr(feed, name) for name in ("name", "leg", "voltage_v", "current_a", "phases")},
            )


# --- placements ----------------------------------------------------------------------------------------


@admin.register(RackPlacement)
class RackPlacementAdmin(PlacementPhasesMixin, PMAdmin):
    form = PlacementForm
    list_display = ["server_link", "rack_link", "u_range", "feed_names", "wall_w", "status", "placed"]
    list_filter = ["rack__site", "rack", "server__status", PhaseReviewFilter]
    search_fields = ["server__hostname", "server__asset_tag", "rack__name"]
    list_select_related = ["server", "rack__site"]
    actions = ["deploy", "confirm_phases"]
    inlines = [PlacementFeedInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return with_links(super().get_queryset(request))

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        return [] if obj is None else list(self.inlines)  # the add form names the phases in `phases`

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a placement is re-made, never edited: remove it and place again

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None:
            return list(PlacementForm.Meta.fields)
        return [
            "server",
            "rack",
            "u_range",
            "face",
            "phase_links",
            "measured_wall_w",
            "power_override_reason",
            "placed_by",
            "placed_at",
            "timeline",
        ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if obj is None else self.get_fields(request, obj)

    @admin.display(description="U range", ordering="lowest_u")
    def u_range(self, obj: RackPlacement) -> str:
        return f"U{obj.lowest_u}–U{obj.top_u}"

    @admin.display(description="Feeds and phases")
    def feed_names(self, obj: RackPlacement) -> str:
        return feed_phases(obj)

    @admin.display(description="Server status", ordering="server__status")
    def status(self, obj: RackPlacement) -> str:
        return badge(obj.server.status, obj.server.get_status_display())

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, obj: RackPlacement) -> str:
        return admin_link(obj.server, obj.server.hostname)

    @admin.display(description="Rack", ordering="rack__name")
    def rack_link(self, obj: RackPlacement) -> str:
        return admin_link(obj.rack, shortened(f"{obj.rack.site.name} / {obj.rack.name}", 32))

    @admin.display(description="Wall (W)", ordering="measured_wall_w")
    def wall_w(self, obj: RackPlacement) -> str:
        return "—" if obj.measured_wall_w is None else f"{obj.measured_wall_w:,}"

    @admin.display(description="Placed", ordering="placed_at")
    def placed(self, obj: RackPlacement) -> str:
        return day(obj.placed_at)

    @admin.display(description="Audit timeline (server)")
    def timeline(self, obj: RackPlacement) -> str:
        return audit_timeline(obj.server)

    def save_model(self, request: HttpRequest, obj: RackPlacement, form: Any, change: bool) -> None:
        data = form.cleaned_data
        placement = placement_create(
            server=data["server"],
            rack=data["rack"],
            lowest_u=data["lowest_u"],
            feeds=list(data["feeds"]),
            actor=request.user,
            face=data["face"],
            measured_wall_w=data.get("measured_wall_w"),
            override_reason=data.get("power_override_reason") or "",
            phases=data.get("phase_map") or {},
        )
        obj.pk, obj.height_u = placement.pk, placement.height_u  # the admin's log names it

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        pass  # the service set the feeds

    @admin.action(description="Deploy selected servers")
    def deploy(self, request: HttpRequest, queryset: QuerySet) -> None:
        self.run_for_each(
            request,
            [placement.server for placement in queryset.select_related("server")],
            lambda server: server_deploy(server=server, actor=request.user),
            "deployed",
        )


# --- network -------------------------------------------------------------------------------------------


class NetworkForm(forms.ModelForm):
    bmc_username = forms.CharField(
        label="BMC username", required=False, max_length=256, help_text="Left empty: the stored one stays."
    )
    bmc_password = forms.CharField(
        label="BMC password",
        required=False,
        max_length=256,
        strip=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Never shown. Left empty: the stored one stays. Stored encrypted.",
    )
    clear_bmc_credentials = forms.BooleanField(label="Clear the stored BMC credentials", required=False)

    class Meta:
        model = ServerNetwork
        fields = ["server", "management_ip", "bmc_ip", "bmc_mac"]

    def clean_bmc_mac(self) -> str:
        try:
            return normalize_mac(self.cleaned_data.get("bmc_mac"))
        except InvalidInput as error:
            raise _text("bmc_mac", error.message) from None


@admin.register(ServerNetwork)
class ServerNetworkAdmin(ServiceImportMixin, PMAdmin):
    resource_classes = [ServerNetworkResource]  # CSV import through network_set; no credentials
    form = NetworkForm
    list_display = ["server_link", "management_ip", "bmc_ip", "bmc_mac", "credentials", "updated_at"]
    search_fields = ["server__hostname", "management_ip", "bmc_ip", "bmc_mac"]
    list_select_related = ["server"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        fields = [
            "server",
            "management_ip",
            "bmc_ip",
            "bmc_mac",
            "credentials",
            "bmc_username",
            "bmc_password",
            "clear_bmc_credentials",
        ]
        return [*fields, "updated_by", "updated_at"] if obj else fields

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return ["server", "credentials", "updated_by", "updated_at"] if obj else ["credentials"]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is None:
            form.base_fields["server"].queryset = Server.objects.filter(network__isnull=True).order_by(
                "hostname"
            )
        return form

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        # Opened for one server (?server=<id>): its site's next free management and BMC addresses.
        return {**super().get_changeform_initial_data(request), **network_initial(request.GET)}

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, obj: ServerNetwork) -> str:
        return admin_link(obj.server, obj.server.hostname)

    @admin.display(description="BMC credentials")
    def credentials(self, obj: ServerNetwork) -> str:
        return "set" if obj.pk and obj.has_bmc_credentials else "none"

    def save_model(self, request: HttpRequest, obj: ServerNetwork, form: Any, change: bool) -> None:
        data = form.cleaned_data
        network = network_set(
            server=obj.server if change else data["server"],
            actor=request.user,
            management_ip=data["management_ip"],
            bmc_ip=data["bmc_ip"],
            bmc_mac=data["bmc_mac"],
            bmc_username=data.get("bmc_username") or None,
            bmc_password=data.get("bmc_password") or None,
            clear_bmc_credentials=bool(data.get("clear_bmc_credentials")),
        )
        obj.pk = network.pk


# --- platform listings ---------------------------------------------------------------------------------


class PlatformListingForm(forms.ModelForm):
    """A new listing, with the PM's reason to list a server below the platform's host minimums anyway."""

    minimums_override_reason = forms.CharField(
        label="Host minimums override reason",
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Only where the server falls short of the platform's host minimums (Vast.ai: see the "
        "server's deployment page): why it is listed anyway. Audited with the shortfalls.",
    )

    class Meta:
        model = PlatformListing
        fields = [
            "server",
            "platform",
            "machine_id",
            "verification",
            "reliability",
            "listed_on",
            "verified_on",
            "note",
        ]


@admin.register(PlatformListing)
class PlatformListingAdmin(PMAdmin):
    """Append-only history: a change is a new row (through `listing_record`); rows are never edited."""

    form = PlatformListingForm

    list_display = [
        "server_link",
        "platform",
        "machine_id",
        "verification_badge",
        "reliability",
        "listed_on",
        "verified_on",
        "recorded_at",
    ]
    list_filter = ["platform", "verification"]
    search_fields = ["server__hostname", "machine_id", "note"]
    list_select_related = ["server", "recorded_by"]
    fields = [
        "server",
        "platform",
        "machine_id",
        "verification",
        "reliability",
        "listed_on",
        "verified_on",
        "note",
    ]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="Server", ordering="server__hostname")
    def server_link(self, obj: PlatformListing) -> str:
        return admin_link(obj.server, obj.server.hostname)

    @admin.display(description="Verification", ordering="verification")
    def verification_badge(self, obj: PlatformListing) -> str:
        return badge(obj.verification, obj.get_verification_display())

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [] if obj is None else [*self.fields, "recorded_by", "recorded_at"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        if obj is None:
            return [*self.fields, "minimums_override_reason"]
        return [*self.fields, "recorded_by", "recorded_at"]

    def save_model(self, request: HttpRequest, obj: PlatformListing, form: Any, change: bool) -> None:
        data = form.cleaned_data
        listing = listing_record(
            server=data["server"],
            actor=request.user,
            platform=data["platform"],
            machine_id=data.get("machine_id") or "",
            verification=data["verification"],
            reliability=data.get("reliability"),
            listed_on=data.get("listed_on"),
            verified_on=data.get("verified_on"),
            note=data.get("note") or "",
            minimums_override_reason=data.get("minimums_override_reason") or "",
        )
        obj.pk = listing.pk
