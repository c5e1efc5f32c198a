"""Reads of the rack page's placing form (issue #28 item 2): the servers a PM may place, with their heights,
and the rack's free U runs.

A server is offered while it is not placed and its status keeps the placement open
(`deployment.choices.PLACEMENT_OPEN`). Its height is that of its configuration's chassis, read in the same
query with the rule of `deployment.services.placement.chassis_height` (the first chassis line with a height,
in the lines' order); a server without one is offered with no height, and the service refuses it naming the
configuration. In a customer's own room, the other customers' servers are offered apart and marked: the
service refuses them (409, `foreign_room`), and the page shows that refusal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import Case, IntegerField, OuterRef, Q, Subquery, Value, When

from builds.models import Server
from deployment.choices import PLACEMENT_OPEN, SiteKind
from deployment.models import Rack
from deployment.selectors import ElevationSlot
from inventory.choices import PartCategory
from orders.models import ConfigurationLine

#: At most this many servers are offered at once; a search narrows them (`q`).
CANDIDATE_LIMIT = 200


@dataclass(frozen=True)
class Candidate:
    """An unplaced server as the form offers it."""

    server_id: int
    hostname: str
    order: str
    customer: str
    status_label: str
    height_u: int | None
    #: Another customer's server while the rack stands in a customer's own room.
    foreign: bool


@dataclass(frozen=True)
class Candidates:
    """The servers offered, and whether more matched than are shown."""

    servers: list[Candidate]
    more: bool
    q: str

    @property
    def own(self) -> list[Candidate]:
        return [each for each in self.servers if not each.foreign]

    @property
    def foreign(self) -> list[Candidate]:
        return [each for each in self.servers if each.foreign]


def _chassis_height() -> Subquery:
    """The server's chassis height in U, with the rule of `chassis_height`: the first chassis line with a
    height, in the lines' order (by part MPN within the chassis category)."""
    lines = ConfigurationLine.objects.filter(
        configuration_id=OuterRef("order__configuration_id"),
        part__category=PartCategory.CHASSIS,
        part__u_height__isnull=False,
    ).order_by("part__mpn", "pk")
    return Subquery(lines.values("part__u_height")[:1])


def placing_candidates(*, rack: Rack, q: str = "", limit: int | None = None) -> Candidates:
    """The servers a PM may place into `rack`, by hostname; in a customer's room that customer's first.
    `q` narrows them by hostname, order reference or customer name."""
    limit = CANDIDATE_LIMIT if limit is None else limit
    site = rack.site
    room_of = site.customer_id if site.kind == SiteKind.CUSTOMER_ROOM else None
    servers = (
        Server.objects.filter(placement__isnull=True, status__in=PLACEMENT_OPEN)
        .select_related("order__customer")
        .annotate(chassis_u=_chassis_height())
    )
    q = q.strip()
    if q:
        servers = servers.filter(
            Q(hostname__icontains=q)
            | Q(order__reference__icontains=q)
            | Q(order__customer__name__icontains=q)
        )
    if room_of is not None:
        servers = servers.annotate(
            foreign_first=Case(
                When(order__customer_id=room_of, then=Value(0)), default=Value(1), output_field=IntegerField()
            )
        ).order_by("foreign_first", "hostname")
    else:
        servers = servers.order_by("hostname")
    found = list(servers[: limit + 1])
    return Candidates(
        servers=[
            Candidate(
                server_id=server.pk,
                hostname=server.hostname,
                order=str(server.order),
                customer=server.order.customer.name,
                status_label=server.get_status_display(),
                height_u=server.chassis_u,
                foreign=room_of is not None and server.order.customer_id != room_of,
            )
            for server in found[:limit]
        ],
        more=len(found) > limit,
        q=q,
    )


def free_runs(*, rack: Rack, slots: Sequence[ElevationSlot]) -> list[tuple[int, int]]:
    """The rack's runs of free U, lowest first, as (lowest, top). A server blocks its U range from both
    faces (GPU servers are full depth), so the runs are the same from the front and the rear."""
    used = {u for slot in slots for u in range(slot.lowest_u, slot.top_u + 1)}
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for u in range(1, rack.height_u + 2):
        if u <= rack.height_u and u not in used:
            start = u if start is None else start
        elif start is not None:
            runs.append((start, u - 1))
            start = None
    return runs
