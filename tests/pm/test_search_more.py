"""The global search finds customers, sites, racks, and servers by IP and MAC address (issue #24, build 8).

The world is the shared rack of tests/deployment/rack_rig.py (site "Sofia Colo 1", rack R07: customer A's
server built by partner P, with addresses 10.20.0.11 / 10.21.0.11 / 3c:ec:ef:12:34:56, and customer B's
built by partner Q), plus customer B's own room "Beta Room Plovdiv" with rack RB-1, where a second server of
B, built by Q, stands with addresses 10.30.0.21 / 10.31.0.21 / 3c:ec:ef:ab:cd:ef. A PM finds each kind;
partner P finds the site and rack where its server stands and that server's addresses, never B's room,
B's addresses or any customer; the queries are as many for 100 matches as for 10.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from builds.models import Server
from deployment.models import Rack, RackPlacement, ServerNetwork, Site
from deployment.services import feed_create, network_set, placement_create, rack_create, site_create
from pm import search
from tests import factories
from tests.deployment.rack_rig import RackWorld, make_rack_world
from tests.tenants_rig import Tenants
from werkbank.models import Organization

pytestmark = pytest.mark.django_db


@dataclass
class World:
    rig: RackWorld
    room: Site
    rack_b: Rack
    server_b2: Server

    @property
    def t(self) -> Tenants:
        return self.rig.t


@pytest.fixture
def world(tenants: Tenants) -> World:
    rig = make_rack_world(tenants)
    pm = tenants.pm
    room = site_create(
        actor=pm,
        name="Beta Room Plovdiv",
        kind="customer_room",
        operator="Beta facilities",
        customer=tenants.customer_b,
        address="Plovdiv, hall 2",
        country="BG",
    )
    rack_b = rack_create(site=room, actor=pm, name="RB-1", height_u=42)
    feed = feed_create(rack=rack_b, actor=pm, name="A1", leg="A", voltage_v=230, current_a=32, phases=3)
    order = factories.OrderFactory(customer=tenants.customer_b, server_count=1)
    [server_b2] = factories.make_servers(order, status="burn_in_passed")
    Server.objects.filter(pk=server_b2.pk).update(partner=tenants.partner_q)
    server_b2.refresh_from_db()
    placement_create(server=server_b2, rack=rack_b, lowest_u=1, feeds=[feed], actor=pm)
    network_set(
        server=server_b2,
        actor=pm,
        management_ip="10.30.0.21",
        bmc_ip="10.31.0.21",
        bmc_mac="3c:ec:ef:ab:cd:ef",
    )
    return World(rig=rig, room=room, rack_b=rack_b, server_b2=server_b2)


def _get(user: Any, query: str) -> Any:
    client = Client()
    client.force_login(user)
    return client.get(f"/pm/search/?q={quote(query)}")


def _deployment(server: Server) -> str:
    return reverse("deployment:server", args=[server.pk])


def _kinds(html: str) -> set[str]:
    return {kind for kind in search.KINDS if f'data-kind="{kind}"' in html}


# --- a PM finds each kind ------------------------------------------------------------------------------


def test_a_customers_name_opens_its_admin_page(world: World):
    response = _get(world.t.pm, "alpha rentals gmbh")
    assert response.status_code == 302
    assert response.url == reverse("admin:werkbank_organization_change", args=[world.t.customer_a.pk])


def test_part_of_a_customers_name_lists_it_with_its_orders(world: World):
    html = _get(world.t.pm, "Rentals").content.decode()
    assert _kinds(html) == {"customer"}
    assert "Alpha Rentals GmbH" in html and "1 order" in html and "ops@alpha.example" in html
    # Partners are organizations too, but no customers.
    assert _kinds(_get(world.t.pm, "Werkstatt").content.decode()) == set()


def test_a_sites_name_opens_the_site_page(world: World):
    response = _get(world.t.pm, "SOFIA COLO 1")
    assert response.status_code == 302 and response.url == reverse(
        "deployment:site", args=[world.rig.site.pk]
    )
    html = _get(world.t.pm, "Plovdiv").content.decode()
    assert _kinds(html) == {"site"}
    assert f'href="{reverse("deployment:site", args=[world.room.pk])}"' in html
    assert "Customer&#x27;s own room · Beta facilities · BG" in html


def test_a_racks_name_opens_the_rack_page_and_lists_it_with_its_site(world: World):
    response = _get(world.t.pm, "r07")
    assert response.status_code == 302 and response.url == reverse(
        "deployment:rack", args=[world.rig.rack.pk]
    )
    html = _get(world.t.pm, "RB-").content.decode()
    assert _kinds(html) == {"rack"}
    assert f'href="{reverse("deployment:rack", args=[world.rack_b.pk])}"' in html
    assert "Beta Room Plovdiv · 42 U" in html


def test_two_racks_of_one_name_are_listed_with_their_sites(world: World):
    rack_create(site=world.room, actor=world.t.pm, name="R07")
    response = _get(world.t.pm, "R07")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Sofia Colo 1 · 42 U" in html and "Beta Room Plovdiv · 42 U" in html


@pytest.mark.parametrize("address", ["10.20.0.11", "10.21.0.11", " 10.20.0.11\n"])
def test_an_ip_address_opens_the_servers_deployment_page(world: World, address: str):
    response = _get(world.t.pm, address)
    assert response.status_code == 302 and response.url == _deployment(world.rig.server_a)


@pytest.mark.parametrize(
    "mac",
    [
        "3c:ec:ef:12:34:56",
        "3C:EC:EF:12:34:56",
        "3c-ec-ef-12-34-56",
        "3C-EC-EF-12-34-56",
        "3cec.ef12.3456",
        "3CEC.EF12.3456",
        "3cecef123456",
        " 3CECEF123456 ",
    ],
)
def test_a_mac_address_in_any_spelling_opens_the_servers_deployment_page(world: World, mac: str):
    response = _get(world.t.pm, mac)
    assert response.status_code == 302 and response.url == _deployment(world.rig.server_a)


def test_an_ip_prefix_lists_the_servers_with_the_addresses_it_found(world: World):
    html = _get(world.t.pm, "10.2").content.decode()
    assert _kinds(html) == {"address"}
    # Both of A's addresses start so, B's (10.30.0.21) do not.
    assert "10.20.0.11, 10.21.0.11" in html and "Management IP, BMC IP · " in html
    assert world.rig.server_a.hostname in html and world.server_b2.hostname not in html
    assert f'href="{_deployment(world.rig.server_a)}"' in html
    html = _get(world.t.pm, "10.").content.decode()
    assert world.rig.server_a.hostname in html and world.server_b2.hostname in html
    html = _get(world.t.pm, "10.31.").content.decode()
    assert "10.31.0.21" in html and "10.30.0.21" not in html and "BMC IP · " in html


@pytest.mark.parametrize("part", ["12:34:56", "12-34-56", "123456", "EF:12", "ef12.3456", "3CEC.EF12"])
def test_part_of_a_mac_in_any_spelling_lists_its_server(world: World, part: str):
    html = _get(world.t.pm, part).content.decode()
    assert "address" in _kinds(html), part
    assert "3c:ec:ef:12:34:56" in html and "BMC MAC · " in html, part
    assert "3c:ec:ef:ab:cd:ef" not in html, part


def test_the_oui_both_servers_share_lists_both(world: World):
    html = _get(world.t.pm, "3C-EC-EF").content.decode()
    assert "3c:ec:ef:12:34:56" in html and "3c:ec:ef:ab:cd:ef" in html


@pytest.mark.parametrize(
    "query",
    [
        "10.20.0.999",
        "10.20.0.11.5",
        "3c:ec:ef:12:34:5g",
        "01:00:5e:00:00:01",
        "fd00::1",
        "fd00:",
        "2026",
        "ef",
    ],
)
def test_queries_that_are_almost_addresses_find_nothing_and_fail_nothing(world: World, query: str):
    response = _get(world.t.pm, query)
    assert response.status_code == 200, query
    assert "address" not in _kinds(response.content.decode()), query


def test_two_bare_hex_pairs_are_no_mac(world: World):
    # "2026" or "0101" in a reference would otherwise list every MAC with that pair.
    assert search.AddressQuery.partial("1234").mac_part is None
    assert search.AddressQuery.partial("12:34").mac_part == "12:34"
    assert search.AddressQuery.partial("123456").mac_part == "12:34:56"
    assert search.AddressQuery.partial("bulk").condition() is None


# --- within visible_to ---------------------------------------------------------------------------------


def test_a_partner_finds_the_site_rack_and_addresses_of_its_own_server(world: World):
    user = world.t.user_p
    assert _get(user, "sofia colo 1").url == reverse("deployment:site", args=[world.rig.site.pk])
    assert _get(user, "R07").url == reverse("deployment:rack", args=[world.rig.rack.pk])
    for address in ("10.20.0.11", "3C-EC-EF-12-34-56"):
        assert _get(user, address).url == _deployment(world.rig.server_a), address
    client = Client()
    client.force_login(user)
    assert client.get(_deployment(world.rig.server_a)).status_code == 200  # the page it opens


def test_a_partner_never_finds_another_tenants_sites_racks_addresses_or_customers(world: World):
    user = world.t.user_p
    secrets = ["Beta Room Plovdiv", "RB-1", "10.30.0.21", "10.31.0.21", "3c:ec:ef:ab:cd:ef"]
    secrets += ["Alpha Rentals GmbH", "Beta Research AG"]
    for query in [*secrets, "Plovdiv", "RB-", "10.3", "ab:cd:ef", "3cec.efab.cdef", "Rentals", "Research"]:
        response = _get(user, query)
        assert response.status_code == 200, query
        html = response.content.decode()
        assert "Nothing found" in html, query
        for secret in secrets:
            if secret.lower() != query.lower():
                assert secret not in html, (query, secret)
    # The OUI both share finds only its own server's MAC.
    html = _get(user, "3c:ec:ef").content.decode()
    assert "3c:ec:ef:12:34:56" in html and "3c:ec:ef:ab:cd:ef" not in html


def test_a_partner_sees_a_shared_rack_but_not_the_other_servers_addresses(world: World):
    # Q's server stands in R07 too: Q finds the site and the rack, not A's server's addresses.
    user = world.t.user_q
    assert _get(user, "R07").url == reverse("deployment:rack", args=[world.rig.rack.pk])
    assert _get(user, "Beta Room Plovdiv").url == reverse("deployment:site", args=[world.room.pk])
    for query in ("10.20.0.11", "3c:ec:ef:12:34:56", "12:34:56"):
        assert "Nothing found" in _get(user, query).content.decode(), query


def test_customers_still_get_a_404(world: World):
    for user in (world.t.user_a, world.t.user_b):
        assert _get(user, "Sofia Colo 1").status_code == 404


# --- cost ----------------------------------------------------------------------------------------------

#: Queries of the search page: session and user, the PM-group check (a partner: the bench check instead),
#: then one exact and one partial lookup per kind: nine for a PM, and for a partner those whose querysets
#: ask the database (suppliers' give members none without asking), and for a PM on PostgreSQL the trigram
#: lookup of suppliers when none contains the query (none contains "bulk" or "10.9."). No serial matches:
#: no query for their servers. The addresses ask only for a query that reads as one: "bulk" asks nothing of
#: them, "10.9." one partial lookup (it is no whole address, so the exact step asks nothing).
_TRIGRAM = 1 if connection.vendor == "postgresql" else 0
QUERIES = {
    ("pm", "bulk"): 21 + _TRIGRAM,
    ("user_p", "bulk"): 19,
    ("pm", "10.9."): 22 + _TRIGRAM,
    ("user_p", "10.9."): 20,
}


def _matches(world: World, n: int) -> None:
    """`n` more customers, sites and racks named "bulk", and servers of partner P standing in the racks
    with management IPs 10.9.n.i."""
    Organization.objects.bulk_create(
        Organization(name=f"Bulk Customer {n}-{i}", kind="customer") for i in range(n)
    )
    sites = Site.objects.bulk_create(
        Site(name=f"Bulk Site {n}-{i}", kind="colocation", operator="Op", address="-", country="BG", eu=True)
        for i in range(n)
    )
    racks = Rack.objects.bulk_create(Rack(site=site, name=f"BULK-R{n}-{i}") for site in sites for i in [0])
    order = factories.OrderFactory(reference=f"WB-2027-{n:04d}", server_count=n)
    servers = Server.objects.bulk_create(
        Server(
            order=order,
            sequence=i + 1,
            hostname=f"bulk-{n}-{i:04d}",
            asset_tag=f"BULK-{n}-{i:04d}",
            partner=world.t.partner_p,
            status="deployed",
        )
        for i in range(n)
    )
    RackPlacement.objects.bulk_create(
        RackPlacement(server=server, rack=rack, lowest_u=1, height_u=1)
        for server, rack in zip(servers, racks, strict=True)
    )
    ServerNetwork.objects.bulk_create(
        ServerNetwork(
            server=server,
            management_ip=f"10.9.{n}.{i}",
            bmc_ip=f"10.8.{n}.{i}",
            bmc_mac=f"02:00:00:{n:02x}:00:{i:02x}",
        )
        for i, server in enumerate(servers)
    )


def _queries(user: Any, query: str) -> tuple[int, str]:
    client = Client()
    client.force_login(user)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(f"/pm/search/?q={quote(query)}")
    assert response.status_code == 200
    return len(captured), response.content.decode()


@pytest.mark.parametrize("who", ["pm", "user_p"])
def test_the_queries_are_the_same_for_10_and_100_matches_of_each_new_kind(world: World, who: str):
    user = getattr(world.t, who)
    for n in (10, 100):
        _matches(world, n)
        few_or_many = []
        for query in ("bulk", "10.9."):
            count, html = _queries(user, query)
            assert count == QUERIES[(who, query)], (query, n)
            few_or_many.append(html)
        bulk, addresses = few_or_many
        expected = {"site", "rack"} | ({"customer"} if who == "pm" else set())
        assert expected <= _kinds(bulk)
        assert "customer" not in _kinds(bulk) or who == "pm"
        assert _kinds(addresses) == {"address"}
        assert addresses.count('href="/deployment/servers/') == min(n, search.PER_KIND)
