"""The global search of the PM pages (`/pm/search/`): one box that finds an order, a server, a serial, a lot,
a purchase order or a supplier, for PMs, and for partners' members within what they may see.

Every read starts from `visible_to(user, ...)` of the model's own app, so a partner finds only the servers on
its bench (purpose "bench": the page it can open), the components and lots delivered to its workshop or held
there, and the purchase orders delivered to it. Orders and suppliers are never a partner's (their querysets
give members none). Customers do not search here: the view answers them 404.

Two steps:

1. **Exact.** The query is compared with each kind's identifier in upper case (order reference, hostname,
   asset tag, serial in its normal form (inventory.serials), lot code, PO number, supplier name), each by a
   B-tree index (portal/migrations/0001_search_indexes.py: they stay in the portal's migration, where
   databases have them recorded from before the search moved to pm): a serial among 100,000 components is
   one index lookup. When exactly one object matches, the view goes straight to it.
2. **Partial.** Otherwise each kind lists the rows whose identifiers contain the query (`icontains`, served
   on PostgreSQL by the trigram indexes of the same migration; SQLite scans, fine at demo size), at most
   `PER_KIND` per kind, ordered by the identifier. A trigram needs three characters, so shorter queries look
   for exact matches only. Supplier names also match by trigram similarity on PostgreSQL when nothing
   contains the query (a misspelt name still finds its supplier).

Each step runs a fixed number of queries, however many rows match (one per kind, and one for the servers of
the listed serials).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.postgres.search import TrigramSimilarity
from django.db import connection
from django.db.models import F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Upper
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from builds.choices import ServerStatus
from builds.models import Allocation, Installation, Server
from builds.selectors import bench_servers_named, has_bench
from inventory.choices import ComponentStatus, PurchaseOrderStatus
from inventory.models import BatchLot, Component, PurchaseOrder, Supplier
from inventory.serials import normalize_serial
from orders.choices import OrderStatus
from orders.models import Order
from werkbank.access import Purpose, is_pm
from werkbank.choices import label_of
from werkbank.errors import InvalidInput

#: The longest query accepted (longer is a 400 naming the field): the longest identifier searched is a
#: supplier's name (200 characters in the model), but nobody types that; a serial is at most 64.
MAX_QUERY_LENGTH = 100
#: Rows listed per kind; more are counted as "more" without being fetched.
PER_KIND = 20
#: Partial matches need a trigram's worth of characters (shorter: exact matches only).
MIN_PARTIAL_LENGTH = 3
#: Trigram similarity a supplier's name needs to match a misspelt query (pg_trgm's default is 0.3).
SUPPLIER_SIMILARITY = 0.3

#: The kinds in the order the results page lists them, with their headings.
KINDS: dict[str, Any] = {
    "order": _("Orders"),
    "server": _("Servers"),
    "serial": _("Serials"),
    "lot": _("Lots"),
    "purchase_order": _("Purchase orders"),
    "supplier": _("Suppliers"),
}


@dataclass(frozen=True)
class Hit:
    """One object found: what it is, how it reads, and where it opens (None: no page this user may open)."""

    kind: str
    pk: int
    title: str
    detail: str = ""
    status: str = ""
    status_label: str = ""
    url: str | None = None


@dataclass(frozen=True)
class Group:
    """The hits of one kind, and whether there were more than were listed."""

    kind: str
    label: str
    hits: list[Hit]
    more: bool


@dataclass
class Results:
    """What a query found: the one exact match to go to, or the groups of partial matches."""

    query: str
    exact: Hit | None = None
    groups: list[Group] = field(default_factory=list)
    partial: bool = True  # False: the query was too short for partial matches

    @property
    def count(self) -> int:
        return sum(len(group.hits) for group in self.groups)


def clean_query(raw: str | None) -> str:
    """The query as searched: without the whitespace around it (a scanner's newline).

    Longer than `MAX_QUERY_LENGTH`: InvalidInput (the page answers 400 and searches nothing)."""
    query = (raw or "").strip()
    if len(query) > MAX_QUERY_LENGTH:
        raise InvalidInput("q", f"at most {MAX_QUERY_LENGTH} characters.")
    return query


def may_search(user: Any) -> bool:
    """PMs and partners' members search (those who have a bench); customers and outsiders do not."""
    return has_bench(user)


# --- where a hit opens -----------------------------------------------------------------------------------


def _admin_url(model: Any, pk: int) -> str:
    meta = model._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[pk])


def order_url(pk: int) -> str:
    """The PM's order page (its servers, purchase orders, lots and transitions)."""
    return reverse("pm:order", args=[pk])


def server_url(pk: int, *, serial: str = "") -> str:
    """The bench page of a server (with `?serial=` so that it can show which component was looked for)."""
    url = reverse("bench:server", args=[pk])
    return f"{url}?serial={serial}" if serial else url


# --- the querysets, each scoped by visible_to -------------------------------------------------------------


def _orders(user: Any) -> QuerySet[Order]:
    return Order.objects.visible_to(user).select_related("customer", "configuration")


def _servers(user: Any) -> QuerySet[Server]:
    # The bench is the only page of a server a partner can open, so a partner finds the servers on its bench.
    return Server.objects.visible_to(user, purpose=Purpose.BENCH).select_related("order", "partner")


def components_for(user: Any) -> QuerySet[Component]:
    """The components the user may see, each with the server whose bench page it opens (`server_id`)."""
    # The server a component is in (or set aside for): its active installation, else its active allocation,
    # among the servers whose bench page the user may open.
    bench = Server.objects.visible_to(user, purpose=Purpose.BENCH).values("pk")
    installed = (
        Installation.objects.active()
        .filter(component=OuterRef("pk"), server__in=bench)
        .values("server_id")[:1]
    )
    allocated = Allocation.objects.filter(
        component=OuterRef("pk"), released_at__isnull=True, server__in=bench
    ).values("server_id")[:1]
    return (
        Component.objects.visible_to(user)
        .select_related("part", "lot")
        .annotate(server_id=Coalesce(Subquery(installed), Subquery(allocated)))
    )


def _lots(user: Any) -> QuerySet[BatchLot]:
    return BatchLot.objects.visible_to(user).select_related("part", "purchase_order", "supplier")


def _purchase_orders(user: Any) -> QuerySet[PurchaseOrder]:
    return (
        PurchaseOrder.objects.visible_to(user)
        .select_related("supplier")
        .annotate(order_reference=F("order_link__order__reference"))
    )


def _suppliers(user: Any) -> QuerySet[Supplier]:
    return Supplier.objects.visible_to(user)


# --- the hits --------------------------------------------------------------------------------------------


def _order_hit(order: Order) -> Hit:
    return Hit(
        kind="order",
        pk=order.pk,
        title=order.reference,
        detail=f"{order.customer.name} · {order.server_count} × {order.configuration.name}",
        status=order.status,
        status_label=label_of(OrderStatus, order.status, order.status),
        url=order_url(order.pk),
    )


def _server_hit(server: Server) -> Hit:
    parts = [server.asset_tag, server.order.reference]
    if server.partner is not None:
        parts.append(server.partner.name)
    return Hit(
        kind="server",
        pk=server.pk,
        title=server.hostname,
        detail=" · ".join(parts),
        status=server.status,
        status_label=label_of(ServerStatus, server.status, server.status),
        url=server_url(server.pk),
    )


def _serial_hits(components: list[Component], *, pm: bool) -> list[Hit]:
    server_ids = {c.server_id for c in components if c.server_id}  # type: ignore[attr-defined]
    # No ids, no query (Django answers an empty IN without asking the database).
    hostnames = dict(Server.objects.filter(pk__in=server_ids).values_list("pk", "hostname"))
    hits = []
    for component in components:
        server_id = component.server_id  # type: ignore[attr-defined]
        if server_id:
            url: str | None = server_url(server_id, serial=component.serial)
        else:
            url = _admin_url(Component, component.pk) if pm else None
        detail = [component.part.mpn, component.lot.lot_code]
        if server_id:
            detail.append(hostnames.get(server_id, ""))
        hits.append(
            Hit(
                kind="serial",
                pk=component.pk,
                title=component.serial,
                detail=" · ".join(part for part in detail if part),
                status=component.status,
                status_label=label_of(ComponentStatus, component.status, component.status),
                url=url,
            )
        )
    return hits


def _lot_hit(lot: BatchLot, *, pm: bool) -> Hit:
    detail = [lot.part.mpn, lot.purchase_order.number, lot.country_of_origin]
    if pm:
        detail.append(lot.supplier.name)  # suppliers are the PMs' business (werkbank.audiences)
    return Hit(
        kind="lot",
        pk=lot.pk,
        title=lot.lot_code,
        detail=" · ".join(detail),
        url=_admin_url(BatchLot, lot.pk) if pm else None,
    )


def _purchase_order_hit(po: PurchaseOrder, *, pm: bool) -> Hit:
    detail = []
    if pm:
        detail.append(po.supplier.name)
        if po.order_reference:  # type: ignore[attr-defined]
            detail.append(str(_("for %(order)s") % {"order": po.order_reference}))  # type: ignore[attr-defined]
    return Hit(
        kind="purchase_order",
        pk=po.pk,
        title=po.number,
        detail=" · ".join(detail),
        status=po.status,
        status_label=label_of(PurchaseOrderStatus, po.status, po.status),
        url=_admin_url(PurchaseOrder, po.pk) if pm else None,
    )


def _supplier_hit(supplier: Supplier) -> Hit:
    return Hit(
        kind="supplier",
        pk=supplier.pk,
        title=supplier.name,
        detail=supplier.country,
        url=_admin_url(Supplier, supplier.pk),
    )


# --- the two steps ---------------------------------------------------------------------------------------


def exact_matches(*, user: Any, query: str) -> list[Hit]:
    """Every object whose identifier is the query (in any letter case), at most two per kind: enough to
    know whether exactly one matched. Each lookup is served by a B-tree index."""
    upper = query.upper()
    pm = is_pm(user)
    hits: list[Hit] = []
    hits += [_order_hit(o) for o in _orders(user).filter(reference=upper)[:2]]
    servers = bench_servers_named(user, query).select_related("order", "partner")[:2]
    hits += [_server_hit(s) for s in servers]
    components = list(components_for(user).with_serial(normalize_serial(query))[:2])
    hits += _serial_hits(components, pm=pm)
    lots = _lots(user).alias(lot_code_key=Upper("lot_code")).filter(lot_code_key=upper)[:2]
    hits += [_lot_hit(lot, pm=pm) for lot in lots]
    hits += [_purchase_order_hit(po, pm=pm) for po in _purchase_orders(user).filter(number=upper)[:2]]
    hits += [_supplier_hit(s) for s in _suppliers(user).filter(name__iexact=query)[:2]]
    return hits


def _group(kind: str, hits: list[Hit]) -> Group:
    return Group(kind=kind, label=str(KINDS[kind]), hits=hits[:PER_KIND], more=len(hits) > PER_KIND)


def partial_matches(*, user: Any, query: str) -> list[Group]:
    """The objects whose identifiers contain the query, per kind (kinds without a match are left out)."""
    pm = is_pm(user)
    limit = PER_KIND + 1  # one more than is listed, to know that there are more
    groups = []
    orders = _orders(user).filter(reference__icontains=query).order_by("reference")[:limit]
    groups.append(_group("order", [_order_hit(o) for o in orders]))
    # A server is found by its order's reference too: a partner sees no orders, but knows its servers by them.
    servers = _servers(user).filter(
        Q(hostname__icontains=query) | Q(asset_tag__icontains=query) | Q(order__reference__icontains=query)
    )
    groups.append(_group("server", [_server_hit(s) for s in servers.order_by("hostname")[:limit]]))
    components = list(components_for(user).filter(serial__icontains=query.strip()).order_by("serial")[:limit])
    groups.append(_group("serial", _serial_hits(components, pm=pm)))
    lots = _lots(user).filter(lot_code__icontains=query).order_by("lot_code", "pk")[:limit]
    groups.append(_group("lot", [_lot_hit(lot, pm=pm) for lot in lots]))
    matches = Q(number__icontains=query)
    if pm:
        # The order a PO serves is the PMs' to know (a partner receives a PO as a delivery note).
        matches |= Q(order_link__order__reference__icontains=query)
    purchase_orders = _purchase_orders(user).filter(matches).order_by("number")[:limit]
    groups.append(_group("purchase_order", [_purchase_order_hit(po, pm=pm) for po in purchase_orders]))
    suppliers = list(_suppliers(user).filter(name__icontains=query).order_by("name")[:limit])
    if pm and not suppliers and connection.vendor == "postgresql":
        similar = _suppliers(user).annotate(similarity=TrigramSimilarity("name", query))
        suppliers = list(
            similar.filter(similarity__gte=SUPPLIER_SIMILARITY).order_by("-similarity", "name")[:limit]
        )
    groups.append(_group("supplier", [_supplier_hit(s) for s in suppliers]))
    return [group for group in groups if group.hits]


def search(*, user: Any, query: str) -> Results:
    """Search for `query` (already cleaned by `clean_query`) as `user` may see."""
    results = Results(query=query)
    if not query:
        return results
    exact = exact_matches(user=user, query=query)
    # One match goes straight to its page; one without a page this user may open is listed instead.
    if len(exact) == 1 and exact[0].url:
        results.exact = exact[0]
        return results
    if len(query) < MIN_PARTIAL_LENGTH:
        results.partial = False
        results.groups = [_group(kind, [hit for hit in exact if hit.kind == kind]) for kind in KINDS]
        results.groups = [group for group in results.groups if group.hits]
        return results
    results.groups = partial_matches(user=user, query=query)
    return results
