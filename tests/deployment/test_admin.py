"""The deployment admin as a PM uses it: sites and racks with their elevations, placements added through the
service with a "Deploy selected servers" action, write-only BMC credentials, append-only listings."""

from __future__ import annotations

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

from builds.choices import ServerStatus
from deployment.models import PlatformListing, PowerFeed, RackPlacement, ServerNetwork, Site
from deployment.services import network_set, server_deploy
from tests import factories
from tests.deployment.rack_rig import BMC_PASSWORD, make_rack_world
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

PLACEMENTS = "/admin/deployment/rackplacement/"


@pytest.fixture
def pm_browser(client, tenants):
    assert client.login(username="pm", password=factories.PASSWORD)
    return client


@pytest.fixture
def world(tenants):
    return make_rack_world(tenants)


@pytest.mark.parametrize(
    "path",
    ["site", "rack", "rackplacement", "servernetwork", "platformlisting"],
)
def test_the_lists_open_with_a_bounded_number_of_queries(
    pm_browser, world, path, django_assert_max_num_queries
):
    with django_assert_max_num_queries(16):
        response = pm_browser.get(f"/admin/deployment/{path}/")
    assert response.status_code == 200
    assert pm_browser.get(f"/admin/deployment/{path}/add/").status_code == 200


def test_members_have_no_admin(client, world, tenants):
    client.force_login(tenants.user_a)
    assert client.get("/admin/deployment/rack/").status_code == 302  # not staff: to the login


def test_the_rack_change_page_shows_the_elevation_beside_the_placements_and_the_feeds(pm_browser, world):
    html = pm_browser.get(f"/admin/deployment/rack/{world.rack.pk}/change/").content.decode()
    assert 'class="rack-elevation"' in html
    assert "A1 · 2,900 W of 2,944 W continuous (98.5 %) · 3,680 W rated" in html
    for server in (world.server_a, world.server_b):
        assert server.hostname in html
    assert "U1–U6" in html and "U10–U15" in html
    assert 'name="feeds-0-name"' in html  # the feed inline


def test_the_site_change_page_shows_its_racks_elevations(pm_browser, world, tenants):
    from deployment.services import rack_create

    rack_create(site=world.site, actor=tenants.pm, name="R08", height_u=24)
    html = pm_browser.get(f"/admin/deployment/site/{world.site.pk}/change/").content.decode()
    assert html.count('class="rack-elevation"') == 2
    assert "R07" in html and "R08" in html


def test_a_site_and_a_rack_with_feeds_are_added_through_the_services(pm_browser, tenants):
    response = pm_browser.post(
        "/admin/deployment/site/add/",
        {
            "name": "Frankfurt 2",
            "kind": "colocation",
            "operator": "Interxion",
            "address": "Hanauer Landstr.",
            "country": "DE",
            "customer": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    site = Site.objects.get(name="Frankfurt 2")
    assert site.eu is True
    response = pm_browser.post(
        "/admin/deployment/rack/add/",
        {
            "site": site.pk,
            "name": "F-01",
            "height_u": 42,
            "feeds-TOTAL_FORMS": 1,
            "feeds-INITIAL_FORMS": 0,
            "feeds-0-name": "A1",
            "feeds-0-leg": "A",
            "feeds-0-voltage_v": 230,
            "feeds-0-current_a": 16,
            "feeds-0-phases": 1,
            "placements-TOTAL_FORMS": 0,
            "placements-INITIAL_FORMS": 0,
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    feed = PowerFeed.objects.get(rack__site=site)
    assert (feed.name, feed.rated_w) == ("A1", 3680)
    verbs = set(AuditEvent.objects.values_list("verb", flat=True))
    assert {"deployment.site_create", "deployment.rack_create", "deployment.feed_create"} <= verbs


def test_a_placement_is_added_through_the_admin_form(pm_browser, world, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in_passed")
    body = {
        "server": server.pk,
        "rack": world.rack.pk,
        "lowest_u": 20,
        "face": "front",
        "feeds": [world.feeds["C1"].pk],
        "phases": "C1: L2",  # server B draws from L1 of C1
        "measured_wall_w": "",
        "power_override_reason": "",
    }
    response = pm_browser.post(f"{PLACEMENTS}add/", body)
    assert response.status_code == 302, response.content.decode()[:3000]
    placement = RackPlacement.objects.get(server=server)
    assert (placement.lowest_u, placement.top_u, placement.placed_by) == (20, 25, tenants.pm)
    assert list(placement.feeds.all()) == [world.feeds["C1"]]
    assert AuditEvent.objects.for_object(server).filter(verb="deployment.place").exists()
    # The rack's change page draws it.
    assert (
        server.hostname in pm_browser.get(f"/admin/deployment/rack/{world.rack.pk}/change/").content.decode()
    )


def test_an_overlapping_placement_is_refused_with_the_services_words(pm_browser, world, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in_passed")
    body = {
        "server": server.pk,
        "rack": world.rack.pk,
        "lowest_u": 3,
        "face": "front",
        "feeds": [world.feeds["C1"].pk],
        "measured_wall_w": "",
        "power_override_reason": "",
    }
    response = pm_browser.post(f"{PLACEMENTS}add/", body, follow=True)
    html = response.content.decode()
    assert world.server_a.hostname in html  # the refusal names the server in the way
    assert not RackPlacement.objects.filter(server=server).exists()


def test_deploy_selected_servers_deploys_the_ready_and_reports_each_refusal(pm_browser, world):
    placements = RackPlacement.objects.filter(server__in=[world.server_a, world.server_b])
    response = pm_browser.post(
        PLACEMENTS,
        {"action": "deploy", ACTION_CHECKBOX_NAME: [p.pk for p in placements]},
        follow=True,
    )
    messages = [str(m) for m in response.context["messages"]]
    assert f"{world.server_a.hostname}: deployed." in messages
    refusal = next(m for m in messages if world.server_b.hostname in m and "cannot be deployed" in m)
    assert "has no network record" in refusal
    world.server_a.refresh_from_db()
    world.server_b.refresh_from_db()
    assert (world.server_a.status, world.server_b.status) == (
        ServerStatus.DEPLOYED,
        ServerStatus.BURN_IN_PASSED,
    )


def test_network_form_writes_through_the_service_and_never_shows_the_password(pm_browser, world):
    html = pm_browser.get("/admin/deployment/servernetwork/add/").content.decode()
    assert 'type="password"' in html
    response = pm_browser.post(
        "/admin/deployment/servernetwork/add/",
        {
            "server": world.server_b.pk,
            "management_ip": "10.20.0.12",
            "bmc_ip": "10.21.0.12",
            "bmc_mac": "3C-EC-EF-12-34-57",
            "bmc_username": "ADMIN",
            "bmc_password": "Other-Secret-77",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    network = ServerNetwork.objects.get(server=world.server_b)
    assert network.bmc_mac == "3c:ec:ef:12:34:57"
    assert network.has_bmc_credentials and "Other-Secret-77" not in network.bmc_credentials
    change = pm_browser.get(f"/admin/deployment/servernetwork/{network.pk}/change/").content.decode()
    assert "Other-Secret-77" not in change and network.bmc_credentials not in change
    assert 'name="bmc_password"' in change and 'name="bmc_password" value' not in change
    listing = pm_browser.get("/admin/deployment/servernetwork/").content.decode()
    assert "Other-Secret-77" not in listing and BMC_PASSWORD not in listing
    assert "BMC credentials" in listing and ">set<" in listing
    # An edit with the password left empty keeps the stored credentials.
    token = network.bmc_credentials
    response = pm_browser.post(
        f"/admin/deployment/servernetwork/{network.pk}/change/",
        {
            "management_ip": "10.20.0.13",
            "bmc_ip": "10.21.0.12",
            "bmc_mac": "3c:ec:ef:12:34:57",
            "bmc_username": "",
            "bmc_password": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    network.refresh_from_db()
    assert (network.management_ip, network.bmc_credentials == token) == ("10.20.0.13", True)
    assert AuditEvent.objects.filter(verb="deployment.network").count() == 3


def test_a_taken_address_is_refused_naming_the_server(pm_browser, world):
    response = pm_browser.post(
        "/admin/deployment/servernetwork/add/",
        {
            "server": world.server_b.pk,
            "management_ip": "10.21.0.11",
            "bmc_ip": "10.21.0.99",
            "bmc_mac": "3c:ec:ef:12:34:99",
        },
        follow=True,
    )
    assert world.server_a.hostname in response.content.decode()
    assert not ServerNetwork.objects.filter(server=world.server_b).exists()


def test_listings_are_added_through_the_service_and_are_read_only(pm_browser, world, tenants):
    network_set(
        server=world.server_b,
        actor=tenants.pm,
        management_ip="10.20.0.12",
        bmc_ip="10.21.0.12",
        bmc_mac="3c:ec:ef:12:34:57",
    )
    server_deploy(server=world.server_b, actor=tenants.pm)
    response = pm_browser.post(
        "/admin/deployment/platformlisting/add/",
        {
            "server": world.server_b.pk,
            "platform": "vast_ai",
            "machine_id": "m-2002",
            "verification": "unverified",
            "reliability": "",
            "listed_on": "",
            "verified_on": "",
            "note": "",
        },
    )
    assert response.status_code == 302, response.content.decode()[:3000]
    listing = PlatformListing.objects.get(server=world.server_b)
    assert listing.recorded_by == tenants.pm and listing.listed_on is not None
    assert AuditEvent.objects.for_object(world.server_b).filter(verb="deployment.listing").count() == 1
    page = pm_browser.get(f"/admin/deployment/platformlisting/{listing.pk}/change/").content.decode()
    assert 'name="machine_id"' not in page  # read-only
    edit = pm_browser.post(f"/admin/deployment/platformlisting/{listing.pk}/change/", {"machine_id": "x"})
    assert edit.status_code == 403
    # Not deployed: the service refuses, and nothing is written.
    refused = pm_browser.post(
        "/admin/deployment/platformlisting/add/",
        {
            "server": world.server_a.pk,
            "platform": "vast_ai",
            "machine_id": "m-2003",
            "verification": "unverified",
            "reliability": "",
            "listed_on": "",
            "verified_on": "",
            "note": "",
        },
        follow=True,
    )
    assert "only a deployed server is listed" in refused.content.decode()
    assert not PlatformListing.objects.filter(server=world.server_a).exists()
