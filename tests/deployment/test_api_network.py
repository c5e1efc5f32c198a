"""Network records through the API: addresses checked by the service (400 naming the field, 409 for an
address another server has), a rename on the way, and BMC credentials that go in and never come out."""

from __future__ import annotations

import pytest
from django.urls import reverse

from builds.choices import ServerStatus
from builds.models import Server
from deployment.models import ServerNetwork
from deployment.services import listing_record, network_set, prefix_create
from deployment.services.network import bmc_credentials
from tests.deployment.api_rig import ids, make_rig
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent
from werkbank.urls import api_router

pytestmark = pytest.mark.django_db

NETWORKS = "/api/v1/networks/"
PASSWORD = "Zebra-Quokka-7731!"  # distinctive: found nowhere else
USERNAME = "bmc-admin-quokka"


def _network_b1(r) -> ServerNetwork:
    return network_set(
        server=r.b1, actor=r.t.pm, management_ip="10.0.0.1", bmc_ip="10.1.0.1", bmc_mac="3c:ec:ef:00:00:01"
    )


def _body(r, **overrides):
    return {
        "server": r.a1.pk,
        "management_ip": "10.0.0.11",
        "bmc_ip": "10.1.0.11",
        "bmc_mac": "3C-EC-EF-00-00-11",
        **overrides,
    }


def test_a_pm_records_a_servers_network(tenants):
    r = make_rig(tenants)
    response = r.post(
        r.t.pm, NETWORKS, _body(r, hostname="gpu-a1", bmc_username=USERNAME, bmc_password=PASSWORD)
    )
    assert response.status_code == 201, response.content
    row = response.json()
    assert row == {
        "id": row["id"],
        "server": r.a1.pk,
        "hostname": "gpu-a1",
        "asset_tag": r.a1.asset_tag,
        "management_ip": "10.0.0.11",
        "bmc_ip": "10.1.0.11",
        "bmc_mac": "3c:ec:ef:00:00:11",
        "bmc_credentials_set": True,
        "updated_at": row["updated_at"],
    }
    network = ServerNetwork.objects.get(pk=row["id"])
    assert bmc_credentials(network=network) == {"username": USERNAME, "password": PASSWORD}
    r.a1.refresh_from_db()
    assert r.a1.hostname == "gpu-a1"
    assert (
        AuditEvent.objects.for_object(r.a1).get(verb="deployment.network").after["bmc_credentials"] == "set"
    )
    again = r.post(r.t.pm, NETWORKS, _body(r))
    assert again.status_code == 409 and again.json()["code"] == "network_exists"


def test_a_pm_changes_addresses_and_credentials(tenants):
    r = make_rig(tenants)
    url = f"{NETWORKS}{r.post(r.t.pm, NETWORKS, _body(r, bmc_username=USERNAME)).json()['id']}/"
    changed = r.patch(r.t.pm, url, {"bmc_ip": "10.1.0.99", "bmc_password": PASSWORD})
    assert changed.status_code == 200, changed.content
    assert (changed.json()["bmc_ip"], changed.json()["management_ip"]) == ("10.1.0.99", "10.0.0.11")
    network = ServerNetwork.objects.get(server=r.a1)
    assert bmc_credentials(network=network) == {"username": USERNAME, "password": PASSWORD}
    cleared = r.patch(r.t.pm, url, {"clear_bmc_credentials": True})
    assert cleared.json()["bmc_credentials_set"] is False
    assert ServerNetwork.objects.get(server=r.a1).bmc_credentials == ""
    both = r.patch(r.t.pm, url, {"clear_bmc_credentials": True, "bmc_password": "x"})
    assert both.status_code == 400 and "clear_bmc_credentials" in both.json()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("management_ip", "10.0.0.300"),
        ("management_ip", "not-an-ip"),
        ("bmc_ip", "127.0.0.1"),
        ("bmc_mac", "3c:ec:ef:00:00"),
        ("bmc_mac", "zz:ec:ef:00:00:11"),
    ],
)
def test_an_invalid_address_is_a_400_naming_the_field(tenants, field, value):
    r = make_rig(tenants)
    response = r.post(r.t.pm, NETWORKS, _body(r, **{field: value}))
    assert response.status_code == 400, response.content
    assert list(response.json()) == [field]
    assert not ServerNetwork.objects.exists()


@pytest.mark.parametrize(
    ("field", "value"),
    [("management_ip", "10.0.0.1"), ("bmc_ip", "10.0.0.1"), ("bmc_mac", "3c:ec:ef:00:00:01")],
)
def test_an_address_another_server_has_is_a_409_naming_it(tenants, field, value):
    r = make_rig(tenants)
    _network_b1(r)
    response = r.post(r.t.pm, NETWORKS, _body(r, **{field: value}))
    assert response.status_code == 409, response.content
    assert response.json()["code"] == "address_taken"
    assert r.b1.hostname in response.json()["detail"]
    assert not ServerNetwork.objects.filter(server=r.a1).exists()


def test_an_unknown_server_is_a_404_naming_it(tenants):
    r = make_rig(tenants)
    response = r.post(r.t.pm, NETWORKS, _body(r, server=999999))
    assert response.status_code == 404, response.content
    assert "server" in response.json()


def test_a_taken_hostname_is_a_409(tenants):
    r = make_rig(tenants)
    response = r.post(r.t.pm, NETWORKS, _body(r, hostname=r.b1.hostname))
    assert response.status_code == 409 and response.json()["code"] == "hostname_taken"


def test_each_sees_the_network_of_their_servers_and_only_pms_write(tenants):
    r = make_rig(tenants)
    mine = r.post(r.t.pm, NETWORKS, _body(r)).json()["id"]
    theirs = _network_b1(r).pk
    assert ids(r.get(r.t.pm, NETWORKS)) == {mine, theirs}
    for user in (r.t.user_a, r.t.user_p):
        assert ids(r.get(user, NETWORKS)) == {mine}
    for user in (r.t.user_b, r.t.user_q):
        assert ids(r.get(user, NETWORKS)) == {theirs}
    assert ids(r.get(r.t.outsider, NETWORKS)) == set()
    assert r.get(r.t.user_q, NETWORKS, server=r.a1.pk).status_code == 400
    assert ids(r.get(r.t.pm, NETWORKS, q="10.1.0.1")) == {mine, theirs}
    assert ids(r.get(r.t.pm, NETWORKS, q=r.b1.asset_tag)) == {theirs}

    url = f"{NETWORKS}{mine}/"
    assert r.post(r.t.user_a, NETWORKS, _body(r, server=r.a2.pk)).status_code == 403
    for user in (r.t.user_a, r.t.user_p):
        assert r.patch(user, url, {"bmc_password": "mine"}).status_code == 403
    for user in (r.t.user_b, r.t.user_q, r.t.outsider):
        assert r.get(user, url).status_code == 404
        assert r.patch(user, url, {"bmc_password": "mine"}).status_code == 404
    assert ServerNetwork.objects.get(pk=mine).bmc_credentials == ""


def test_the_network_list_costs_two_queries(tenants, django_assert_max_num_queries):
    r = make_rig(tenants)
    r.post(r.t.pm, NETWORKS, _body(r))
    r.post(
        r.t.pm,
        NETWORKS,
        _body(r, server=r.a2.pk, management_ip="10.0.0.12", bmc_ip="10.1.0.12", bmc_mac="3c:ec:ef:00:00:12"),
    )
    with django_assert_max_num_queries(2):
        assert len(api_client(r.t.user_a).get(NETWORKS).json()["results"]) == 2


# --- the BMC credentials never leave ---------------------------------------------------------------------


def _deployment_urls(r, listing) -> list[str]:
    """Every route the deployment app registers, each filled with the rig's objects (the lists too)."""
    objects = {
        "sites": r.site.pk,
        "racks": r.rack.pk,
        "power-feeds": r.feed_a.pk,
        "placements": r.place_a1.pk,
        "networks": ServerNetwork.objects.get(server=r.a1).pk,
        "platform-listings": listing.pk,
        "deployment/servers": r.a1.asset_tag,
        "prefixes": prefix_create(
            site=r.site, prefix="10.0.0.0/24", role="management", actor=r.t.pm, gateway="10.0.0.254"
        ).pk,
    }
    deployment = {
        prefix for prefix, viewset, _ in api_router.registry if viewset.__module__.startswith("deployment.")
    }
    assert deployment == set(objects), "a new deployment route needs its object here"
    # Routes on these prefixes, whichever app's viewset serves them (the elevation drawing, say).
    by_basename = {
        basename: objects[prefix] for prefix, _, basename in api_router.registry if prefix in objects
    }
    urls = []
    for pattern in api_router.urls:
        groups = set(pattern.pattern.regex.groupindex)
        basename = max(
            (b for b in by_basename if (pattern.name or "").startswith(f"{b}-")), key=len, default=None
        )
        if basename is None or "format" in groups:
            continue
        url = reverse(pattern.name, kwargs={key: by_basename[basename] for key in groups})
        urls.append(f"{url}?role=management" if pattern.name == "site-address-next-address" else url)
    return urls


def test_bmc_credentials_are_in_no_deployment_response(tenants):
    r = make_rig(tenants)
    created = r.post(r.t.pm, NETWORKS, _body(r, bmc_username=USERNAME, bmc_password=PASSWORD))
    changed = r.patch(r.t.pm, f"{NETWORKS}{created.json()['id']}/", {"bmc_password": PASSWORD})
    network = ServerNetwork.objects.get(server=r.a1)
    token = network.bmc_credentials
    assert token and PASSWORD not in token
    Server.objects.filter(pk=r.a1.pk).update(status=ServerStatus.DEPLOYED)
    r.a1.refresh_from_db()
    listing = listing_record(server=r.a1, actor=r.t.pm, platform="vast_ai", machine_id="m-1")

    urls = _deployment_urls(r, listing)
    assert len(urls) >= 15, urls
    responses = [created, changed]
    for user in (r.t.pm, r.t.user_a, r.t.user_p):
        for url in urls:
            response = api_client(user).get(url)
            # The next free address is offered to PMs only; a member who sees the site is told so.
            allowed = {200, 405} if user == r.t.pm or "next-address" not in url else {403}
            assert response.status_code in allowed, (user.username, url, response.status_code)
            responses.append(response)
    for response in responses:
        body = response.content.decode()
        for secret in (PASSWORD, USERNAME, token, token[:40]):
            assert secret not in body, response.request["PATH_INFO"]
        assert 'bmc_credentials"' not in body.replace("bmc_credentials_set", "")
    # Nor in the audit trail the events endpoint shows.
    for event in AuditEvent.objects.filter(verb="deployment.network"):
        assert PASSWORD not in str(event.after) and USERNAME not in str(event.after)
