"""Prefixes on the pages: the site page lists them (with the next free addresses for PMs), the server page
offers a placed server's next free addresses, and the admin writes prefixes through the services and fills
the network form with the offer."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from deployment.models import IPPrefix, ServerNetwork
from deployment.services import network_set, prefix_create, site_create
from tests.deployment.api_rig import make_rig
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _prefixed(tenants):
    r = make_rig(tenants)
    prefix_create(
        site=r.site, prefix="10.20.0.0/24", role="management", actor=r.t.pm, vlan=20, gateway="10.20.0.1"
    )
    prefix_create(site=r.site, prefix="10.99.0.0/24", role="bmc", actor=r.t.pm)
    network_set(
        server=r.b1, actor=r.t.pm, management_ip="10.20.0.2", bmc_ip="10.99.0.1", bmc_mac="3c:ec:ef:00:00:01"
    )
    return r


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_site_page_lists_the_prefixes_and_offers_pms_the_next_free_addresses(tenants):
    r = _prefixed(tenants)
    url = f"/deployment/sites/{r.site.pk}/"
    pm_page = _text(_client(r.t.pm).get(url).content.decode())
    assert "10.20.0.0/24" in pm_page and "10.20.0.1" in pm_page and "1 of 254" in pm_page
    assert "Management network: next free address 10.20.0.3 in 10.20.0.0/24" in pm_page
    assert "BMC (IPMI) network: next free address 10.99.0.2 in 10.99.0.0/24" in pm_page
    customer = _client(r.t.user_a).get(url).content.decode()
    assert "10.20.0.0/24" in customer and "next free" not in customer and "ipprefix/add" not in customer
    assert 'id="no-prefixes"' not in customer
    empty = site_create(
        actor=r.t.pm, name="Empty colo", kind="colocation", operator="O", address="A", country="BG"
    )
    with_none = _client(r.t.pm).get(f"/deployment/sites/{empty.pk}/").content.decode()
    assert 'id="no-prefixes"' in with_none
    assert "Management network: no free address" in _text(with_none)


def test_the_server_page_offers_a_placed_servers_next_free_addresses(tenants):
    r = _prefixed(tenants)
    page = _client(r.t.pm).get(f"/deployment/servers/{r.a1.pk}/").content.decode()
    offer = _text(page)
    assert "10.20.0.3 (10.20.0.0/24, VLAN 20, gateway 10.20.0.1)" in offer
    assert "10.99.0.2 (10.99.0.0/24)" in offer
    link = re.search(r'id="record-network" href="([^"]+)"|href="([^"]+)" id="record-network"', page)
    assert link is not None
    href = (link.group(1) or link.group(2)).replace("&amp;", "&")
    assert (
        href
        == f"/admin/deployment/servernetwork/add/?server={r.a1.pk}&management_ip=10.20.0.3&bmc_ip=10.99.0.2"
    )
    assert (
        'id="address-offer"'
        not in _client(r.t.user_a).get(f"/deployment/servers/{r.a1.pk}/").content.decode()
    )
    # A server with its network recorded is offered nothing.
    recorded = _client(r.t.pm).get(f"/deployment/servers/{r.b1.pk}/").content.decode()
    assert 'id="address-offer"' not in recorded


def test_the_admin_network_form_opened_for_a_server_is_filled_with_the_next_free_addresses(tenants):
    r = _prefixed(tenants)
    client = _client(r.t.pm)
    html = client.get(f"/admin/deployment/servernetwork/add/?server={r.a1.pk}").content.decode()
    assert 'name="management_ip" value="10.20.0.3"' in html
    assert 'name="bmc_ip" value="10.99.0.2"' in html
    given = client.get(f"/admin/deployment/servernetwork/add/?server={r.a1.pk}&management_ip=10.20.0.9")
    assert 'name="management_ip" value="10.20.0.9"' in given.content.decode()
    # Recording an address outside the prefixes is refused with the service's words.
    response = client.post(
        "/admin/deployment/servernetwork/add/",
        {
            "server": r.a1.pk,
            "management_ip": "10.9.0.5",
            "bmc_ip": "10.99.0.2",
            "bmc_mac": "3c:ec:ef:00:00:02",
        },
        follow=True,
    )
    assert "10.9.0.5 is outside the management prefixes of Sofia Colo 1: 10.20.0.0/24." in _text(
        response.content.decode()
    )
    assert not ServerNetwork.objects.filter(server=r.a1).exists()


def test_the_admin_writes_prefixes_through_the_services(tenants):
    r = _prefixed(tenants)
    client = _client(r.t.pm)
    added = client.post(
        "/admin/deployment/ipprefix/add/",
        {
            "site": r.site.pk,
            "prefix": "10.30.0.0/24",
            "role": "management",
            "vlan": "30",
            "gateway": "10.30.0.1",
        },
    )
    assert added.status_code == 302, added.content.decode()[:2000]
    prefix = IPPrefix.objects.get(prefix="10.30.0.0/24")
    assert AuditEvent.objects.filter(verb="deployment.prefix_create").count() == 3
    host_bits = client.post(
        "/admin/deployment/ipprefix/add/",
        {"site": r.site.pk, "prefix": "10.40.0.9/24", "role": "bmc"},
        follow=True,
    )
    assert "the network is 10.40.0.0/24" in host_bits.content.decode()
    changed = client.post(
        f"/admin/deployment/ipprefix/{prefix.pk}/change/",
        {"prefix": "10.30.0.0/23", "role": "management", "vlan": "", "gateway": "", "description": "two"},
    )
    assert changed.status_code == 302, changed.content.decode()[:2000]
    prefix.refresh_from_db()
    assert (prefix.prefix, prefix.vlan, prefix.gateway) == ("10.30.0.0/23", None, None)
    assert AuditEvent.objects.filter(verb="deployment.prefix_update").count() == 1
    listing = client.get("/admin/deployment/ipprefix/").content.decode()
    assert "10.30.0.0/23" in listing and "Sofia Colo 1" in listing
    used = IPPrefix.objects.get(prefix="10.99.0.0/24")
    response = client.post(
        "/admin/deployment/ipprefix/",
        {"action": "delete_prefixes", "_selected_action": [prefix.pk, used.pk]},
        follow=True,
    )
    text = _text(response.content.decode())
    assert f"10.99.0.0/24 of site Sofia Colo 1 holds addresses of {r.b1.hostname}." in text
    assert set(IPPrefix.objects.values_list("prefix", flat=True)) == {"10.20.0.0/24", "10.99.0.0/24"}
    for user in (r.t.user_a, r.t.user_p):
        assert _client(user).get("/admin/deployment/ipprefix/").status_code in {302, 403}
