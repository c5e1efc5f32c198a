"""Pagination of the API's lists (werkbank.api.pagination, issue #15): limit/offset by default, keyset pages
beside it on the big lists. Keyset pages cover every row the user may see exactly once, in id order, and
never another tenant's; `ordering` is refused on them; the lots list counts its components for its page."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.models import Component, StockMovement
from tests import factories
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db

COMPONENTS = "/api/v1/inventory/components/"
MOVEMENTS = "/api/v1/inventory/stock-movements/"


@pytest.fixture
def stock(tenants: Any) -> dict[str, list[int]]:
    """Seven components delivered to partner P's workshop, three to Q's."""
    factories.receive_stock(
        deliver_to=tenants.partner_p,
        lots={"L-P1": [f"P-{n}" for n in range(4)], "L-P2": ["P-4", "P-5", "P-6"]},
    )
    factories.receive_stock(deliver_to=tenants.partner_q, lots={"L-Q1": ["Q-0", "Q-1", "Q-2"]})
    ids = {
        prefix: sorted(Component.objects.filter(serial__startswith=prefix).values_list("pk", flat=True))
        for prefix in ("P-", "Q-")
    }
    return ids


def _walk(client: Any, url: str, **params: Any) -> list[dict]:
    """Every row of a keyset-paged list, following `next` from the first page."""
    rows: list[dict] = []
    response = client.get(url, {"cursor": "", **params})
    pages = 0
    while True:
        assert response.status_code == 200, response.content
        body = response.json()
        assert "count" not in body
        rows.extend(body["results"])
        pages += 1
        assert pages < 50, "the cursor pages never end"
        if not body["next"]:
            return rows
        response = client.get(body["next"])


def test_keyset_pages_cover_every_visible_row_exactly_once_in_id_order(tenants, stock):
    seen = [row["id"] for row in _walk(api_client(tenants.user_p), COMPONENTS, limit=2)]
    assert seen == stock["P-"]  # all seven of P's, once each, ascending; none of Q's
    seen_q = [row["id"] for row in _walk(api_client(tenants.user_q), COMPONENTS, limit=2)]
    assert seen_q == stock["Q-"]
    seen_pm = [row["id"] for row in _walk(api_client(tenants.pm), COMPONENTS, limit=3)]
    assert seen_pm == sorted(stock["P-"] + stock["Q-"])


def test_keyset_pages_go_back_with_previous(tenants, stock):
    client = api_client(tenants.user_p)
    first = client.get(COMPONENTS, {"cursor": "", "limit": 3}).json()
    second = client.get(first["next"]).json()
    assert first["previous"] is None
    back = client.get(second["previous"]).json()
    assert [row["id"] for row in back["results"]] == [row["id"] for row in first["results"]]


def test_keyset_pages_respect_filters_and_scope_on_the_ledger(tenants, stock):
    movements = StockMovement.objects.filter(component_id__in=stock["P-"]).order_by("pk")
    seen = [row["id"] for row in _walk(api_client(tenants.user_p), MOVEMENTS, limit=2)]
    assert seen == list(movements.values_list("pk", flat=True))
    assert not StockMovement.objects.filter(pk__in=seen, component_id__in=stock["Q-"]).exists()
    assert _walk(api_client(tenants.user_a), MOVEMENTS) == []  # a customer holds no stock


def test_keyset_pages_refuse_an_ordering(tenants, stock):
    response = api_client(tenants.pm).get(COMPONENTS, {"cursor": "", "ordering": "serial"})
    assert response.status_code == 400
    assert "ordering" in response.json()


def test_limit_offset_stays_the_default_with_a_count(tenants, stock):
    body = api_client(tenants.user_p).get(COMPONENTS, {"limit": 2, "offset": 6}).json()
    assert body["count"] == 7
    assert len(body["results"]) == 1
    assert "offset=4" in body["previous"]


def test_the_default_order_is_part_then_serial(tenants, stock):
    """Components list in the order of their index (part, serial, id), not through the part's ordering."""
    rows = api_client(tenants.pm).get(COMPONENTS).json()["results"]
    keys = [(row["part"], row["serial"], row["id"]) for row in rows]
    assert keys == sorted(keys)
    assert len(keys) == 10


def test_the_lots_list_counts_the_components_of_its_page_for_the_caller(tenants, stock):
    by_p = {
        lot["lot_code"]: lot["component_count"]
        for lot in api_client(tenants.user_p).get("/api/v1/inventory/lots/").json()["results"]
    }
    assert by_p == {"L-P1": 4, "L-P2": 3}
    page = api_client(tenants.pm).get("/api/v1/inventory/lots/", {"limit": 1, "offset": 1}).json()
    assert page["count"] == 3
    [lot] = page["results"]  # newest first: L-Q1, then L-P2
    assert (lot["lot_code"], lot["component_count"]) == ("L-P2", 3)
    assert api_client(tenants.user_q).get(f"/api/v1/inventory/lots/{lot['id']}/").status_code == 404
    assert (
        api_client(tenants.user_p).get(f"/api/v1/inventory/lots/{lot['id']}/").json()["component_count"] == 3
    )


def test_a_servers_rows_page_by_server_then_position_each_once_across_page_breaks(tenants):
    """Connectors keyset-page along (server, position, id): the cursor holds a server and an offset among its
    rows, so pages that break inside a server's connectors still give each row once; Q's never reach P."""
    from builds.choices import ConnectorKind
    from builds.models import Connector

    order = factories.OrderFactory(customer=tenants.customer_a, server_count=3)
    servers = factories.make_servers(order)
    for server, partner in zip(
        servers, [tenants.partner_p, tenants.partner_q, tenants.partner_p], strict=True
    ):
        server.partner = partner
        server.save(update_fields=["partner"])
        # Created in reverse position, so that id order and position order differ.
        for position in (3, 2, 1):
            Connector.objects.create(
                server=server, name=f"PCIE{position}", kind=ConnectorKind.PCIE_SLOT, position=position
            )
    expected = list(
        Connector.objects.filter(server__partner=tenants.partner_p)
        .order_by("server_id", "position", "id")
        .values_list("pk", flat=True)
    )
    assert len(expected) == 6
    seen = [row["id"] for row in _walk(api_client(tenants.user_p), "/api/v1/builds/connectors/", limit=2)]
    assert seen == expected
    back_and_forth = api_client(tenants.user_p)
    first = back_and_forth.get("/api/v1/builds/connectors/", {"cursor": "", "limit": 4}).json()
    second = back_and_forth.get(first["next"]).json()
    assert [row["id"] for row in first["results"] + second["results"]] == expected
    previous = back_and_forth.get(second["previous"]).json()
    assert [row["id"] for row in previous["results"]] == expected[:4]


def test_a_cursor_that_was_not_given_out_is_a_400(tenants, stock):
    for cursor in ("not-base64!", "eyJzaWRld2F5cyI6IFsxXX0=", "eyJhZnRlciI6IFsxLCAyXX0="):
        response = api_client(tenants.pm).get(COMPONENTS, {"cursor": cursor})
        assert response.status_code == 400, cursor
        assert "cursor" in response.json()


def test_servers_page_by_order_then_sequence_each_once_and_only_the_partners(tenants):
    """Servers keyset-page along their (order, sequence) index; a partner walks only its own."""
    from builds.models import Server

    servers = []
    for _ in range(3):
        servers += factories.make_servers(factories.OrderFactory(customer=tenants.customer_a, server_count=2))
    for number, server in enumerate(servers):
        server.partner = tenants.partner_q if number == 0 else tenants.partner_p
        server.save(update_fields=["partner"])
    pm_rows = _walk(api_client(tenants.pm), "/api/v1/builds/servers/", limit=2)
    expected = list(Server.objects.order_by("order_id", "sequence", "id").values_list("pk", flat=True))
    assert [row["id"] for row in pm_rows] == expected and len(expected) == 6
    partner_rows = _walk(api_client(tenants.user_p), "/api/v1/builds/servers/", limit=2)
    assert [row["id"] for row in partner_rows] == expected[1:]


def test_offset_pages_are_the_lists_rows_in_its_order_with_their_counts_in_constant_queries(
    tenants, django_assert_num_queries
):
    """Past the first page, limit/offset reads the page's keys first and then only those rows in full
    (werkbank.api.pagination.offset_page): walking the servers list page by page gives every server once,
    in the list's order (order, then sequence), with its per-row counts, in the same queries on every page
    after the first (one more than the first)."""
    from builds.choices import ConnectorKind
    from builds.models import Connector

    orders = [factories.OrderFactory(customer=tenants.customer_a, server_count=3) for _ in range(3)]
    servers = [server for order in reversed(orders) for server in factories.make_servers(order)]
    for count, server in enumerate(servers):
        for position in range(count % 4):
            Connector.objects.create(
                server=server, name=f"PCIE{position}", kind=ConnectorKind.PCIE_SLOT, position=position
            )
    client = api_client(tenants.pm)
    expected = [
        (server.pk, Connector.objects.filter(server=server).count())
        for server in sorted(servers, key=lambda server: (server.order_id, server.sequence))
    ]
    first = client.get("/api/v1/builds/servers/", {"limit": 2}).json()
    seen = [(row["id"], row["connector_count"]) for row in first["results"]]
    queries: set[int] = set()
    for offset in range(2, len(servers), 2):
        with CaptureQueriesContext(connection) as captured:
            body = client.get("/api/v1/builds/servers/", {"limit": 2, "offset": offset}).json()
        queries.add(len(captured))
        assert body["count"] == len(servers)
        seen.extend((row["id"], row["connector_count"]) for row in body["results"])
    assert seen == expected
    assert len(queries) == 1, f"deep pages ran different numbers of queries: {queries}"
    with django_assert_num_queries(queries.pop() - 1):
        client.get("/api/v1/builds/servers/", {"limit": 2})
