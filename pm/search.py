"""The global search of the PM pages (`/pm/search/`): one box that finds an order, a server, a serial, a lot,
a purchase order, a supplier, a customer, a site, a rack, or a server by its IP or MAC address, for PMs, and
for partners' members within what they may see.

Every read starts from `visible_to(user, ...)` of the model's own app, so a partner finds only the servers on
its bench (purpose "bench": the page it can open), the components and lots delivered to its workshop or held
there, and the purchase orders delivered to it; the sites and racks where a server it sees stands, and the
addresses of those servers (deployment's querysets: the deployment pages they open answer the same).
Orders, suppliers and customers are never a partner's (their querysets give members none). Customers do not
search here: the view answers them 404.

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

Addresses are compared in their normal forms: an IP address exactly (`ipaddress`; by prefix in the partial
step, "10.20." finds the 10.20.x.x servers), a MAC in any common spelling (3c:ec:ef:.., 3C-EC-EF-..,
3cec.ef12.., bare hex; deployment.services.network.normalize_mac) exactly, and a part of one (at least three
bytes bare, or two joined by colons, hyphens or Cisco dots) by containment. A query that is no address
asks nothing of the addresses. Customers, sites and racks are small tables (tens to hundreds of rows, they
do not grow with the fleet), so they have no search indexes of their own; an exact address is a lookup in
the unique index of its column, and an address prefix scans the networks (one row per deployed server).

Each step runs a fixed number of queries, however many rows match (one per kind, and one for the servers of
the listed serials).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from functools import reduce
from operator import or_
from typing import Any

from django.contrib.postgres.search import TrigramSimilarity
from django.db import connection
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Upper
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext

from builds.choices import ServerStatus
from builds.models import Allocation, Installation, Server
from builds.selectors import bench_servers_named, has_bench
from deployment.choices import SiteKind
from deployment.models import Rack, ServerNetwork, Site
from deployment.services.network import normalize_mac
from inventory.choices import ComponentStatus, PurchaseOrderStatus
from inventory.models import BatchLot, Component, PurchaseOrder, Supplier
from inventory.serials import normalize_serial
from orders.choices import OrderStatus
from orders.models import Order
from werkbank.access import Purpose, is_pm
from werkbank.choices import OrganizationKind, label_of
from werkbank.errors import InvalidInput
from werkbank.models import Organization

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
    "customer": _("Customers"),
    "site": _("Sites"),
    "rack": _("Racks"),
    "address": _("IP and MAC addresses"),
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


def _customers(user: Any) -> QuerySet[Organization]:
    customers = Organization.objects.visible_to(user).filter(kind=OrganizationKind.CUSTOMER)
    return customers.annotate(order_count=Count("orders"))


def _sites(user: Any) -> QuerySet[Site]:
    return Site.objects.visible_to(user)


def _racks(user: Any) -> QuerySet[Rack]:
    return Rack.objects.visible_to(user).select_related("site")


def _networks(user: Any) -> QuerySet[ServerNetwork]:
    return ServerNetwork.objects.visible_to(user).select_related("server")


# --- addresses -------------------------------------------------------------------------------------------

#: The start of an IPv4 address ("10.20.", "10.20.0.1") or of an IPv6 one (hex groups with a colon).
_IPV4_PREFIX = re.compile(r"[0-9]{1,3}(\.[0-9]{0,3}){1,3}")
_IPV6_PREFIX = re.compile(r"[0-9a-f]{0,4}(:[0-9a-f]{0,4}){1,7}")
#: Part of a MAC address: two or more hex pairs joined by colons or hyphens, Cisco groups of four joined by
#: dots, or three to six bare pairs (an OUI or more: two bare pairs would find "2026" in every MAC).
_MAC_PART = re.compile(r"[0-9a-f]{2}([:-][0-9a-f]{2})+|[0-9a-f]{4}(\.[0-9a-f]{4})+|([0-9a-f]{2}){3,6}")
_MAC_SEPARATORS = re.compile(r"[:\-.]")

#: The addresses of a server network, with their labels, in the order a hit names them.
ADDRESS_FIELDS: tuple[tuple[str, Any], ...] = (
    ("management_ip", _("Management IP")),
    ("bmc_ip", _("BMC IP")),
    ("bmc_mac", _("BMC MAC")),
)


@dataclass(frozen=True)
class AddressQuery:
    """A query read as addresses, in their stored forms: what the networks are filtered by, and which of a
    network's addresses a hit names. All None: the query is no address."""

    ip: str | None = None
    ip_prefix: str | None = None
    mac: str | None = None
    mac_part: str | None = None

    @classmethod
    def exact(cls, query: str) -> AddressQuery:
        """The query as one whole IP address and as one whole MAC address, where it is either."""
        try:
            ip: str | None = str(ipaddress.ip_address(query))
        except ValueError:
            ip = None
        try:
            mac: str | None = normalize_mac(query)
        except InvalidInput:
            mac = None
        return cls(ip=ip, mac=mac)

    @classmethod
    def partial(cls, query: str) -> AddressQuery:
        """The query as the start of an IP address and as part of a MAC address, where it is either, and
        as a whole one (an IPv6 address in another spelling than the stored one is no prefix of it)."""
        lowered = query.lower()
        is_ip = _IPV4_PREFIX.fullmatch(lowered) or (":" in lowered and _IPV6_PREFIX.fullmatch(lowered))
        mac_part = None
        if _MAC_PART.fullmatch(lowered):
            digits = _MAC_SEPARATORS.sub("", lowered)
            mac_part = ":".join(digits[i : i + 2] for i in range(0, len(digits), 2))
        whole = cls.exact(query)
        return cls(ip=whole.ip, ip_prefix=lowered if is_ip else None, mac=whole.mac, mac_part=mac_part)

    def condition(self) -> Q | None:
        """The filter of the networks, or None: nothing to ask."""
        conditions = []
        if self.ip:
            conditions.append(Q(management_ip=self.ip) | Q(bmc_ip=self.ip))
        if self.ip_prefix:
            # On PostgreSQL Django compares HOST(inet), the address as text.
            prefix = self.ip_prefix
            conditions.append(Q(management_ip__startswith=prefix) | Q(bmc_ip__startswith=prefix))
        if self.mac:
            conditions.append(Q(bmc_mac=self.mac))
        if self.mac_part:
            conditions.append(Q(bmc_mac__contains=self.mac_part))
        return reduce(or_, conditions) if conditions else None

    def matches(self, name: str, value: str) -> bool:
        """Whether the address `value` of the network's field `name` is one the query found."""
        if name == "bmc_mac":
            return value == self.mac or bool(self.mac_part and self.mac_part in value)
        return value == self.ip or bool(self.ip_prefix and value.lower().startswith(self.ip_prefix))

    def networks(self, user: Any) -> QuerySet[ServerNetwork]:
        """The networks the user may see that have an address the query found (none, asking nothing, when
        the query is no address)."""
        condition = self.condition()
        if condition is None:
            return ServerNetwork.objects.none()
        return _networks(user).filter(condition)


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


def _customer_hit(customer: Organization, *, pm: bool) -> Hit:
    count = customer.order_count  # type: ignore[attr-defined]
    detail = [ngettext("%(n)s order", "%(n)s orders", count) % {"n": count}]
    if customer.contact_email:
        detail.append(customer.contact_email)
    return Hit(
        kind="customer",
        pk=customer.pk,
        title=customer.name,
        detail=" · ".join(detail),
        url=_admin_url(Organization, customer.pk) if pm else None,
    )


def _site_hit(site: Site) -> Hit:
    return Hit(
        kind="site",
        pk=site.pk,
        title=site.name,
        detail=" · ".join([label_of(SiteKind, site.kind, site.kind), site.operator, site.country]),
        url=reverse("deployment:site", args=[site.pk]),
    )


def _rack_hit(rack: Rack) -> Hit:
    return Hit(
        kind="rack",
        pk=rack.pk,
        title=rack.name,
        detail=" · ".join([rack.site.name, f"{rack.height_u} U"]),
        url=reverse("deployment:rack", args=[rack.pk]),
    )


def _address_hit(network: ServerNetwork, found: AddressQuery) -> Hit:
    matched = [
        (str(label), getattr(network, name))
        for name, label in ADDRESS_FIELDS
        if found.matches(name, str(getattr(network, name)))
    ]
    return Hit(
        kind="address",
        pk=network.pk,
        title=", ".join(value for _label, value in matched),
        detail=" · ".join([", ".join(label for label, _value in matched), network.server.hostname]),
        url=reverse("deployment:server", args=[network.server_id]),
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
    hits += [_customer_hit(c, pm=pm) for c in _customers(user).filter(name__iexact=query)[:2]]
    hits += [_site_hit(site) for site in _sites(user).filter(name__iexact=query)[:2]]
    hits += [_rack_hit(rack) for rack in _racks(user).filter(name__iexact=query)[:2]]
    address = AddressQuery.exact(query)
    hits += [_address_hit(network, address) for network in address.networks(user)[:2]]
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
    customers = _customers(user).filter(name__icontains=query).order_by("name")[:limit]
    groups.append(_group("customer", [_customer_hit(c, pm=pm) for c in customers]))
    sites = _sites(user).filter(name__icontains=query).order_by("name")[:limit]
    groups.append(_group("site", [_site_hit(site) for site in sites]))
    racks = _racks(user).filter(name__icontains=query).order_by("site__name", "name")[:limit]
    groups.append(_group("rack", [_rack_hit(rack) for rack in racks]))
    address = AddressQuery.partial(query)
    networks = address.networks(user).order_by("server__hostname")[:limit]
    groups.append(_group("address", [_address_hit(network, address) for network in networks]))
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
