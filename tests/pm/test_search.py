"""The global search (`/pm/search/`, pm/search.py): every kind is found, an exact match goes straight to
its page, partial matches are listed by kind, partners find only what is theirs, customers and outsiders get
a 404, anonymous visitors the login page, a query longer than 100 characters is a 400, the page runs as many
queries for 100 matches as for 10, and on PostgreSQL an exact serial is an index lookup."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from builds.models import Allocation, Server
from inventory.models import BatchLot, Component, PurchaseOrder, Supplier
from orders.models import Order, OrderPurchaseOrder
from pm import search
from tests import factories
from tests.tenants_rig import Tenants

pytestmark = pytest.mark.django_db

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="query plans and trigram matching are PostgreSQL's"
)


@dataclass
class World:
    """Customer A's order built by partner P (one GPU allocated to its server) and customer B's built by Q."""

    t: Tenants
    order_a: Order
    order_b: Order
    server_a: Server
    server_b: Server
    po_p: PurchaseOrder
    po_q: PurchaseOrder
    allocated: Component
    in_stock: Component
    foreign: Component
    supplier: Supplier


@pytest.fixture
def world(tenants: Tenants) -> World:
    order_a = factories.OrderFactory(reference="WB-2026-0101", customer=tenants.customer_a, server_count=1)
    order_b = factories.OrderFactory(reference="WB-2026-0202", customer=tenants.customer_b, server_count=1)
    [server_a] = factories.make_servers(order_a, status="assembling")
    [server_b] = factories.make_servers(order_b, status="assembling")
    Server.objects.filter(pk=server_a.pk).update(partner=tenants.partner_p)
    Server.objects.filter(pk=server_b.pk).update(partner=tenants.partner_q)
    supplier = factories.SupplierFactory(name="Nordlicht Components GmbH")
    po_p = factories.receive_stock(
        deliver_to=tenants.partner_p, lots={"L-ALPHA-7": ["GPU-AAA-001", "GPU-AAA-002"]}
    )
    PurchaseOrder.objects.filter(pk=po_p.pk).update(supplier=supplier)
    po_q = factories.receive_stock(deliver_to=tenants.partner_q, lots={"L-QUELLE-9": ["GPU-QQQ-001"]})
    OrderPurchaseOrder.objects.create(order=order_a, purchase_order=po_p)
    allocated = Component.objects.get(serial="GPU-AAA-001")
    Allocation.objects.create(component=allocated, server=server_a)
    Allocation.objects.create(component=Component.objects.get(serial="GPU-QQQ-001"), server=server_b)
    return World(
        t=tenants,
        order_a=order_a,
        order_b=order_b,
        server_a=server_a,
        server_b=server_b,
        po_p=po_p,
        po_q=po_q,
        allocated=allocated,
        in_stock=Component.objects.get(serial="GPU-AAA-002"),
        foreign=Component.objects.get(serial="GPU-QQQ-001"),
        supplier=supplier,
    )


def _get(user: Any, query: str) -> Any:
    client = Client()
    client.force_login(user)
    return client.get(f"/pm/search/?q={quote(query)}")


def _admin(model: Any, pk: int) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[pk])


def _bench(server: Server, serial: str = "") -> str:
    url = reverse("bench:server", args=[server.pk])
    return f"{url}?serial={serial}" if serial else url


# --- exact matches: straight to the object -------------------------------------------------------------


def test_the_route_is_pm_search():
    assert reverse("pm:search") == "/pm/search/"


def test_an_order_reference_in_any_case_opens_the_order(world: World):
    response = _get(world.t.pm, "wb-2026-0101")
    assert response.status_code == 302
    assert response.url == search.order_url(world.order_a.pk) == f"/pm/orders/{world.order_a.pk}/"


@pytest.mark.parametrize("field", ["hostname", "asset_tag"])
def test_a_hostname_or_asset_tag_opens_the_servers_bench_page(world: World, field: str):
    value = getattr(world.server_a, field)
    response = _get(world.t.pm, value.swapcase())
    assert response.status_code == 302 and response.url == _bench(world.server_a)


def test_a_serial_as_the_scanner_reads_it_opens_the_server_it_is_allocated_to(world: World):
    # Lower case with the scanner's newline: the normal form of inventory.serials finds "GPU-AAA-001".
    response = _get(world.t.pm, " gpu-aaa-001\n")
    assert response.status_code == 302
    assert response.url == _bench(world.server_a, "GPU-AAA-001")


def test_a_serial_in_no_server_opens_the_components_admin_page_for_a_pm(world: World):
    response = _get(world.t.pm, "GPU-AAA-002")
    assert response.status_code == 302 and response.url == _admin(Component, world.in_stock.pk)


def test_a_lot_a_purchase_order_and_a_supplier_open_their_admin_pages(world: World):
    lot = BatchLot.objects.get(lot_code="L-ALPHA-7")
    for query, url in (
        ("l-alpha-7", _admin(BatchLot, lot.pk)),
        (world.po_p.number.lower(), _admin(PurchaseOrder, world.po_p.pk)),
        ("nordlicht components gmbh", _admin(Supplier, world.supplier.pk)),
    ):
        response = _get(world.t.pm, query)
        assert response.status_code == 302, query
        assert response.url == url, query


# --- partial matches: listed by kind -------------------------------------------------------------------


def test_partial_matches_are_listed_by_kind_with_their_links(world: World):
    response = _get(world.t.pm, "aaa")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-kind="serial"' in html
    assert f'href="{_bench(world.server_a, "GPU-AAA-001")}"' in html
    assert f'href="{_admin(Component, world.in_stock.pk)}"' in html
    assert "GPU-QQQ-001" not in html
    assert "2 matches" in html


def test_a_purchase_order_is_found_by_the_order_it_serves(world: World):
    html = _get(world.t.pm, "2026-0101").content.decode()
    # The order, its server and the PO that serves it; not customer B's order.
    for kind in ("order", "server", "purchase_order"):
        assert f'data-kind="{kind}"' in html, kind
    assert world.po_p.number in html and "for WB-2026-0101" in html
    assert world.po_q.number not in html and "WB-2026-0202" not in html


def test_every_kind_appears_for_a_query_that_matches_each(world: World):
    results = search.search(user=world.t.pm, query="L")  # too short for partial matches
    assert results.groups == [] and not results.partial
    # "-0" is in every identifier of the world but the names, which "GmbH" finds (a supplier's, customer A's).
    kinds = {group.kind for group in search.partial_matches(user=world.t.pm, query="-0")}
    assert kinds == {"order", "server", "serial", "purchase_order"}
    # Lot L-ALPHA-7, and customer Alpha Rentals GmbH.
    assert {g.kind for g in search.partial_matches(user=world.t.pm, query="ALPHA")} == {"lot", "customer"}
    assert {g.kind for g in search.partial_matches(user=world.t.pm, query="gmbh")} == {"supplier", "customer"}


def test_two_exact_matches_are_listed_rather_than_opened(world: World):
    # The same serial from a second manufacturer: the search cannot choose, so it lists both.
    other = factories.PartFactory(manufacturer="AMD")
    Component.objects.create(
        part=other,
        manufacturer="AMD",
        serial="GPU-AAA-002",
        lot=world.in_stock.lot,
        po_line=world.in_stock.po_line,
        location="Warehouse",
    )
    response = _get(world.t.pm, "gpu-aaa-002")
    assert response.status_code == 200
    assert response.content.decode().count('class="mono" href=') == 2


def test_nothing_found_says_so(world: World):
    html = _get(world.t.pm, "XYZ-NOTHING").content.decode()
    assert "Nothing found for “XYZ-NOTHING”." in html


@postgresql_only
def test_a_misspelt_supplier_is_found_by_trigram_similarity(world: World):
    results = search.search(user=world.t.pm, query="Nordlict Componets")
    assert [hit.title for group in results.groups for hit in group.hits] == ["Nordlicht Components GmbH"]


# --- who searches what ---------------------------------------------------------------------------------


def test_a_partner_finds_its_own_server_and_serial(world: World):
    user = world.t.user_p
    assert _get(user, world.server_a.hostname).url == _bench(world.server_a)
    assert _get(user, "gpu-aaa-001").url == _bench(world.server_a, "GPU-AAA-001")


def test_a_partner_never_finds_another_tenants_objects(world: World):
    user = world.t.user_p
    foreign = [
        world.server_b.hostname,
        world.server_b.asset_tag,
        "GPU-QQQ-001",
        "L-QUELLE-9",
        world.po_q.number,
        "WB-2026-0202",
        "QQQ",
        "QUELLE",
        "0202",
    ]
    for query in foreign:
        response = _get(user, query)
        assert response.status_code == 200, query
        html = response.content.decode()
        assert "Nothing found" in html, query
        for secret in (world.server_b.hostname, "GPU-QQQ-001", "L-QUELLE-9", world.po_q.number):
            if secret != query:  # the page repeats the query itself
                assert secret not in html, (query, secret)


def test_a_partner_finds_neither_orders_nor_suppliers_nor_admin_pages(world: World):
    user = world.t.user_p
    # The order's reference finds the partner's server of that order, not the order, nor the PO's link to it.
    html = _get(user, "WB-2026-0101").content.decode()
    assert 'data-kind="server"' in html and 'data-kind="order"' not in html
    assert 'data-kind="purchase_order"' not in html
    assert "Nothing found" in _get(user, "Nordlicht").content.decode()
    # Lots, POs and unallocated serials delivered to the partner are listed, without a page to open.
    for query in ("L-ALPHA-7", world.po_p.number, "GPU-AAA-002"):
        response = _get(user, query)
        assert response.status_code == 200, query
        html = response.content.decode()
        assert query in html and "/admin/" not in html.split('<main id="content">')[1], query


def test_customers_and_outsiders_get_a_404(world: World):
    for user in (world.t.user_a, world.t.outsider):
        assert _get(user, "GPU-AAA-001").status_code == 404


def test_anonymous_visitors_log_in_first():
    response = Client().get("/pm/search/?q=GPU")
    assert response.status_code == 302 and response.url.startswith("/accounts/login/")


# --- bad input -----------------------------------------------------------------------------------------


def test_a_query_over_100_characters_is_a_400_that_says_why(world: World):
    response = _get(world.t.pm, "A" * 300)
    assert response.status_code == 400
    assert "The search text is too long: at most 100 characters." in response.content.decode()
    # The limit counts the query without the whitespace around it.
    assert _get(world.t.pm, "  " + "A" * 100 + "  ").status_code == 200


def test_an_empty_query_shows_the_box():
    pm = factories.make_pm()
    response = _get(pm, "   ")
    assert response.status_code == 200 and 'id="search-page-q"' in response.content.decode()


def test_a_post_is_refused(world: World):
    client = Client()
    client.force_login(world.t.pm)
    assert client.post("/pm/search/", {"q": "GPU"}).status_code == 405


# --- the frame's box -----------------------------------------------------------------------------------


def test_pms_and_partners_have_the_search_box_in_the_frame_customers_do_not(world: World):
    for user, has_box in ((world.t.pm, True), (world.t.user_p, True), (world.t.user_a, False)):
        client = Client()
        client.force_login(user)
        html = client.get("/bench/" if has_box else "/portal/").content.decode()
        box = '<form method="get" action="/pm/search/" class="search" role="search">'
        assert (box in html) is has_box, user
        if has_box:
            assert '<label for="frame-search"' in html
            assert '<input id="frame-search" name="q" type="search"' in html
            assert f'maxlength="{search.MAX_QUERY_LENGTH}"' in html.split('id="frame-search"')[1][:60]


# --- cost ----------------------------------------------------------------------------------------------


#: Queries of a search that lists partial matches: session and user, the PM-group check (a partner: the
#: bench check), then one exact and one partial lookup per kind (nine kinds for a PM; eight for a partner,
#: whose queryset of suppliers asks nothing: those of orders and customers ask and find none), and the
#: servers of the listed serials. "bulk" is no address: the addresses ask nothing
#: (tests/pm/test_search_more.py pins the queries of an address).
QUERIES = {"pm": 22, "user_p": 20}


def _matches(world: World, n: int) -> None:
    """`n` more serials, servers, lots and suppliers that contain "BULK"."""
    Supplier.objects.bulk_create(Supplier(name=f"Bulk Trading {n}-{i}", country="DE") for i in range(n))
    po_line = world.in_stock.po_line
    lots = BatchLot.objects.bulk_create(
        BatchLot(
            part=world.in_stock.part,
            supplier=world.supplier,
            purchase_order=world.po_p,
            lot_code=f"L-BULK-{n}-{i}",
            date_code="2526",
            country_of_origin="TW",
        )
        for i in range(n)
    )
    components = Component.objects.bulk_create(
        Component(
            part=world.in_stock.part,
            manufacturer=world.in_stock.manufacturer,
            serial=f"BULK-{n}-{i:04d}",
            lot=lots[i],
            po_line=po_line,
            location="Praha",
            holder=world.t.partner_p,
        )
        for i in range(n)
    )
    order = factories.OrderFactory(reference=f"WB-2027-{n:04d}", server_count=n)
    servers = Server.objects.bulk_create(
        Server(
            order=order,
            sequence=i + 1,
            hostname=f"bulk-{n}-{i:04d}",
            asset_tag=f"BULK-{n}-{i:04d}",
            partner=world.t.partner_p,
            status="assembling",
        )
        for i in range(n)
    )
    Allocation.objects.bulk_create(
        Allocation(component=component, server=server)
        for component, server in zip(components, servers, strict=True)
    )


def _queries(world: World, user: Any, n: int) -> int:
    _matches(world, n)
    client = Client()
    client.force_login(user)
    with CaptureQueriesContext(connection) as captured:
        response = client.get("/pm/search/?q=bulk")
    assert response.status_code == 200
    html = response.content.decode()
    # Serials, servers, lots (and suppliers for a PM): each listed up to the page's limit.
    assert html.count("<li>") >= 3 * min(n, search.PER_KIND)
    return len(captured)


@pytest.mark.parametrize("who", ["pm", "user_p"])
def test_the_queries_are_the_same_for_10_and_100_matches(tenants: Tenants, who: str, request: Any):
    # Two worlds in two test databases would be slower; one world, searched after 10 and after 100 more rows.
    world = request.getfixturevalue("world")
    user = getattr(world.t, who)
    few = _queries(world, user, 10)
    many = _queries(world, user, 100)
    assert few == many == QUERIES[who]


@postgresql_only
def test_an_exact_serial_is_an_index_lookup_among_20000_components(world: World):
    Component.objects.bulk_create(
        Component(
            part=world.in_stock.part,
            manufacturer=world.in_stock.manufacturer,
            serial=f"SN{i:08d}",
            lot=world.in_stock.lot,
            po_line=world.in_stock.po_line,
            location="Warehouse",
        )
        for i in range(20_000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE inventory_component")
    # The query the search runs for an exact serial, for a PM and for a partner.
    for user in (world.t.pm, world.t.user_p):
        plan = search.components_for(user).with_serial(" sn00012345 ")[:2].explain()
        component_scans = [line for line in plan.splitlines() if "inventory_component" in line]
        index = "inventory_component_unique_serial_per_manufacturer"
        assert any(index in line for line in component_scans), plan
        assert not any("Seq Scan" in line for line in component_scans), plan
    # A partial serial can use the trigram index: the index is on the expression the search writes. Whether
    # the planner prefers it to a scan depends on the table's statistics (and on the GIN index's list of
    # pending entries, which the suite's rolled-back tests leave behind), so the other ways are switched off
    # here: were the expressions different, the plan would still scan the table.
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_indexscan = off")
        plan = search.components_for(world.t.pm).filter(serial__icontains="00012")[:21].explain()
    assert "portal_search_component_serial_trgm" in plan, plan
    assert "Seq Scan on inventory_component" not in plan, plan


def test_the_page_speaks_german(world: World, settings: Any):
    client = Client()
    client.force_login(world.t.pm)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"
    html = client.get("/pm/search/?q=XYZ-NICHTS").content.decode()
    assert "Nichts gefunden für „XYZ-NICHTS“." in html
    assert '<label for="frame-search" class="visually-hidden">Aufträge, Server, Seriennummern' in html
    html = client.get("/pm/search/?q=aaa").content.decode()
    assert "2 Treffer für „aaa“." in html and "Seriennummern" in html and "Auf Lager" in html
