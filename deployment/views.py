"""Deployment pages (/deployment/): a rack with its elevation and feeds, a site with its racks side by side,
and a server's placement, network, platform listings and deploy checks.

Whoever may see an object through `visible_to(user, VIEW)` may see its page; anyone else gets a 404. In a
rack, servers the viewer may not see appear only as "occupied": no hostname, status, asset tag or link. BMC
credentials are never read here: a page says only whether they are stored. Views stay thin: reads come from
deployment.selectors, the SVG from deployment.elevation, the one write (deploy) from the service.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from django.views.decorators.http import require_POST

from builds.gates import step_missing
from builds.models import Server
from builds.selectors import has_bench
from deployment import selectors
from deployment.elevation import feed_caption, rack_elevation_svg
from deployment.gates import DEPLOY
from deployment.models import PlatformListing, Rack, RackPlacement, ServerNetwork, Site
from deployment.services import server_deploy
from werkbank.access import is_pm
from werkbank.errors import DomainError, RuleViolation


@dataclass(frozen=True)
class FeedRow:
    """One feed as a page shows it: the caption, the load, and its servers (hidden ones unnamed)."""

    load: selectors.FeedLoad
    caption: str
    servers: list[dict[str, Any]]


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
            }
            for power in load.servers
        ]
        rows.append(FeedRow(load=load, caption=feed_caption(load), servers=servers))
    return rows


def _visible(queryset: Any, user: Any, pk: int) -> Any:
    found = queryset.visible_to(user).filter(pk=pk).first()
    if found is None:
        raise Http404("Not found.")
    return found


@login_required
def rack_page(request: HttpRequest, rack_id: int) -> HttpResponse:
    """A rack: its elevation, its feeds with their loads, and its placements."""
    rack = _visible(Rack.objects.select_related("site"), request.user, rack_id)
    slots = selectors.elevation_slots(rack=rack, user=request.user)
    loads = selectors.feed_loads(rack=rack)
    visible_ids = {slot.server_id for slot in slots if slot.visible}
    context = {
        "rack": rack,
        "site": rack.site,
        "elevation": _elevation(rack, request.user, slots=slots, loads=loads),
        "feeds": _feed_rows(loads, visible_ids),
        "slots": slots,
        "free_u": rack.height_u - sum(slot.height_u for slot in slots),
        "is_pm": is_pm(request.user),
    }
    return TemplateResponse(request, "deployment/rack.html", context)


@login_required
def site_page(request: HttpRequest, site_id: int) -> HttpResponse:
    """A site: its details and the elevations of the racks the user may see, side by side."""
    site = _visible(Site.objects.select_related("customer"), request.user, site_id)
    racks = Rack.objects.visible_to(request.user).filter(site=site).order_by("name")
    context = {
        "site": site,
        "racks": [(rack, _elevation(rack, request.user)) for rack in racks],
        "is_pm": is_pm(request.user),
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
