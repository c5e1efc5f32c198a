"""Deployment pages (/deployment/): a rack with its elevation and feeds (and, for PMs, placing a server from
it), a site with its racks side by side and its IP prefixes, and a server's placement, network, platform
listings, BMC credentials' hand-over and deploy checks.

Whoever may see an object through `visible_to(user, VIEW)` may see its page; anyone else gets a 404. In a
rack, servers the viewer may not see appear only as "occupied": no hostname, status, asset tag or link. BMC
credentials are never read here: a page says only whether they are stored, and who revealed them when and
from where (from the audit rows). Views stay thin: reads come from deployment.selectors (and the modules of
one concern: placing, addresses, netbox), the SVG from deployment.elevation, every write from a service.

- The rack page's placing form (PMs; issue #28): an unplaced server (with its height), a click on a free U
  of the front or rear elevation (or the lowest U typed and the face picked, without JavaScript), the
  rack's feeds each with its phase(s), the measured wall power, and an override reason once a circuit would
  be over its limit. The POST goes to `placement_create`; a refusal re-renders the page with the service's
  message and each missing item, the form keeping its values. A non-PM who may see the rack gets a 403.
- A site's prefixes are shown to whoever sees the site (as the API's `/prefixes/`); the next free addresses,
  the offer to record them, and the NetBox export are the PM's: anyone else gets a 404 for the download.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST

from builds.gates import step_missing
from builds.models import Server
from builds.selectors import has_bench
from deployment import selectors
from deployment.addresses import FreeAddress, network_of, next_free_address, site_prefixes, used_addresses
from deployment.choices import PrefixRole, RackFace
from deployment.elevation import feed_caption, phase_caption, rack_elevation_svg
from deployment.forms import ElevationPlacementForm
from deployment.gates import DEPLOY
from deployment.models import IPPrefix, PlatformListing, PowerFeed, Rack, RackPlacement, ServerNetwork, Site
from deployment.netbox import netbox_tables, netbox_zip
from deployment.placing import free_runs, placing_candidates
from deployment.services import bmc_credentials_rotate, placement_create, server_deploy
from werkbank.access import is_pm
from werkbank.errors import DomainError, InvalidInput, RuleViolation


@dataclass(frozen=True)
class FeedRow:
    """One feed as a page shows it: the caption, the load (per phase on three phases, `phases`), and its
    servers with the phase each draws from (hidden ones unnamed)."""

    load: selectors.FeedLoad
    caption: str
    servers: list[dict[str, Any]]
    phases: str = ""


def _elevation(rack: Rack, user: Any, **read: Any) -> SafeString:
    # Built with escape() from our own data (deployment.elevation).
    return mark_safe(rack_elevation_svg(rack=rack, user=user, **read))


def _feed_rows(loads: list[selectors.FeedLoad], visible_ids: set[int]) -> list[FeedRow]:
    rows = []
    for load in loads:
        servers = [
            {
                "visible": power.server_id in visible_ids,
                "hostname": power.hostname if power.server_id in visible_ids else "",
                "server_id": power.server_id if power.server_id in visible_ids else None,
                "wall_w": power.wall_w,
                "source_label": power.source_label if power.server_id in visible_ids else "",
                "phase": load.phase_of(power.server_id),
                "phase_assumed": power.server_id in load.assumed,
            }
            for power in load.servers
        ]
        rows.append(
            FeedRow(load=load, caption=feed_caption(load), servers=servers, phases=phase_caption(load))
        )
    return rows


def _visible(queryset: Any, user: Any, pk: int) -> Any:
    found = queryset.visible_to(user).filter(pk=pk).first()
    if found is None:
        raise Http404("Not found.")
    return found


@login_required
def site_page(request: HttpRequest, site_id: int) -> HttpResponse:
    """A site: its details and the elevations of the racks the user may see, side by side."""
    site = _visible(Site.objects.select_related("customer"), request.user, site_id)
    racks = Rack.objects.visible_to(request.user).filter(site=site).order_by("name")
    context = {
        "site": site,
        "racks": [(rack, _elevation(rack, request.user)) for rack in racks],
        "is_pm": is_pm(request.user),
        **site_prefix_context(site, request.user),
    }
    return TemplateResponse(request, "deployment/site.html", context)


@login_required
def server_page(request: HttpRequest, server_id: int) -> HttpResponse:
    """A server's placement and power, its rack, network, platform listings and deploy checks."""
    server = _visible(Server.objects.select_related("order__customer", "partner"), request.user, server_id)
    return _server_response(request, server)


def _server_response(request: HttpRequest, server: Server) -> HttpResponse:
    placement = (
        RackPlacement.objects.select_related("rack__site", "placed_by")
        .prefetch_related("feeds")
        .filter(server=server)
        .first()
    )
    power = None
    if placement is not None:
        power = selectors.server_powers([server], measured={server.pk: placement.measured_wall_w})[server.pk]
    network = ServerNetwork.objects.filter(server=server).first()
    listings = list(
        PlatformListing.objects.filter(server=server)
        .select_related("recorded_by")
        .order_by("-recorded_at", "-id")
    )
    for listing in listings:
        listing.reliability_percent = (  # type: ignore[attr-defined]
            f"{listing.reliability * 100:.2f} %" if listing.reliability is not None else ""
        )
    context = {
        "server": server,
        "order": server.order,
        "placement": placement,
        "feeds": list(placement.feeds.order_by("name")) if placement is not None else [],
        "power": power,
        "elevation": _elevation(placement.rack, request.user) if placement is not None else "",
        "network": network,
        "bmc_credentials": _("stored (encrypted)")
        if network is not None and network.has_bmc_credentials
        else pgettext("BMC credentials", "none"),
        "listings": listings,
        # The deploy step's blockers from the registry every page asks (`builds.gates`), whatever the status.
        "missing": step_missing(name=DEPLOY, servers=[server])[server.pk],
        "is_pm": is_pm(request.user),
        "show_bench_link": has_bench(request.user),
        **bmc_handover_context(request, server),
        "address_offer": address_offer(server) if is_pm(request.user) else None,
    }
    return TemplateResponse(request, "deployment/server.html", context)


@require_POST
@login_required
def server_deploy_view(request: HttpRequest, server_id: int) -> HttpResponse:
    """POST (PMs): burn-in passed → deployed. A refusal shows what is missing, one message each."""
    server = _visible(Server.objects.all(), request.user, server_id)
    if not is_pm(request.user):
        raise PermissionDenied("Only project managers deploy servers.")
    try:
        server_deploy(server=server, actor=request.user, note=request.POST.get("note", "").strip())
    except RuleViolation as error:
        messages.error(request, f"{server.hostname} was not deployed.")
        for item in error.missing:
            messages.warning(request, item)
    except DomainError as error:
        messages.error(request, f"{server.hostname} was not deployed: {error.message}")
    else:
        messages.success(request, f"{server.hostname} is deployed.")
    return HttpResponseRedirect(reverse("deployment:server", args=[server.pk]))


# --- The rack page and placing from its elevation --------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """What the service said when it refused a placement, as the page shows it."""

    title: str
    message: str
    missing: list[str] = field(default_factory=list)
    code: str = ""


@login_required
def rack_page(request: HttpRequest, rack_id: int) -> HttpResponse:
    """A rack: its elevation, its feeds with their loads, and its placements; for a PM the placing form."""
    rack = _visible(Rack.objects.select_related("site"), request.user, rack_id)
    return _rack_response(request, rack)


def _rack_response(
    request: HttpRequest,
    rack: Rack,
    *,
    form: ElevationPlacementForm | None = None,
    refusal: Refusal | None = None,
    status: int = 200,
) -> HttpResponse:
    slots = selectors.elevation_slots(rack=rack, user=request.user)
    loads = selectors.feed_loads(rack=rack)
    visible_ids = {slot.server_id for slot in slots if slot.visible and slot.server_id is not None}
    pm = is_pm(request.user)
    context = {
        "rack": rack,
        "site": rack.site,
        "elevation": _elevation(
            rack, request.user, slots=slots, loads=loads, placing_face=RackFace.FRONT if pm else None
        ),
        "feeds": _feed_rows(loads, visible_ids),
        "slots": slots,
        "free_u": rack.height_u - sum(slot.height_u for slot in slots),
        "is_pm": pm,
        "placing": None,
        "phase_review": selectors.phase_review(loads) if pm else [],
    }
    if pm:
        if form is None:
            form = ElevationPlacementForm(rack=rack, rack_feeds=[load.feed for load in loads])
        q = (request.POST.get("q") if request.method == "POST" else request.GET.get("q")) or ""
        context["placing"] = {
            "form": form,
            "candidates": placing_candidates(rack=rack, q=q),
            "server": str(form["server"].value() or ""),
            "feed_rows": form.feed_rows(rack),
            "free_runs": [_span(low, top) for low, top in free_runs(rack=rack, slots=slots)],
            "refusal": refusal,
            # The reason counts only where a circuit would be over its limit: asked for after that refusal.
            "show_override": (refusal is not None and refusal.code == "circuit_limit")
            or bool(form["override_reason"].value()),
            "rear_elevation": _elevation(rack, request.user, slots=slots, placing_face=RackFace.REAR),
        }
    return TemplateResponse(request, "deployment/rack.html", context, status=status)


@require_POST
@login_required
def rack_place_view(request: HttpRequest, rack_id: int) -> HttpResponse:
    """POST (PMs): place a server into this rack. Success redirects to the rack page with a message."""
    rack = _visible(Rack.objects.select_related("site"), request.user, rack_id)
    if not is_pm(request.user):
        raise PermissionDenied("Only project managers place servers.")
    feeds = list(PowerFeed.objects.filter(rack=rack).order_by("name"))
    form = ElevationPlacementForm(request.POST, rack=rack, rack_feeds=feeds)
    if not form.is_valid():
        return _rack_response(request, rack, form=form, status=400)
    data = form.cleaned_data
    server = Server.objects.visible_to(request.user).filter(pk=data["server"]).first()
    if server is None:
        form.add_error("server", _("This server no longer exists: pick it again."))
        return _rack_response(request, rack, form=form, status=400)
    try:
        placement = placement_create(
            server=server,
            rack=rack,
            lowest_u=data["lowest_u"],
            face=data["face"],
            feeds=data["feeds"],
            phases=form.phases(),
            measured_wall_w=data["measured_wall_w"],
            override_reason=data["override_reason"],
            actor=request.user,
        )
    except DomainError as error:
        return _rack_response(
            request, rack, form=form, refusal=_refusal(error, server, form), status=error.status_code
        )
    if placement.face == RackFace.REAR:
        done = _("%(server)s is placed in rack %(rack)s at U%(lowest)s–U%(top)s, from the rear.")
    else:
        done = _("%(server)s is placed in rack %(rack)s at U%(lowest)s–U%(top)s, from the front.")
    where = {"lowest": placement.lowest_u, "top": placement.top_u}
    messages.success(request, done % {"server": server.hostname, "rack": rack.name, **where})
    return HttpResponseRedirect(reverse("deployment:rack", args=[rack.pk]))


def _span(low: int, top: int) -> str:
    return f"U{low}" if low == top else f"U{low}–U{top}"


def _refusal(error: DomainError, server: Server, form: ElevationPlacementForm) -> Refusal:
    """The service's refusal for the page; a bad value is also marked at its field."""
    title = _("%(server)s was not placed.") % {"server": server.hostname}
    if isinstance(error, InvalidInput):
        if error.field in form.fields:
            form.add_error(error.field, error.field_message)
        return Refusal(title=title, message=error.message)
    if isinstance(error, RuleViolation):
        missing = [] if error.missing == [error.message] else list(error.missing)
        return Refusal(title=title, message=error.message, missing=missing, code=error.code)
    return Refusal(title=title, message=error.message)


# --- The BMC credentials' hand-over (PMs) ----------------------------------------------------------------


def bmc_handover_context(request: HttpRequest, server: Server) -> dict[str, Any]:
    """The context of templates/deployment/_bmc_handover.html (for PMs; empty for anyone else)."""
    if not is_pm(request.user):
        return {"show_bmc_handover": False}
    reveals, rotated = selectors.bmc_handover(server=server)
    return {
        "show_bmc_handover": True,
        "bmc_reveals": reveals,
        "bmc_rotated": rotated,
        "bmc_rotate_url": reverse("deployment:bmc-rotate", args=[server.pk]),
    }


@sensitive_post_parameters("bmc_username", "bmc_password")
@require_POST
@login_required
def bmc_rotate_view(request: HttpRequest, server_id: int) -> HttpResponse:
    """POST (PMs): store new BMC credentials; the customer is told by e-mail once the server is handed
    over. Back to the server page (303) with a message that never repeats them."""
    server = Server.objects.visible_to(request.user).filter(pk=server_id).first()
    if server is None:
        raise Http404("Not found.")
    if not is_pm(request.user):
        raise PermissionDenied("Only project managers rotate BMC credentials.")
    try:
        bmc_credentials_rotate(
            server=server,
            actor=request.user,
            username=request.POST.get("bmc_username", ""),
            password=request.POST.get("bmc_password", ""),
        )
    except InvalidInput as error:
        if error.field == "username":
            text = _("The BMC credentials were not changed: enter the new username (at most 256 characters).")
        else:
            text = _("The BMC credentials were not changed: enter the new password (at most 256 characters).")
        messages.error(request, text)
    except RuleViolation as error:
        messages.error(
            request, _("The BMC credentials were not changed: %(reason)s") % {"reason": error.message}
        )
    else:
        messages.success(
            request, _("New BMC credentials of %(hostname)s are stored.") % {"hostname": server.hostname}
        )
    return HttpResponseRedirect(reverse("deployment:server", args=[server.pk]), status=303)


# --- IP prefixes and the NetBox export -------------------------------------------------------------------


@dataclass(frozen=True)
class PrefixRow:
    """A prefix as the site page lists it: how many of its host addresses servers use."""

    prefix: IPPrefix
    hosts: int
    used: int


def _host_count(prefix: IPPrefix) -> int:
    network = network_of(prefix)
    return network.num_addresses - (2 if network.version == 4 else 1)


def prefix_rows(site: Site) -> list[PrefixRow]:
    """The site's prefixes with their use: two queries."""
    prefixes = site_prefixes(site=site)
    used = used_addresses([network_of(prefix) for prefix in prefixes])
    rows = []
    for prefix in prefixes:
        network = network_of(prefix)
        rows.append(
            PrefixRow(
                prefix=prefix,
                hosts=_host_count(prefix),
                used=sum(1 for address in used if address in network),
            )
        )
    return rows


def site_prefix_context(site: Site, user: Any) -> dict[str, Any]:
    """What site.html reads: the prefixes, and for a PM the next free address of each role."""
    pm = is_pm(user)
    return {
        "prefix_rows": prefix_rows(site),
        "next_free": [(role.label, next_free_address(site=site, role=role)) for role in PrefixRole]
        if pm
        else [],
    }


@dataclass(frozen=True)
class AddressOffer:
    """The server page's offer (PMs): the next free management and BMC address of the server's site."""

    site: Site
    management: FreeAddress | None
    bmc: FreeAddress | None
    record_url: str


def address_offer(server: Server) -> AddressOffer | None:
    """For a placed server without a network record at a site with prefixes: the next free addresses and
    the admin's add form filled with them. None otherwise."""
    if ServerNetwork.objects.filter(server=server).exists():
        return None
    placement = RackPlacement.objects.select_related("rack__site").filter(server=server).first()
    if placement is None or not IPPrefix.objects.filter(site=placement.rack.site).exists():
        return None
    site = placement.rack.site
    management = next_free_address(site=site, role=PrefixRole.MANAGEMENT)
    bmc = next_free_address(site=site, role=PrefixRole.BMC)
    query: dict[str, Any] = {"server": server.pk}
    if management is not None:
        query["management_ip"] = management.address
    if bmc is not None:
        query["bmc_ip"] = bmc.address
    url = f"{reverse('admin:deployment_servernetwork_add')}?{urlencode(query)}"
    return AddressOffer(site=site, management=management, bmc=bmc, record_url=url)


def network_initial(query: Any) -> dict[str, str]:
    """The admin's network add form, opened for one server (`?server=<id>`): the next free management and
    BMC address of the server's site, where none was given in the address."""
    try:
        server_id = int(str(query.get("server", "")))
    except ValueError:
        return {}
    site = Site.objects.filter(racks__placements__server_id=server_id).first()
    if site is None:
        return {}
    initial = {}
    for name, role in (("management_ip", PrefixRole.MANAGEMENT), ("bmc_ip", PrefixRole.BMC)):
        if str(query.get(name, "")).strip():
            continue  # the admin fills the field from the address itself
        free = next_free_address(site=site, role=role)
        if free is not None:
            initial[name] = free.address
    return initial


def site_netbox_export(request: HttpRequest, site_id: int) -> HttpResponse:
    """GET (PMs): the site's racks, devices, interfaces, prefixes and IP addresses as NetBox import CSVs in
    one ZIP. Anyone else gets a 404."""
    if not is_pm(request.user):
        raise Http404("Not found.")
    site = Site.objects.filter(pk=site_id).first()
    if site is None:
        raise Http404("Not found.")
    response = HttpResponse(netbox_zip(netbox_tables(sites=[site])), content_type="application/zip")
    name = slugify(site.name) or f"site-{site.pk}"
    response["Content-Disposition"] = f'attachment; filename="netbox-{name}.zip"'
    return response
