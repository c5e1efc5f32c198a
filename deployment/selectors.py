"""Deployment reads: each placed server's wall power and each circuit's load, the deploy checks, and what a
viewer may see of a rack.

Wall power of one server, in this order (`ServerPower.source`):

1. ``measured``: measured at the outlet under full load and recorded on the placement (seed 003: ~2.9 kW at
   the socket);
2. ``burn_in``: the GPUs' mean board power in the burn-in that passed, plus the host overhead (the TDP of
   every part of the configuration that is not a GPU: CPUs, DIMMs, drives), divided by the PSU efficiency
   (the board and part figures are DC; the circuit carries AC);
3. ``budget``: the configuration's budget, the sum of every part's TDP divided by the PSU efficiency (the
   figure the approval gate checked, `orders.selectors.order_power_budget`).

A circuit (power feed) carries the full wall power of every server that uses it: a server on an A and a B
feed must keep running when either side fails, so each side must hold all of it, on the phase(s) its link to
that side names (A/B failover per phase). The continuous limit is 0.8 × V × A × phases per feed
(`PowerFeed.continuous_limit_w`) and 0.8 × V × A per phase (`deployment.phases`): a feed holds when both do.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db.models import F, Q, Sum
from django.utils.translation import gettext, gettext_lazy, ngettext

from builds.choices import ServerStatus, status_in_sentence
from builds.models import Server
from deployment.choices import DEPLOYED_OR_LATER
from deployment.models import PlacementFeed, PlatformListing, PowerFeed, Rack, RackPlacement, ServerNetwork
from deployment.phases import (
    DEFAULT_PHASE,
    PhaseLoad,
    imbalance_percent,
    load_figures,
    load_values,
    split_loads,
)
from inventory.choices import PartCategory
from orders.models import ConfigurationLine
from werkbank.models import AuditEvent
from werkbank.types import Actor

SOURCE_LABELS = {
    "measured": gettext_lazy("measured at the outlet"),
    "burn_in": gettext_lazy("burn-in GPU power + host overhead"),
    "budget": gettext_lazy("configuration budget (TDP)"),
}


@dataclass(frozen=True)
class ServerPower:
    """One server's wall power (W) and where the figure comes from."""

    server_id: int
    hostname: str
    wall_w: float
    source: str

    @property
    def source_label(self) -> str:
        return str(SOURCE_LABELS[self.source])


@dataclass
class FeedLoad:
    """One circuit: what its servers draw against its continuous limit and its rating, in all and per phase.
    `links` maps each server's id to the phase its link names, `assumed` the servers whose phase nobody
    chose (listed for review)."""

    feed: PowerFeed
    servers: list[ServerPower] = field(default_factory=list)
    links: dict[int, str] = field(default_factory=dict)
    assumed: set[int] = field(default_factory=set)

    @property
    def phase_loads(self) -> list[PhaseLoad]:
        """Each line of the feed with its servers' shares (one for a single-phase feed)."""
        return split_loads(self.feed, self.servers, self.links)

    @property
    def imbalance_percent(self) -> float | None:
        """(highest − lowest phase) / mean, in percent, for a three-phase feed that carries anything."""
        return imbalance_percent(self.phase_loads)

    def phase_of(self, server_id: int) -> str:
        """The phase value the link of server `server_id` to this feed names."""
        return self.links.get(server_id, DEFAULT_PHASE)

    @property
    def pool_ok(self) -> bool:
        """The feed's total holds its continuous limit (0.8 × V × A × phases)."""
        return self.load_w <= self.limit_w

    @property
    def phases_over(self) -> list[PhaseLoad]:
        return [load for load in self.phase_loads if not load.ok]

    @property
    def load_w(self) -> float:
        return sum(server.wall_w for server in self.servers)

    @property
    def limit_w(self) -> float:
        return self.feed.continuous_limit_w

    @property
    def rated_w(self) -> int:
        return self.feed.rated_w

    @property
    def margin_w(self) -> float:
        return self.limit_w - self.load_w

    @property
    def percent_of_limit(self) -> float:
        return self.load_w / self.limit_w * 100 if self.limit_w else 0.0

    @property
    def percent_of_rated(self) -> float:
        return self.load_w / self.rated_w * 100 if self.rated_w else 0.0

    @property
    def ok(self) -> bool:
        """The feed holds in all and on every phase."""
        return self.pool_ok and not self.phases_over

    def refusals(self) -> list[str]:
        """Why the feed does not hold, one sentence each: the feed in all where its total is over (no split
        over its phases could hold that), else each phase over its limit. Empty where it holds."""
        if not self.pool_ok:
            return [self._pool_sentence()]
        return [load.sentence() for load in self.phases_over]

    def figures(self) -> dict[str, object]:
        """The feed's figures for an audit row: in all, and per phase for a three-phase feed."""
        figures: dict[str, object] = {**load_figures(self)}
        if self.feed.phases > 1:
            figures["phases"] = {load.line: load.figures() for load in self.phase_loads}
            imbalance = self.imbalance_percent
            figures["imbalance_percent"] = None if imbalance is None else round(imbalance, 1)
        return figures

    def sentence(self) -> str:
        """The feed's load in words, in the active language (the API's is always English): what it carries
        where it holds, else its refusals."""
        return self._pool_sentence() if self.ok else " ".join(self.refusals())

    def _pool_sentence(self) -> str:
        values = {**load_values(self), "phases": self.feed.phases}
        if self.pool_ok:
            return (
                gettext(
                    "Feed %(feed)s carries %(load)s W of its %(limit)s W continuous limit (%(percent)s %%)."
                )
                % values
            )
        return (
            ngettext(
                "Feed %(feed)s (%(volts)s V × %(amps)s A × %(phases)s phase) would carry %(load)s W against "
                "its continuous limit of %(limit)s W (%(factor)s × %(rated)s W): %(percent)s %% of the "
                "limit, %(over)s W over.",
                "Feed %(feed)s (%(volts)s V × %(amps)s A × %(phases)s phases) would carry %(load)s W against "
                "its continuous limit of %(limit)s W (%(factor)s × %(rated)s W): %(percent)s %% of the "
                "limit, %(over)s W over.",
                self.feed.phases,
            )
            % values
        )


def _configuration_loads(configuration_ids: Iterable[int]) -> dict[int, tuple[float, float]]:
    """Per configuration: (the TDP of its GPUs, the TDP of everything else), in W, one query."""
    loads: dict[int, list[float]] = defaultdict(lambda: [0.0, 0.0])
    rows = (
        ConfigurationLine.objects.filter(
            configuration_id__in=set(configuration_ids), part__tdp_w__isnull=False
        )
        .values("configuration_id")
        .annotate(
            gpu=Sum(F("part__tdp_w") * F("quantity"), filter=Q(part__category=PartCategory.GPU)),
            total=Sum(F("part__tdp_w") * F("quantity")),
        )
    )
    for row in rows:
        gpu = float(row["gpu"] or 0)
        loads[row["configuration_id"]] = [gpu, float(row["total"] or 0) - gpu]
    return {key: (gpu, host) for key, (gpu, host) in loads.items()}


def server_powers(
    servers: Iterable[Server], *, measured: dict[int, int | None] | None = None
) -> dict[int, ServerPower]:
    """Wall power of each server (see the module docstring), keyed by server id. `measured` maps a server
    id to its measured wall power, when the caller has it (a placement's, or one being recorded)."""
    servers = list(servers)
    measured = measured or {}
    efficiency = settings.WERKBANK_PSU_EFFICIENCY
    loads = _configuration_loads(server.order.configuration_id for server in servers)
    result = {}
    for server in servers:
        gpu_tdp, host = loads.get(server.order.configuration_id, (0.0, 0.0))
        outlet = measured.get(server.pk)
        if outlet is not None:
            wall, source = float(outlet), "measured"
        elif server.burnin_gpu_power_w is not None:
            wall, source = (server.burnin_gpu_power_w + host) / efficiency, "burn_in"
        else:
            wall, source = (gpu_tdp + host) / efficiency, "budget"
        result[server.pk] = ServerPower(
            server_id=server.pk, hostname=server.hostname, wall_w=wall, source=source
        )
    return result


def feed_loads(
    *,
    rack: Rack,
    adding: tuple[Server, list[int], int | None] | None = None,
    adding_phases: Mapping[int, str] | None = None,
    excluding: int | None = None,
) -> list[FeedLoad]:
    """Every feed of the rack with the servers it carries and the phase each draws from. `adding` = (server,
    feed ids, measured W) counts a placement not saved yet, on the phases `adding_phases` names (feed id →
    phase value; L1 where it names none); `excluding` leaves a server out (the one being re-placed)."""
    feeds = list(PowerFeed.objects.filter(rack=rack).order_by("name"))
    through = (
        PlacementFeed.objects.filter(powerfeed__rack=rack)
        .select_related("rackplacement__server__order")
        .only(
            "powerfeed_id",
            "phase",
            "phase_assumed",
            "rackplacement__measured_wall_w",
            "rackplacement__server__hostname",
            "rackplacement__server__burnin_gpu_power_w",
            "rackplacement__server__order__configuration_id",
        )
    )
    # (feed id, server, measured W, phase, assumed)
    uses: list[tuple[int, Server, int | None, str, bool]] = [
        (
            row.powerfeed_id,
            row.rackplacement.server,
            row.rackplacement.measured_wall_w,
            row.phase,
            row.phase_assumed,
        )
        for row in through
        if row.rackplacement.server_id != excluding
    ]
    if adding is not None:
        server, feed_ids, outlet = adding
        chosen = adding_phases or {}
        uses += [(feed_id, server, outlet, chosen.get(feed_id, DEFAULT_PHASE), False) for feed_id in feed_ids]
    powers = server_powers(
        {use[1].pk: use[1] for use in uses}.values(), measured={use[1].pk: use[2] for use in uses}
    )
    by_feed = {feed.pk: FeedLoad(feed=feed) for feed in feeds}
    for feed_id, server, _, phase, assumed in uses:
        load = by_feed.get(feed_id)
        if load is not None:
            load.servers.append(powers[server.pk])
            load.links[server.pk] = phase
            if assumed:
                load.assumed.add(server.pk)
    for load in by_feed.values():
        load.servers.sort(key=lambda power: power.hostname)
    return [by_feed[feed.pk] for feed in feeds]


@dataclass(frozen=True)
class PhaseReview:
    """A placed server with a feed link whose phase nobody chose (`PlacementFeed.phase_assumed`)."""

    server_id: int
    hostname: str
    links: list[tuple[str, str, bool]]  # (feed name, phase, assumed), by feed name

    @property
    def assumed_feeds(self) -> list[str]:
        return [name for name, _, assumed in self.links if assumed]


def phase_review(loads: Sequence[FeedLoad]) -> list[PhaseReview]:
    """The servers of a rack's `loads` (`feed_loads(rack=)`, no further query) with a link whose phase was
    assumed, not chosen: by the migration of before phases were recorded (L1), or left out on a three-phase
    feed. For PMs, who confirm or correct them (`placement_set_phases`)."""
    links: dict[int, list[tuple[str, str, bool]]] = defaultdict(list)
    hostnames: dict[int, str] = {}
    for load in loads:
        for power in load.servers:
            links[power.server_id].append(
                (load.feed.name, load.phase_of(power.server_id), power.server_id in load.assumed)
            )
            hostnames[power.server_id] = power.hostname
    return [
        PhaseReview(server_id=server_id, hostname=hostnames[server_id], links=sorted(links[server_id]))
        for server_id in sorted(links, key=lambda server_id: hostnames[server_id])
        if any(assumed for _, _, assumed in links[server_id])
    ]


def deploy_missing(*, server: Server) -> list[str]:
    """What keeps a server from being deployed, as sentences: burn-in passed, a placement, the network."""
    return deploy_missing_many(servers=[server])[server.pk]


def deploy_missing_many(*, servers: Sequence[Server]) -> dict[int, list[str]]:
    """`deploy_missing` of many servers, `{server id: sentences}`, in two queries however many there are."""
    ids = [server.pk for server in servers]
    placed = set(RackPlacement.objects.filter(server_id__in=ids).values_list("server_id", flat=True))
    networked = set(ServerNetwork.objects.filter(server_id__in=ids).values_list("server_id", flat=True))
    answer: dict[int, list[str]] = {}
    for server in servers:
        missing = answer[server.pk] = []
        if server.status in DEPLOYED_OR_LATER:
            continue
        if server.status != ServerStatus.BURN_IN_PASSED:
            missing.append(
                gettext("Server %(hostname)s is %(status)s; it must pass burn-in first.")
                % {"hostname": server.hostname, "status": status_in_sentence(server.status)}
            )
        if server.pk not in placed:
            missing.append(
                gettext("Server %(hostname)s has no rack placement.") % {"hostname": server.hostname}
            )
        if server.pk not in networked:
            missing.append(
                gettext("Server %(hostname)s has no network record (management IP, BMC IP and BMC MAC).")
                % {"hostname": server.hostname}
            )
    return answer


def current_listing(*, server: Server) -> PlatformListing | None:
    """The latest recorded platform listing of a server (the history is every row)."""
    return PlatformListing.objects.filter(server=server, is_current=True).first()


@dataclass(frozen=True)
class ElevationSlot:
    """One placement as a viewer sees it: named when the viewer may see its server, else just occupied."""

    lowest_u: int
    height_u: int
    visible: bool
    hostname: str = ""
    status: str = ""
    status_label: str = ""
    asset_tag: str = ""
    server_id: int | None = None

    @property
    def top_u(self) -> int:
        return self.lowest_u + self.height_u - 1


def elevation_slots(*, rack: Rack, user: Actor) -> list[ElevationSlot]:
    """The rack's placements for `user`: the servers they may see by name and status, others as occupied."""
    visible = set(Server.objects.visible_to(user).filter(placement__rack=rack).values_list("pk", flat=True))
    slots = []
    for placement in RackPlacement.objects.filter(rack=rack).select_related("server").order_by("-lowest_u"):
        server = placement.server
        if server.pk in visible:
            slots.append(
                ElevationSlot(
                    lowest_u=placement.lowest_u,
                    height_u=placement.height_u,
                    visible=True,
                    hostname=server.hostname,
                    status=server.status,
                    status_label=server.get_status_display(),
                    asset_tag=server.asset_tag,
                    server_id=server.pk,
                )
            )
        else:
            slots.append(
                ElevationSlot(lowest_u=placement.lowest_u, height_u=placement.height_u, visible=False)
            )
    return slots


@dataclass(frozen=True)
class BmcEvent:
    """One reveal or rotation of a server's BMC credentials, from its audit row: who, when, from where."""

    user: str
    at: datetime
    ip: str


def bmc_handover(*, server: Server) -> tuple[list[BmcEvent], BmcEvent | None]:
    """The server's BMC credential reveals (oldest first) and its last rotation, from the audit rows of
    `deployment.services.credentials` (one query)."""
    rows = (
        AuditEvent.objects.filter(
            content_type=ContentType.objects.get_for_model(Server),
            object_id=str(server.pk),
            verb__in=("deployment.bmc_reveal", "deployment.bmc_rotate"),
        )
        .select_related("actor")
        .order_by("created_at", "pk")
    )
    reveals: list[BmcEvent] = []
    rotated: BmcEvent | None = None
    for row in rows:
        user = row.actor.get_username() if row.actor else ""
        event = BmcEvent(user=row.after.get("user", user), at=row.created_at, ip=row.after.get("ip", ""))
        if row.verb == "deployment.bmc_reveal":
            reveals.append(event)
        else:
            rotated = event
    return reveals, rotated
