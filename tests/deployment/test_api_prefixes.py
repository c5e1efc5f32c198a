"""IP prefixes through the API (`/api/v1/prefixes/`) and the next free address of a site
(`/api/v1/sites/{id}/next-address/`): PMs write through the services, whoever sees the site reads them."""

from __future__ import annotations

import pytest

from deployment.choices import SiteKind
from deployment.models import IPPrefix
from deployment.services import network_set, prefix_create, site_create
from tests.deployment.api_rig import ids, make_rig
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

PREFIXES = "/api/v1/prefixes/"


def _next(site) -> str:
    return f"/api/v1/sites/{site.pk}/next-address/"


def _room_of_a(r):
    """Customer A's own room (nobody else's server stands there), with a management prefix."""
    room = site_create(
        actor=r.t.pm,
        name="Alpha server room",
        kind=SiteKind.CUSTOMER_ROOM,
        operator="Alpha facilities",
        customer=r.t.customer_a,
        address="Berlin",
        country="DE",
    )
    return room, prefix_create(site=room, prefix="192.168.50.0/24", role="management", actor=r.t.pm)


def test_a_pm_creates_changes_and_deletes_a_prefix(tenants):
    r = make_rig(tenants)
    body = {
        "site": r.site.pk,
        "prefix": "10.20.0.0/24",
        "role": "management",
        "vlan": 20,
        "gateway": "10.20.0.1",
    }
    created = r.post(r.t.pm, PREFIXES, body)
    assert created.status_code == 201, created.content
    row = created.json()
    assert (row["prefix"], row["site_name"], row["vlan"], row["gateway"]) == (
        "10.20.0.0/24",
        "Sofia Colo 1",
        20,
        "10.20.0.1",
    )
    assert AuditEvent.objects.filter(verb="deployment.prefix_create").count() == 1

    changed = r.patch(r.t.pm, f"{PREFIXES}{row['id']}/", {"prefix": "10.20.0.0/23", "description": "Mgmt"})
    assert changed.status_code == 200, changed.content
    assert (changed.json()["prefix"], changed.json()["description"]) == ("10.20.0.0/23", "Mgmt")
    assert AuditEvent.objects.filter(verb="deployment.prefix_update").count() == 1
    moved = r.patch(r.t.pm, f"{PREFIXES}{row['id']}/", {"site": _room_of_a(r)[0].pk})
    assert moved.status_code == 400 and "site" in moved.json()

    deleted = api_client(r.t.pm).delete(f"{PREFIXES}{row['id']}/")
    assert deleted.status_code == 204
    assert not IPPrefix.objects.filter(pk=row["id"]).exists()
    assert AuditEvent.objects.filter(verb="deployment.prefix_delete").count() == 1


def test_bad_prefixes_are_400s_naming_the_field_and_overlaps_409s(tenants):
    r = make_rig(tenants)
    body = {"site": r.site.pk, "prefix": "10.20.0.0/24", "role": "management"}
    host_bits = r.post(r.t.pm, PREFIXES, {**body, "prefix": "10.20.0.7/24"})
    assert host_bits.status_code == 400
    assert "the network is 10.20.0.0/24" in str(host_bits.json()["prefix"])
    outside = r.post(r.t.pm, PREFIXES, {**body, "gateway": "10.21.0.1"})
    assert outside.status_code == 400 and "gateway" in outside.json()
    assert r.post(r.t.pm, PREFIXES, {**body, "vlan": 5000}).status_code == 400
    assert r.post(r.t.pm, PREFIXES, body).status_code == 201
    overlap = r.post(r.t.pm, PREFIXES, {**body, "prefix": "10.20.0.128/25", "role": "bmc"})
    assert overlap.status_code == 409 and overlap.json()["code"] == "prefix_overlap"
    unknown_site = r.post(r.t.pm, PREFIXES, {**body, "site": 999999})
    assert unknown_site.status_code == 404 and "site" in unknown_site.json()


def test_a_prefix_in_use_is_not_deleted(tenants):
    r = make_rig(tenants)
    prefix = prefix_create(site=r.site, prefix="10.20.0.0/24", role="management", actor=r.t.pm)
    network_set(
        server=r.a1, actor=r.t.pm, management_ip="10.20.0.5", bmc_ip="10.99.0.5", bmc_mac="3c:ec:ef:00:00:05"
    )
    refused = api_client(r.t.pm).delete(f"{PREFIXES}{prefix.pk}/")
    assert refused.status_code == 409 and refused.json()["code"] == "prefix_in_use"
    assert r.a1.hostname in refused.json()["detail"]


def test_each_reads_the_prefixes_of_the_sites_they_see_and_only_pms_write(tenants):
    r = make_rig(tenants)
    colo = prefix_create(site=r.site, prefix="10.20.0.0/24", role="management", actor=r.t.pm)
    room, own = _room_of_a(r)
    assert ids(r.get(r.t.pm, PREFIXES)) == {colo.pk, own.pk}
    assert ids(r.get(r.t.user_a, PREFIXES)) == {colo.pk, own.pk}
    for user in (r.t.user_b, r.t.user_p, r.t.user_q):  # their servers stand in the colocation only
        assert ids(r.get(user, PREFIXES)) == {colo.pk}, user.username
    assert ids(r.get(r.t.outsider, PREFIXES)) == set()
    assert ids(r.get(r.t.pm, PREFIXES, site=room.pk)) == {own.pk}
    assert ids(r.get(r.t.pm, PREFIXES, q="192.168")) == {own.pk}
    assert ids(r.get(r.t.pm, PREFIXES, role="bmc")) == set()
    assert r.get(r.t.user_b, PREFIXES, site=room.pk).status_code == 400  # not a site B may name

    url = f"{PREFIXES}{own.pk}/"
    for user in (r.t.user_b, r.t.user_p, r.t.user_q, r.t.outsider):
        assert r.get(user, url).status_code == 404, user.username
        assert r.patch(user, url, {"vlan": 7}).status_code == 404, user.username
        assert api_client(user).delete(url).status_code == 404, user.username
    assert r.get(r.t.user_a, url).status_code == 200
    assert r.patch(r.t.user_a, url, {"vlan": 7}).status_code == 403
    assert api_client(r.t.user_a).delete(url).status_code == 403
    body = {"site": room.pk, "prefix": "192.168.60.0/24", "role": "bmc"}
    assert r.post(r.t.user_a, PREFIXES, body).status_code == 403
    assert api_client(None).get(PREFIXES).status_code in {401, 403}
    own.refresh_from_db()
    assert own.vlan is None
    assert AuditEvent.objects.filter(verb__startswith="deployment.prefix_").count() == 2


def test_the_next_free_address_is_offered_to_pms(tenants):
    r = make_rig(tenants)
    prefix_create(
        site=r.site, prefix="10.20.0.0/29", role="management", actor=r.t.pm, gateway="10.20.0.1", vlan=20
    )
    network_set(
        server=r.a1, actor=r.t.pm, management_ip="10.20.0.2", bmc_ip="10.99.0.2", bmc_mac="3c:ec:ef:00:00:02"
    )
    answer = r.get(r.t.pm, _next(r.site), role="management")
    assert answer.status_code == 200, answer.content
    assert {key: answer.json()[key] for key in ("address", "prefix", "vlan", "gateway")} == {
        "address": "10.20.0.3",
        "prefix": "10.20.0.0/29",
        "vlan": 20,
        "gateway": "10.20.0.1",
    }
    none = r.get(r.t.pm, _next(r.site), role="bmc").json()
    assert none["address"] is None and none["detail"].startswith("No free BMC address at Sofia Colo 1")
    bad = r.get(r.t.pm, _next(r.site), role="storage")
    assert bad.status_code == 400 and "role" in bad.json()
    assert r.get(r.t.pm, _next(r.site)).status_code == 400
    # A member who sees the site is told it is the PMs'; anyone else does not find it.
    for user in (r.t.user_a, r.t.user_p, r.t.user_b):
        assert r.get(user, _next(r.site), role="management").status_code == 403, user.username
    room, _own = _room_of_a(r)
    for user in (r.t.user_b, r.t.user_p, r.t.outsider):
        assert r.get(user, _next(room), role="management").status_code == 404, user.username
    assert r.get(r.t.pm, "/api/v1/sites/999999/next-address/", role="management").status_code == 404


def test_the_prefix_list_costs_the_same_queries_for_more_rows(tenants, django_assert_max_num_queries):
    r = make_rig(tenants)
    for third in range(5):
        prefix_create(site=r.site, prefix=f"10.{third}.0.0/24", role="management", actor=r.t.pm)
    with django_assert_max_num_queries(3):
        assert len(r.get(r.t.user_a, PREFIXES).json()["results"]) == 5
