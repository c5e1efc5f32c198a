"""Rack placement: a server into a U range of a rack, drawing from named power feeds.

Every placement into a rack runs under a lock on the rack row, on PostgreSQL and SQLite alike: the overlap
check, the height check and the circuit check see every placement committed before them, and two placements
into one rack queue. On PostgreSQL the exclusion constraint `deployment_rackplacement_no_overlap` (migration
0002) refuses an overlap whatever writes the rows.

Each feed link names the phase(s) of that feed the server's PSU group draws from (`PlacementFeed.phase`,
`deployment.phases`); the circuit check holds every chosen feed to its limit in all and on each phase, and
an A/B server counts in full on its phase of either side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

from builds.models import Server
from builds.services import lock_server
from deployment.choices import PLACEMENT_OPEN, RackFace, SiteKind
from deployment.models import PlacementFeed, PowerFeed, Rack, RackPlacement
from deployment.phases import DEFAULT_PHASE, phases_of
from deployment.selectors import FeedLoad, ServerPower, feed_loads, server_powers
from inventory.choices import PartCategory
from werkbank.access import is_pm
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.types import Actor

#: The name of the exclusion constraint that backs the overlap check on PostgreSQL.
NO_OVERLAP = "deployment_rackplacement_no_overlap"


def chassis_height(server: Server) -> int:
    """The server's height in U, from the chassis part of its configuration."""
    line = (
        server.order.configuration.lines.filter(
            part__category=PartCategory.CHASSIS, part__u_height__isnull=False
        )
        .select_related("part")
        .first()
    )
    if line is None or line.part.u_height is None:  # the filter leaves out parts without a height
        raise RuleViolation(
            f"Server {server.hostname}'s configuration {server.order.configuration.name} names no "
            "chassis with a height in U, so its place in a rack cannot be known.",
            missing=["a chassis part with its height (U) on the configuration"],
            code="no_chassis_height",
        )
    return line.part.u_height


def _in_the_way(rack: Rack, lowest: int, top: int, *, excluding: int | None = None) -> RackPlacement | None:
    """The first placement of the rack that shares a U with lowest..top."""
    overlapping = RackPlacement.objects.alias(top=F("lowest_u") + F("height_u") - 1).filter(
        rack=rack, lowest_u__lte=top, top__gte=lowest
    )
    if excluding is not None:
        overlapping = overlapping.exclude(server_id=excluding)
    return overlapping.select_related("server").order_by("lowest_u").first()


def _overlap_refusal(rack: Rack, lowest: int, top: int, other: RackPlacement) -> RuleViolation:
    return RuleViolation(
        f"U{lowest}–U{top} of rack {rack.name} overlaps server {other.server.hostname} at "
        f"U{other.lowest_u}–U{other.top_u}.",
        missing=[f"free U{lowest}–U{top} in rack {rack.name} (server {other.server.hostname} is in the way)"],
        code="placement_overlap",
    )


def _feeds(rack: Rack, feeds: Sequence[PowerFeed | int]) -> list[PowerFeed]:
    ids = [feed.pk if isinstance(feed, PowerFeed) else feed for feed in feeds]
    if not ids:
        raise InvalidInput("feeds", "a placement draws from at least one power feed of the rack.")
    found = {feed.pk: feed for feed in PowerFeed.objects.filter(pk__in=ids, rack=rack)}
    strangers = [feed_id for feed_id in dict.fromkeys(ids) if feed_id not in found]
    if strangers:
        raise InvalidInput("feeds", _strangers_refusal(rack, strangers))
    return [found[feed_id] for feed_id in dict.fromkeys(ids)]


def _strangers_refusal(rack: Rack, strangers: list[int]) -> str:
    """The refusal of feeds of other racks, named with their rack and site (never by id), and the rack's own
    feeds to choose from."""
    elsewhere = [
        f"{feed.name} (rack {feed.rack.name} at {feed.rack.site.name})"
        for feed in PowerFeed.objects.filter(pk__in=strangers)
        .select_related("rack__site")
        .order_by("rack__site__name", "rack__name", "name")
    ]
    unknown = len(strangers) - len(elsewhere)
    if unknown:
        elsewhere.append(
            "a feed that no longer exists" if unknown == 1 else f"{unknown} feeds that no longer exist"
        )
    named = elsewhere[0] if len(elsewhere) == 1 else f"{', '.join(elsewhere[:-1])} and {elsewhere[-1]}"
    verb = "is not a feed" if len(strangers) == 1 else "are not feeds"
    own = list(PowerFeed.objects.filter(rack=rack).order_by("name").values_list("name", flat=True))
    choose = f"its feeds are {', '.join(own)}" if own else "it has no feeds yet"
    return f"{named} {verb} of rack {rack.name} at {rack.site.name}: {choose}."


@transaction.atomic
def placement_create(
    *,
    server: Server,
    rack: Rack,
    lowest_u: int,
    feeds: Sequence[PowerFeed | int],
    actor: Actor,
    face: str = RackFace.FRONT,
    measured_wall_w: int | None = None,
    override_reason: str = "",
    phases: Mapping[int, str] | None = None,
) -> RackPlacement:
    """Put a server into a rack at `lowest_u`, drawing from `feeds`, on the phases `phases` names (feed id →
    `Phase` value; a feed left out draws from L1, which on a three-phase feed is recorded as assumed and
    listed for review).

    Refused: a server that is already placed or deployed (409), a U range above the rack's height (400),
    a phase the feed does not have or a phase for a feed not chosen (400 `phases`), an overlap (409 naming
    the server in the way), and a feed pushed above its continuous limit in all or on a phase (409 with the
    numbers), unless a PM overrides the last with a written reason, which is audited with the numbers.
    """
    locked_rack = (
        Rack.objects.select_for_update(of=("self",)).select_related("site__customer").get(pk=rack.pk)
    )
    locked = (
        Server.objects.select_for_update(of=("self",))
        .select_related("order__configuration", "order__customer")
        .get(pk=server.pk)
    )
    _check_open(locked)
    _check_room(locked_rack, locked)
    _check_values(face=face, lowest_u=lowest_u, measured_wall_w=measured_wall_w)
    height = chassis_height(locked)
    top = _top_within(locked_rack, locked=locked, lowest_u=lowest_u, height=height)
    chosen = _feeds(locked_rack, feeds)
    named = _phases(chosen, phases)
    other = _in_the_way(locked_rack, lowest_u, top)
    if other is not None:
        raise _overlap_refusal(locked_rack, lowest_u, top, other)

    loads, over, override_reason = _circuit_check(
        locked_rack,
        locked=locked,
        chosen=chosen,
        phases={feed_id: phase for feed_id, (phase, _) in named.items()},
        measured_wall_w=measured_wall_w,
        override_reason=override_reason,
        actor=actor,
    )

    try:
        with transaction.atomic():
            placement = RackPlacement.objects.create(
                server=locked,
                rack=locked_rack,
                lowest_u=lowest_u,
                height_u=height,
                face=face,
                measured_wall_w=measured_wall_w,
                power_override_reason=override_reason,
                placed_by=user_or_none(actor),
            )
    except IntegrityError as error:
        if NO_OVERLAP in str(error):
            other = _in_the_way(locked_rack, lowest_u, top, excluding=locked.pk)
            if other is not None:
                raise _overlap_refusal(locked_rack, lowest_u, top, other) from None
        raise
    # A new placement has no feeds yet: insert the links at once (`set()` would read them first).
    PlacementFeed.objects.bulk_create(
        PlacementFeed(
            rackplacement=placement,
            powerfeed=feed,
            phase=named[feed.pk][0],
            phase_assumed=named[feed.pk][1],
        )
        for feed in chosen
    )
    # The circuit check already worked out this server's wall power: every chosen feed lists it.
    power = next(each for each in loads[0].servers if each.server_id == locked.pk)
    audit(
        actor=actor,
        verb="deployment.place",
        obj=locked,
        after=_placement_after(
            locked_rack,
            lowest_u=lowest_u,
            top=top,
            face=face,
            chosen=chosen,
            phases=named,
            power=power,
            loads=loads,
            over=over,
        ),
        note=override_reason,
    )
    return placement


def _phases(chosen: list[PowerFeed], phases: Mapping[int, str] | None) -> dict[int, tuple[str, bool]]:
    """Per chosen feed id: (its phase, whether it was assumed). A feed left out draws from L1, assumed on a
    three-phase feed (nobody chose among its phases) and not on a single-phase one (L1 is all it has).
    A 400 (`phases`) for a key that is not a chosen feed, an unknown value, or a phase the feed lacks."""
    given = dict(phases or {})
    by_id = {feed.pk: feed for feed in chosen}
    for key in given:
        if isinstance(key, bool) or not isinstance(key, int) or key not in by_id:
            names = ", ".join(f"{feed.name} (id {feed.pk})" for feed in chosen)
            raise InvalidInput(
                "phases", f"{key!r} is not one of the chosen feeds; name phases for {names} only."
            )
    named: dict[int, tuple[str, bool]] = {}
    for feed in chosen:
        if feed.pk not in given:
            named[feed.pk] = (DEFAULT_PHASE, feed.phases > 1)
            continue
        named[feed.pk] = (_phase_of(feed, given[feed.pk]), False)
    return named


def _phase_of(feed: PowerFeed, value: Any) -> str:
    """`value` as a phase of `feed`; a 400 (`phases`) naming the feed and its phases where it is none."""
    allowed = phases_of(feed)
    if value not in allowed:
        if feed.phases == 1:
            rule = f"feed {feed.name} is single-phase: its only phase is L1"
        else:
            rule = f"feed {feed.name} has the phases {', '.join(allowed)}"
        raise InvalidInput("phases", f"{rule}; got {value!r}.")
    return str(value)


def _check_open(locked: Server) -> None:
    """Refuse a server whose placement is closed (deployed or later) or that is placed already (409)."""
    if locked.status not in PLACEMENT_OPEN:
        raise RuleViolation(
            f"Server {locked.hostname} is {locked.get_status_display().lower()}; its placement is part "
            "of the record and cannot change.",
            missing=["a server that is not deployed yet"],
            code="placement_closed",
        )
    existing = RackPlacement.objects.filter(server=locked).select_related("rack").first()
    if existing is not None:
        raise RuleViolation(
            f"Server {locked.hostname} is already placed in rack {existing.rack.name} at "
            f"U{existing.lowest_u}–U{existing.top_u}; remove that placement first.",
            missing=[f"no placement of server {locked.hostname}"],
            code="already_placed",
        )


def _check_room(locked_rack: Rack, locked: Server) -> None:
    """A customer's own room (a site owned by a customer, seed 001) takes only that customer's servers: a 409
    naming both customers."""
    site = locked_rack.site
    if site.kind != SiteKind.CUSTOMER_ROOM or site.customer_id == locked.order.customer_id:
        return
    owner = site.customer.name if site.customer is not None else "another customer"
    raise RuleViolation(
        f"Rack {locked_rack.name} stands in {site.name}, {owner}'s own room; server {locked.hostname} "
        f"belongs to {locked.order.customer.name}'s order {locked.order}.",
        missing=[f"a rack in a colocation or in {locked.order.customer.name}'s own room"],
        code="foreign_room",
    )


def _check_values(*, face: str, lowest_u: int, measured_wall_w: int | None) -> None:
    """Refuse a face, a lowest U or a measured wall power that is not one (400 naming the field)."""
    if face not in RackFace.values:
        raise InvalidInput("face", f"must be one of {', '.join(RackFace.values)}; got {face!r}.")
    if not isinstance(lowest_u, int) or isinstance(lowest_u, bool) or lowest_u < 1:
        raise InvalidInput("lowest_u", f"U positions count from 1; got {lowest_u!r}.")
    if measured_wall_w is not None and (
        not isinstance(measured_wall_w, int)
        or isinstance(measured_wall_w, bool)
        or not 1 <= measured_wall_w <= 100_000
    ):
        raise InvalidInput(
            "measured_wall_w", f"must be a whole number of watts from 1 to 100000; got {measured_wall_w!r}."
        )


def _top_within(locked_rack: Rack, *, locked: Server, lowest_u: int, height: int) -> int:
    """The top U of `height` U from `lowest_u`; a 400 where the server does not fit the rack."""
    top = lowest_u + height - 1
    if height > locked_rack.height_u:
        raise InvalidInput(
            "lowest_u",
            f"server {locked.hostname} is {height}U high, taller than the {locked_rack.height_u}U of rack "
            f"{locked_rack.name}.",
        )
    if top > locked_rack.height_u:
        raise InvalidInput(
            "lowest_u",
            f"server {locked.hostname} is {height}U high: from U{lowest_u} it would reach U{top}, above the "
            f"{locked_rack.height_u}U of rack {locked_rack.name} "
            f"(the highest start is U{locked_rack.height_u - height + 1}).",
        )
    return top


def _circuit_check(
    locked_rack: Rack,
    *,
    locked: Server,
    chosen: list[PowerFeed],
    phases: Mapping[int, str],
    measured_wall_w: int | None,
    override_reason: str,
    actor: Actor,
    excluding: int | None = None,
    verb: str = "Placing",
) -> tuple[list[FeedLoad], list[FeedLoad], str]:
    """The chosen feeds' loads with the server added on its phases, those over their continuous limit (in
    all or on a phase), and the override reason that stands (none where nothing is over). A feed over its
    limit is a 409 without a reason, and without a PM."""
    loads = [
        load
        for load in feed_loads(
            rack=locked_rack,
            adding=(locked, [feed.pk for feed in chosen], measured_wall_w),
            adding_phases=phases,
            excluding=excluding,
        )
        if load.feed.pk in {feed.pk for feed in chosen}
    ]
    over = [load for load in loads if not load.ok]
    override_reason = (override_reason or "").strip()
    if over and not override_reason:
        raise RuleViolation(
            f"{verb} server {locked.hostname} would overload {len(over)} circuit(s) of rack "
            f"{locked_rack.name}.",
            missing=[sentence for load in over for sentence in load.refusals()],
            code="circuit_limit",
        )
    if override_reason and not over:
        override_reason = ""  # nothing to override: keep no reason that explains nothing
    if over and not is_pm(actor):
        raise RuleViolation(
            "Only project managers may place a server above a circuit's continuous limit.",
            missing=["a project manager's override"],
            code="pm_only",
        )
    return loads, over, override_reason


def _placement_after(
    locked_rack: Rack,
    *,
    lowest_u: int,
    top: int,
    face: str,
    chosen: list[PowerFeed],
    phases: Mapping[int, tuple[str, bool]],
    power: ServerPower,
    loads: list[FeedLoad],
    over: list[FeedLoad],
) -> dict[str, Any]:
    """The audit row's `after` of a placement: where, the feeds and their phases, the wall power and each
    circuit's load (per phase on a three-phase feed)."""
    return {
        "rack": f"{locked_rack.site.name} / {locked_rack.name}",
        "lowest_u": lowest_u,
        "top_u": top,
        "face": face,
        "feeds": [feed.name for feed in chosen],
        "wall_w": round(power.wall_w),
        "wall_source": power.source,
        "circuits": {load.feed.name: _circuit_figures(load, phases[load.feed.pk]) for load in loads},
        "override": bool(over),
    }


def _circuit_figures(load: FeedLoad, phase: tuple[str, bool]) -> dict[str, Any]:
    """One circuit of a placement's audit row: the feed's figures and, on a three-phase feed, the phase the
    server draws from (and whether someone chose it, or it was left out: L1) with each phase's figures. A
    single-phase feed is its one phase: its figures say it all."""
    figures = load.figures()
    if load.feed.phases > 1:
        figures["phase"], figures["phase_chosen"] = phase[0], not phase[1]
    return figures


@transaction.atomic
def placement_set_phases(
    *,
    placement: RackPlacement,
    phases: Mapping[int, str],
    actor: Actor,
    override_reason: str = "",
) -> RackPlacement:
    """Record which phase(s) of each of its feeds a placed server draws from: a PM corrects a phase, or
    confirms one nobody chose (the links the migration set to L1, or a three-phase feed left out when
    placing). `phases` maps feed id → `Phase` value; a feed of the placement left out keeps its recorded
    phase. Every link of the placement is confirmed afterwards (`phase_assumed` cleared), audited as
    `deployment.phases` with the old phases and the new per-phase figures.

    Allowed after deploy too, unlike placing or removing: it moves no U and no feed, so the record the
    handover pack printed (rack, U range, feeds) stands; it only says which conductor the cable is plugged
    into, which the electrician reads off the PDU and which the migration could only assume. The circuit
    check is placing's (each feed in all and per phase, the server counted in full on either side of an A/B
    pair), with the same PM override and reason.
    """
    rack = Rack.objects.select_for_update(of=("self",)).select_related("site").get(pk=placement.rack_id)
    locked = lock_server(placement.server)
    current = RackPlacement.objects.filter(pk=placement.pk).first()
    if current is None:
        raise UnknownObject("placement", f"server {locked.hostname} has no placement any more.")
    links = list(current.feed_links.select_related("powerfeed").order_by("powerfeed__name"))
    feeds = [link.powerfeed for link in links]
    given = dict(phases)
    # A feed left out keeps its recorded phase, or L1 where the feed no longer has it (it lost phases).
    recorded = {
        link.powerfeed_id: link.phase if link.phase in phases_of(link.powerfeed) else DEFAULT_PHASE
        for link in links
    }
    wanted = _phases(feeds, {**recorded, **given})
    if not given and not any(link.phase_assumed for link in links):
        return current  # nothing to correct, nothing to confirm
    loads, over, override_reason = _circuit_check(
        rack,
        locked=locked,
        chosen=feeds,
        phases={feed_id: phase for feed_id, (phase, _) in wanted.items()},
        measured_wall_w=current.measured_wall_w,
        override_reason=override_reason,
        actor=actor,
        excluding=locked.pk,
        verb="Setting the phases of",
    )
    before = {link.powerfeed.name: link.phase for link in links}
    was_assumed = [link.powerfeed.name for link in links if link.phase_assumed]
    for link in links:
        link.phase, link.phase_assumed = wanted[link.powerfeed_id][0], False
    PlacementFeed.objects.bulk_update(links, ["phase", "phase_assumed"])
    if over:
        current.power_override_reason = override_reason
        current.save(update_fields=["power_override_reason"])
    power = server_powers([locked], measured={locked.pk: current.measured_wall_w})[locked.pk]
    audit(
        actor=actor,
        verb="deployment.phases",
        obj=locked,
        before={"phases": before, "not_chosen": was_assumed},
        after={
            "phases": {link.powerfeed.name: link.phase for link in links},
            "wall_w": round(power.wall_w),
            "wall_source": power.source,
            "circuits": {load.feed.name: load.figures() for load in loads},
            "override": bool(over),
        },
        note=override_reason,
    )
    return current


@transaction.atomic
def placement_remove(*, placement: RackPlacement, actor: Actor, reason: str = "") -> None:
    """Take a server that is not deployed yet out of its rack (a plan changed); audited on the server."""
    rack = Rack.objects.select_for_update(of=("self",)).get(pk=placement.rack_id)
    locked = lock_server(placement.server)
    if locked.status not in PLACEMENT_OPEN:
        raise RuleViolation(
            f"Server {locked.hostname} is {locked.get_status_display().lower()}; its placement is part "
            "of the record and cannot be removed.",
            missing=["a server that is not deployed yet"],
            code="placement_closed",
        )
    current = RackPlacement.objects.filter(pk=placement.pk).first()
    if current is None:
        raise UnknownObject("placement", f"server {locked.hostname} has no placement any more.")
    audit(
        actor=actor,
        verb="deployment.unplace",
        obj=locked,
        before={"rack": rack.name, "lowest_u": current.lowest_u, "top_u": current.top_u},
        note=(reason or "").strip(),
    )
    current.delete()
