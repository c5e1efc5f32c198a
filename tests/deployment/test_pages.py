"""The deployment pages (/deployment/): rack, site and server, who sees what, and the Deploy form."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest
from django.test import Client

from builds.choices import ServerStatus
from builds.models import Server
from deployment.models import RackPlacement, ServerNetwork
from tests.deployment.rack_rig import BMC_PASSWORD, BMC_USERNAME, make_rack_world
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def world(tenants):
    return make_rack_world(tenants)


def _pages(world) -> list[str]:
    return [
        f"/deployment/racks/{world.rack.pk}/",
        f"/deployment/sites/{world.site.pk}/",
        f"/deployment/servers/{world.server_a.pk}/",
    ]


def _svg(html: str) -> ET.Element:
    start = html.index("<svg")
    return ET.fromstring(html[start : html.index("</svg>", start) + len("</svg>")])


def test_the_pm_sees_every_server_on_the_rack_page_with_the_feed_loads(
    world, tenants, django_assert_max_num_queries
):
    pm = _client(tenants.pm)
    with django_assert_max_num_queries(12):
        response = pm.get(f"/deployment/racks/{world.rack.pk}/")
    assert response.status_code == 200
    html = response.content.decode()
    _svg(html)  # the inline elevation is well-formed
    for server in (world.server_a, world.server_b):
        assert server.hostname in html
    assert "A1 · 2,900 W of 2,944 W continuous (98.5 %) · 3,680 W rated" in html
    assert "measured at the outlet" in html and "configuration budget (TDP)" in html
    assert "30U free" in html
    # More servers, the same queries.
    from deployment.services import placement_create
    from tests import factories

    order = factories.OrderFactory(customer=tenants.customer_a, server_count=3)
    for n, server in enumerate(factories.make_servers(order, status="burn_in_passed")):
        placement_create(
            server=server,
            rack=world.rack,
            lowest_u=20 + 6 * n,
            feeds=[world.feeds["C1"]],
            actor=tenants.pm,
            measured_wall_w=1000,
            phases={world.feeds["C1"].pk: ("L2", "L3", "L2+L3")[n]},  # server B is on L1
        )
    with django_assert_max_num_queries(12):
        assert "12U free" in pm.get(f"/deployment/racks/{world.rack.pk}/").content.decode()


@pytest.mark.parametrize(
    ("viewer", "own", "other"),
    [
        ("user_a", "server_a", "server_b"),
        ("user_b", "server_b", "server_a"),
        ("user_p", "server_a", "server_b"),
        ("user_q", "server_b", "server_a"),
    ],
)
def test_members_see_their_own_servers_and_the_others_as_occupied(world, tenants, viewer, own, other):
    client = _client(getattr(tenants, viewer))
    mine, theirs = getattr(world, own), getattr(world, other)
    for url in (f"/deployment/racks/{world.rack.pk}/", f"/deployment/sites/{world.site.pk}/"):
        response = client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert mine.hostname in html, url
        assert theirs.hostname not in html, url
        assert theirs.asset_tag not in html, url
        assert f"/deployment/servers/{theirs.pk}/" not in html, url
        assert "occupied" in html, url
    rack = client.get(f"/deployment/racks/{world.rack.pk}/").content.decode()
    assert "another server (occupied)" in rack  # the feed table does not name it either
    assert client.get(f"/deployment/servers/{mine.pk}/").status_code == 200
    assert client.get(f"/deployment/servers/{theirs.pk}/").status_code == 404


def test_outsiders_get_a_404_and_anonymous_users_the_login(world, tenants, client):
    for url in _pages(world):
        assert _client(tenants.outsider).get(url).status_code == 404, url
        assert client.get(url).status_code == 302, url
    assert _client(tenants.pm).get("/deployment/racks/999999/").status_code == 404


def test_a_customer_room_is_a_404_for_the_other_tenants(world, tenants):
    from deployment.services import rack_create, site_create

    room = site_create(
        actor=tenants.pm,
        name="Beta server room",
        kind="customer_room",
        operator="Beta facilities",
        customer=tenants.customer_b,
        address="Basel",
        country="CH",
    )
    rack = rack_create(site=room, actor=tenants.pm, name="B-01", height_u=24)
    for url in (f"/deployment/sites/{room.pk}/", f"/deployment/racks/{rack.pk}/"):
        assert _client(tenants.user_b).get(url).status_code == 200
        for user in (tenants.user_a, tenants.user_p, tenants.user_q, tenants.outsider):
            assert _client(user).get(url).status_code == 404, (url, user.username)
    site_page = _client(tenants.user_b).get(f"/deployment/sites/{room.pk}/").content.decode()
    assert "Beta server room" in site_page and "B-01" in site_page and "outside the EU" in site_page


def test_the_site_page_shows_its_racks_side_by_side(world, tenants):
    from deployment.services import rack_create

    rack_create(site=world.site, actor=tenants.pm, name="R08", height_u=42)
    html = _client(tenants.pm).get(f"/deployment/sites/{world.site.pk}/").content.decode()
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="rack-elevation"') == 2
    assert "Telepoint" in html and "(EU)" in html
    # A customer sees only the rack that holds its server.
    customer = _client(tenants.user_a).get(f"/deployment/sites/{world.site.pk}/").content.decode()
    assert customer.count('class="rack-elevation"') == 1


def test_the_server_page_shows_placement_power_network_and_listing_history(world, tenants):
    from deployment.services import listing_record, server_deploy

    server_deploy(server=world.server_a, actor=tenants.pm)
    listing_record(server=world.server_a, actor=tenants.pm, platform="vast_ai", machine_id="m-1001")
    listing_record(
        server=world.server_a,
        actor=tenants.pm,
        platform="vast_ai",
        machine_id="m-1001",
        verification="verified",
        reliability="0.995",
    )
    html = _client(tenants.user_a).get(f"/deployment/servers/{world.server_a.pk}/").content.decode()
    assert "Sofia Colo 1" in html and "R07" in html
    assert "U1–U6 (6U, front)" in html
    assert "A1 (leg A), B1 (leg B)" in html
    assert "2,900 W · measured at the outlet" in html
    assert "10.20.0.11" in html and "10.21.0.11" in html and "3c:ec:ef:12:34:56" in html
    assert '<dd id="bmc-credentials">stored (encrypted)</dd>' in html
    assert "99.50 %" in html
    # Newest first: the verified row before the unverified one.
    assert html.index("Verified") < html.index("Unverified")
    assert 'id="deploy-form"' not in html  # only PMs deploy
    b_page = _client(tenants.user_b).get(f"/deployment/servers/{world.server_b.pk}/").content.decode()
    assert '<dd id="bmc-credentials">' not in b_page and "No network record yet" in b_page
    assert "has no network record" in b_page  # the deploy check


def test_the_power_override_reason_is_on_the_pms_page_only(world, tenants):
    # Why a PM let a circuit run hot is an internal note (werkbank/audiences.py).
    RackPlacement.objects.filter(server=world.server_a).update(power_override_reason="Colo lets us run hot")
    url = f"/deployment/servers/{world.server_a.pk}/"
    assert "Colo lets us run hot" in _client(tenants.pm).get(url).content.decode()
    for user in (tenants.user_a, tenants.user_p):
        page = _client(user).get(url)
        assert page.status_code == 200 and "Colo lets us run hot" not in page.content.decode()


def test_the_bmc_secret_appears_on_no_page(world, tenants):
    token = ServerNetwork.objects.get(server=world.server_a).bmc_credentials
    assert token and BMC_PASSWORD not in token
    pm = _client(tenants.pm)
    network = ServerNetwork.objects.get(server=world.server_a)
    urls = [
        *_pages(world),
        "/admin/deployment/servernetwork/",
        f"/admin/deployment/servernetwork/{network.pk}/change/",
        f"/admin/builds/server/{world.server_a.pk}/change/",
    ]
    for user in (tenants.pm, tenants.user_a, tenants.user_p):
        for url in urls if user == tenants.pm else _pages(world):
            html = _client(user).get(url).content.decode()
            assert BMC_PASSWORD not in html, url
            assert BMC_USERNAME not in html, url
            assert token not in html, url
    listing = pm.get("/admin/deployment/servernetwork/").content.decode()
    assert "set" in listing


def test_the_deploy_form_deploys_a_ready_server(world, tenants):
    pm = _client(tenants.pm)
    page = pm.get(f"/deployment/servers/{world.server_a.pk}/").content.decode()
    assert 'id="deploy-form"' in page and "csrfmiddlewaretoken" in page
    response = pm.post(
        f"/deployment/servers/{world.server_a.pk}/deploy/", {"note": "racked in Sofia"}, follow=True
    )
    assert response.status_code == 200
    world.server_a.refresh_from_db()
    assert world.server_a.status == ServerStatus.DEPLOYED
    assert f"{world.server_a.hostname} is deployed." in response.content.decode()
    assert AuditEvent.objects.for_object(world.server_a).filter(verb="deployment.deploy").exists()


def test_the_deploy_form_shows_what_is_missing(world, tenants):
    pm = _client(tenants.pm)
    response = pm.post(f"/deployment/servers/{world.server_b.pk}/deploy/", follow=True)
    assert response.status_code == 200
    html = response.content.decode()
    messages = [str(m) for m in response.context["messages"]]
    assert messages[0] == f"{world.server_b.hostname} was not deployed."
    assert any("has no network record" in m for m in messages)
    assert "has no network record" in html
    world.server_b.refresh_from_db()
    assert world.server_b.status == ServerStatus.BURN_IN_PASSED


def test_only_pms_deploy(world, tenants):
    url = f"/deployment/servers/{world.server_a.pk}/deploy/"
    assert _client(tenants.user_a).post(url).status_code == 403  # sees it, may not deploy it
    assert _client(tenants.user_b).post(url).status_code == 404
    assert _client(tenants.pm).get(url).status_code == 405
    world.server_a.refresh_from_db()
    assert world.server_a.status == ServerStatus.BURN_IN_PASSED


def test_the_bench_page_links_to_the_deployment_page(world, tenants):
    html = _client(tenants.user_p).get(f"/bench/servers/{world.server_a.pk}/").content.decode()
    assert f'href="/deployment/servers/{world.server_a.pk}/" id="deployment-link"' in html


def test_a_customer_page_names_neither_the_partner_nor_the_staff(world, tenants):
    # The role rule (werkbank/audiences.py): a customer never learns who built the server or which staff
    # login placed it; the builder's side (PMs, the partner) does.
    url = f"/deployment/servers/{world.server_a.pk}/"
    partner = Server.objects.get(pk=world.server_a.pk).partner.name
    placed_by = tenants.pm.get_username()
    customer_page = _client(tenants.user_a).get(url).content.decode()
    assert f"built by {partner}" not in customer_page and f" by {placed_by}" not in customer_page
    builder_page = _client(tenants.user_p).get(url).content.decode()
    assert f"built by {partner}" in builder_page and f" by {placed_by}" in builder_page
