"""Build reads for the bench pages: the partner's builds, a server's connector map, its steps and blacklist.

Each selector runs a fixed number of queries, whatever the number of servers, connectors or steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from django.db.models import Count, IntegerField, OuterRef, Prefetch, Q, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce, Upper
from django.urls import reverse

from builds.choices import BENCH_OPEN
from builds.filters import search_servers
from builds.models import (
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    ChecklistItem,
    Connector,
    ConnectorBlacklist,
    Installation,
    Server,
)
from inventory.choices import PartCategory
from orders.models import ConfigurationLine
from werkbank.access import Purpose, is_pm
from werkbank.choices import OrganizationKind
from werkbank.models import member_organizations
from werkbank.types import Actor

#: Width of the connector map when the chassis has no layout (ChassisLayout.columns defaults to 8 too).
DEFAULT_COLUMNS = 8


def has_bench(user: Actor) -> bool:
    """PMs and members of an assembly partner have a bench; customers and outsiders do not."""
    if is_pm(user):
        return True
    if user is None or not user.is_authenticated or not user.is_active:
        return False
    return member_organizations(user, kind=OrganizationKind.PARTNER).exists()


def _count(queryset: QuerySet) -> Coalesce:
    # A correlated subquery per figure: joining installations, lines and blacklist rows in one query
    # would multiply the counts by each other.
    counted = queryset.order_by().values("server").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def bench_servers(user: Actor, *, q: str = "", status: str = "") -> QuerySet:
    """The builds on the user's bench with their progress, in one query, optionally searched and filtered.

    `q` searches hostname, asset tag, chassis serial, order reference and installed serials
    (builds.filters.search_servers, as the API's `q`); `status` keeps one server status.
    `installed`: components in a connector now; `bom_total`: units on the configuration's bill of
    materials; `blacklisted`: connectors that stay unused for the machine's life. The counts are
    correlated subqueries, so the database computes them only for the rows of the page that is read.
    """
    bom_total = (
        ConfigurationLine.objects.filter(configuration=OuterRef("order__configuration_id"))
        .order_by()
        .values("configuration")
        .annotate(total=Sum("quantity"))
        .values("total")
    )
    servers: QuerySet[Server] = Server.objects.visible_to(user, purpose=Purpose.BENCH)
    if status:
        servers = servers.filter(status=status)
    servers = search_servers(servers, q)
    return (
        servers.select_related("order__customer", "partner")
        .annotate(
            installed=_count(Installation.objects.active().filter(server=OuterRef("pk"))),
            blacklisted=_count(Connector.objects.filter(server=OuterRef("pk"), blacklist__isnull=False)),
            bom_total=Coalesce(Subquery(bom_total, output_field=IntegerField()), Value(0)),
        )
        .order_by("order__reference", "sequence")
    )


def bench_servers_named(user: Actor, value: str) -> QuerySet[Server]:
    """The servers on the user's bench whose asset tag or hostname is exactly `value`, in any letter case
    (compared as UPPER(), which the search's indexes serve). The bench's scan and the global search both
    ask this."""
    key = (value or "").strip().upper()
    return (
        Server.objects.visible_to(user, purpose=Purpose.BENCH)
        .alias(hostname_key=Upper("hostname"), asset_tag_key=Upper("asset_tag"))
        .filter(Q(hostname_key=key) | Q(asset_tag_key=key))
    )


def bench_exact_server(user: Actor, value: str) -> Server | None:
    """The one server on the user's bench whose asset tag or hostname is exactly `value` (any letter case),
    for a scanned tag that opens the server directly; None when none or several match."""
    if not (value or "").strip():
        return None
    found = list(bench_servers_named(user, value).only("pk")[:2])
    return found[0] if len(found) == 1 else None


def servers_with_progress() -> QuerySet:
    """Servers with their order and partner and the counts of the progress columns, in one query."""
    return Server.objects.select_related("order", "partner").annotate(
        connector_count=_count(Connector.objects.filter(server=OuterRef("pk"))),
        installed_count=_count(Installation.objects.active().filter(server=OuterRef("pk"))),
        blacklisted_count=_count(Connector.objects.filter(server=OuterRef("pk"), blacklist__isnull=False)),
    )


def bench_server(user: Actor, pk: int) -> Server | None:
    """One server on the user's bench, or None (the view answers 404)."""
    return (
        Server.objects.visible_to(user, purpose=Purpose.BENCH)
        .select_related("order__customer", "order__configuration", "partner")
        .filter(pk=pk)
        .first()
    )


def layout_columns(server: Server, *, default: int | None = DEFAULT_COLUMNS) -> int | None:
    """How many cells wide the connector map is: the chassis layout's `columns` (`default` without one)."""
    columns = (
        ChassisLayout.objects.filter(
            chassis__configuration_lines__configuration_id=server.order.configuration_id,
            chassis__category=PartCategory.CHASSIS,
        )
        .values_list("columns", flat=True)
        .first()
    )
    return columns or default


ConnectorState = Literal["free", "occupied", "blacklisted"]


@dataclass(frozen=True, slots=True)
class ConnectorCell:
    """One connector of a server's map: the connector, what is in it now, and its blacklist entry.

    `state` is `blacklisted` whenever the connector is blacklisted, even while it still holds a component
    (which `assembly_gaps` reports): that cell keeps its serial. `serial`, `part_mpn` and `blacklist_reason`
    are "" where there is nothing to name, so that pages and the pack print them without a None check.
    """

    id: int
    name: str
    kind: str
    kind_label: str
    position: int
    numa_node: int | None
    pcie_gen: int | None
    pcie_lanes: int | None
    cooling_block: str
    state: ConnectorState
    installation_id: int | None
    serial: str
    part_mpn: str
    blacklist_reason: str
    blacklisted_at: datetime | None


def connector_map(server: Server) -> list[ConnectorCell]:
    """Every connector of the server in map order, with what is in it and whether it is blacklisted.
    Two queries."""
    connectors = list(
        Connector.objects.filter(server=server).select_related("blacklist").order_by("position")
    )
    installed = Installation.objects.active().filter(server=server).select_related("component__part")
    active = {installation.connector_id: installation for installation in installed}
    cells = []
    for connector in connectors:
        blacklist: ConnectorBlacklist | None = getattr(connector, "blacklist", None)
        installation = active.get(connector.pk)
        component = installation.component if installation else None
        state: ConnectorState
        if blacklist is not None:
            state = "blacklisted"
        elif installation is not None:
            state = "occupied"
        else:
            state = "free"
        cells.append(
            ConnectorCell(
                id=connector.pk,
                name=connector.name,
                kind=connector.kind,
                kind_label=connector.get_kind_display(),
                position=connector.position,
                numa_node=connector.numa_node,
                pcie_gen=connector.pcie_gen,
                pcie_lanes=connector.pcie_lanes,
                cooling_block=connector.cooling_block,
                state=state,
                installation_id=installation.pk if installation else None,
                serial=component.serial if component else "",
                part_mpn=component.part.mpn if component else "",
                blacklist_reason=blacklist.reason if blacklist else "",
                blacklisted_at=blacklist.created_at if blacklist else None,
            )
        )
    return cells


def connector_kind(server: Server, name: str) -> str:
    """The kind of the server's connector of this name (any letter case, as the services read it), or ""."""
    kind = (
        Connector.objects.filter(server=server, name__iexact=(name or "").strip())
        .values_list("kind", flat=True)
        .first()
    )
    return kind or ""


def free_connectors(cells: Sequence[ConnectorCell]) -> list[ConnectorCell]:
    """The connectors a component can go into now: neither occupied nor blacklisted."""
    return [cell for cell in cells if cell.state == "free"]


def next_free_connector(cells: Sequence[ConnectorCell], after: str) -> str:
    """The next free connector of the same kind after `after`, for scanning cards in slot order."""
    current = next((cell for cell in cells if cell.name.lower() == after.lower()), None)
    if current is None:
        return ""
    for cell in cells:
        if cell.state == "free" and cell.kind == current.kind and cell.position > current.position:
            return cell.name
    return ""


def blacklist_entries(server: Server) -> QuerySet:
    """The server's blacklisted connectors, with who blacklisted them and the photo, in one query."""
    return (
        ConnectorBlacklist.objects.filter(connector__server=server)
        .select_related("connector", "created_by", "photo")
        .order_by("connector__position")
    )


def step_entries(server: Server) -> QuerySet:
    """The server's logged build steps, newest first, with their actor and photos (two queries)."""
    return (
        BuildStep.objects.filter(server=server)
        .select_related("actor")
        .prefetch_related(Prefetch("photos", queryset=BuildPhoto.objects.order_by("pk")))
        .order_by("-created_at", "-pk")
    )


def checklist_kinds(server: Server) -> set[str]:
    """The step kinds on the checklist of the server's configuration (one query)."""
    return set(
        ChecklistItem.objects.filter(configuration_id=server.order.configuration_id).values_list(
            "kind", flat=True
        )
    )


def logged_step_kinds(server: Server) -> set[str]:
    """The step kinds logged for the server so far (one query)."""
    return set(BuildStep.objects.filter(server=server).values_list("kind", flat=True))


def photo_download_url(photo_id: int) -> str:
    """Photos are served only after an access check, by the API's download route (session auth works)."""
    return reverse("build-photo-download", args=[photo_id])


def bench_is_open(server: Server) -> bool:
    """Whether the partner may still change what is installed."""
    return server.status in BENCH_OPEN
