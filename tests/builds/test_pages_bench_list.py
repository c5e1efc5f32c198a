"""The bench list (/bench/): search, status filter, pages of 50, a scanned asset tag opens its server."""

from __future__ import annotations

from typing import Any

import pytest

from builds.choices import ServerStatus
from builds.models import Server
from tests import factories
from tests.builds.bench_page_rig import installed, logged_in, make_build

pytestmark = pytest.mark.django_db


def _servers(tenants: Any, count: int, *, partner: Any = None, status: str = ServerStatus.PLANNED) -> list:
    """`count` servers of one order of customer A on `partner`'s bench (P by default)."""
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=count)
    servers = factories.make_servers(order, status=status)
    Server.objects.filter(order=order).update(partner=partner or tenants.partner_p)
    return servers


def _rows(html: str) -> int:
    return html.count("<tr data-server=")


@pytest.mark.parametrize("rows", [10, 100])
def test_the_list_costs_the_same_queries_for_10_and_100_servers(tenants, django_assert_num_queries, rows):
    _servers(tenants, rows)
    client = logged_in(tenants.user_p)
    # session, user, the partner-membership check, the count, one page with its progress figures, and the
    # deliveries to receive
    with django_assert_num_queries(6):
        response = client.get("/bench/")
    assert _rows(response.content.decode()) == min(rows, 50)


def test_the_list_pages_by_50_and_keeps_the_search_in_the_page_links(tenants):
    _servers(tenants, 60)
    client = logged_in(tenants.user_p)
    first = client.get("/bench/", {"q": "wb-", "status": "planned"}).content.decode()
    assert _rows(first) == 50
    assert "60 builds" in first and "Page 1 of 2" in first
    assert 'href="?q=wb-&amp;status=planned&amp;page=2" rel="next"' in first
    second = client.get("/bench/", {"q": "wb-", "status": "planned", "page": 2}).content.decode()
    assert _rows(second) == 10


def test_search_finds_hostname_asset_tag_order_and_installed_serial(tenants):
    build = make_build(tenants)
    installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    others = _servers(tenants, 3)
    client = logged_in(tenants.user_p)
    server = build.server
    for query in (server.hostname[:-1], server.order.reference, build.gpu_serials[0][:-2].lower()):
        html = client.get("/bench/", {"q": query}).content.decode()
        assert f'data-server="{server.hostname}"' in html, query
        assert all(f'data-server="{other.hostname}"' not in html for other in others), query
    nothing = client.get("/bench/", {"q": "no-such-thing"}).content.decode()
    assert _rows(nothing) == 0 and 'id="bench-none"' in nothing


def test_status_filter(tenants):
    planned = _servers(tenants, 2)
    assembling = _servers(tenants, 1, status=ServerStatus.ASSEMBLING)
    html = logged_in(tenants.user_p).get("/bench/", {"status": "assembling"}).content.decode()
    assert f'data-server="{assembling[0].hostname}"' in html
    assert all(f'data-server="{server.hostname}"' not in html for server in planned)
    assert '<option value="assembling" selected>' in html
    # An unknown status filters nothing rather than failing.
    assert _rows(logged_in(tenants.user_p).get("/bench/", {"status": "bogus"}).content.decode()) == 3


def test_a_scanned_asset_tag_or_hostname_opens_its_server(tenants):
    [server, _other] = _servers(tenants, 2)
    client = logged_in(tenants.user_p)
    for query in (server.asset_tag, server.asset_tag.lower(), f"  {server.hostname.upper()} "):
        response = client.get("/bench/", {"q": query})
        assert response.status_code == 302, query
        assert response["Location"] == f"/bench/servers/{server.pk}/"
    # A search that names several servers lists them.
    assert client.get("/bench/", {"q": server.order.reference}).status_code == 200


def test_another_partners_asset_tag_is_not_opened_nor_listed(tenants):
    [foreign] = _servers(tenants, 1, partner=tenants.partner_q)
    response = logged_in(tenants.user_p).get("/bench/", {"q": foreign.asset_tag})
    assert response.status_code == 200
    assert _rows(response.content.decode()) == 0
