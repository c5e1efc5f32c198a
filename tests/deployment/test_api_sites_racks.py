"""Sites, racks and their power feeds through the API: PM writes through the services, reads for whoever
sees the rows, the circuits' loads, and a rack's power view that never names another tenant's server."""

from __future__ import annotations

import pytest

from deployment.choices import SiteKind
from deployment.models import PowerFeed, Rack, Site
from deployment.services import rack_create, site_create
from tests.deployment.api_rig import ids, make_rig
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

SITES = "/api/v1/sites/"
RACKS = "/api/v1/racks/"
FEEDS = "/api/v1/power-feeds/"


def _room_of_a(r) -> Site:
    return site_create(
        actor=r.t.pm,
        name="Alpha server room",
        kind=SiteKind.CUSTOMER_ROOM,
        operator="Alpha facilities",
        customer=r.t.customer_a,
        address="Berlin",
        country="DE",
    )


# --- sites ---------------------------------------------------------------------------------------------


def test_a_pm_creates_and_changes_sites(tenants):
    r = make_rig(tenants)
    body = {
        "name": "Frankfurt Colo",
        "kind": "colocation",
        "operator": "Interxion",
        "address": "Hanauer Landstr.",
        "country": "de",
    }
    created = r.post(r.t.pm, SITES, body)
    assert created.status_code == 201, created.content
    row = created.json()
    assert (row["country"], row["eu"], row["customer"], row["rack_count"]) == ("DE", True, None, 0)
    assert AuditEvent.objects.filter(verb="deployment.site_create").count() == 2  # the rig's and this one

    room = r.post(
        r.t.pm,
        SITES,
        {
            **body,
            "name": "Alpha room",
            "kind": "customer_room",
            "customer": r.t.customer_a.pk,
            "country": "CH",
        },
    )
    assert room.status_code == 201, room.content
    assert (room.json()["customer_name"], room.json()["eu"]) == (r.t.customer_a.name, False)

    changed = r.patch(r.t.pm, f"{SITES}{row['id']}/", {"country": "US", "operator": "Equinix"})
    assert changed.status_code == 200, changed.content
    assert (changed.json()["eu"], changed.json()["operator"], changed.json()["name"]) == (
        False,
        "Equinix",
        "Frankfurt Colo",
    )
    sofia = r.get(r.t.pm, f"{SITES}{r.site.pk}/").json()
    assert sofia["rack_count"] == 1


def test_site_bad_input_names_the_field(tenants):
    r = make_rig(tenants)
    body = {"name": "X", "kind": "colocation", "operator": "O", "address": "A", "country": "BG"}
    bad_kind = r.post(r.t.pm, SITES, {**body, "kind": "basement"})
    assert bad_kind.status_code == 400 and "kind" in bad_kind.json()
    bad_country = r.post(r.t.pm, SITES, {**body, "country": "Bulgaria"})
    assert bad_country.status_code == 400 and "country" in bad_country.json()
    colo_with_customer = r.post(r.t.pm, SITES, {**body, "customer": r.t.customer_a.pk})
    assert colo_with_customer.status_code == 400 and "customer" in colo_with_customer.json()
    unknown = r.post(r.t.pm, SITES, {**body, "kind": "customer_room", "customer": 999999})
    assert unknown.status_code == 404, unknown.content
    assert "customer" in unknown.json()
    taken = r.post(r.t.pm, SITES, {**body, "name": "Sofia Colo 1"})
    assert taken.status_code == 409 and taken.json()["code"] == "name_taken"
    assert Site.objects.count() == 1


def test_each_sees_the_sites_of_their_servers_and_rooms(tenants):
    r = make_rig(tenants)
    room = _room_of_a(r)
    assert ids(r.get(r.t.pm, SITES)) == {r.site.pk, room.pk}
    assert ids(r.get(r.t.user_a, SITES)) == {r.site.pk, room.pk}
    assert ids(r.get(r.t.user_p, SITES)) == {r.site.pk}
    for user in (r.t.user_b, r.t.user_q):
        assert ids(r.get(user, SITES)) == {r.site.pk}
    assert ids(r.get(r.t.outsider, SITES)) == set()
    assert r.get(r.t.user_b, f"{SITES}{room.pk}/").status_code == 404
    assert ids(r.get(r.t.pm, SITES, kind="customer_room")) == {room.pk}
    assert ids(r.get(r.t.pm, SITES, q="alpha")) == {room.pk}


def test_only_pms_write_sites(tenants):
    r = make_rig(tenants)
    room = _room_of_a(r)
    body = {"name": "Mine", "kind": "colocation", "operator": "O", "address": "A", "country": "BG"}
    for user in (r.t.user_a, r.t.user_p, r.t.outsider):
        assert r.post(user, SITES, body).status_code == 403
    assert r.patch(r.t.user_a, f"{SITES}{room.pk}/", {"operator": "x"}).status_code == 403  # sees it
    assert r.patch(r.t.user_b, f"{SITES}{room.pk}/", {"operator": "x"}).status_code == 404  # does not
    room.refresh_from_db()
    assert room.operator == "Alpha facilities"


def test_the_site_list_costs_two_queries(tenants, django_assert_max_num_queries):
    r = make_rig(tenants)
    _room_of_a(r)
    for n in range(4):
        site_create(
            actor=r.t.pm,
            name=f"S{n}",
            kind="colocation",
            operator="O",
            customer=None,
            address="A",
            country="NL",
        )
    client = api_client(r.t.user_a)
    with django_assert_max_num_queries(2):
        assert len(client.get(SITES).json()["results"]) == 2
    with django_assert_max_num_queries(3):  # and the PM check
        assert len(api_client(r.t.pm).get(SITES).json()["results"]) == 6


# --- racks ---------------------------------------------------------------------------------------------


def test_a_rack_shows_its_circuits_and_their_loads(tenants):
    r = make_rig(tenants)
    row = r.get(r.t.user_a, f"{RACKS}{r.rack.pk}/").json()
    assert (row["name"], row["site"], row["site_name"], row["height_u"], row["placement_count"]) == (
        "R1",
        r.site.pk,
        "Sofia Colo 1",
        42,
        2,
    )
    feeds = {feed["name"]: feed for feed in row["feeds"]}
    a, b = feeds["PDU-A"], feeds["PDU-B"]
    assert (a["id"], a["leg"], a["voltage_v"], a["current_a"], a["phases"]) == (r.feed_a.pk, "A", 230, 16, 1)
    assert (a["rated_w"], a["continuous_limit_w"], a["limit_w"]) == (3680, 2944.0, 2944.0)
    assert (a["load_w"], b["load_w"]) == (2500.0, 1000.0)  # b1 (1,500 W) and a1 (1,000 W) on A; a1 on B
    assert a["percent_of_limit"] == pytest.approx(2500 / 2944 * 100)
    assert a["percent_of_rated"] == pytest.approx(2500 / 3680 * 100)
    assert (a["ok"], a["margin_w"]) == (True, 444.0)


def test_the_rack_list_is_cheap_whatever_its_length(tenants, django_assert_max_num_queries):
    r = make_rig(tenants)
    with django_assert_max_num_queries(3):  # the count, the page, the feeds
        rows = api_client(r.t.user_b).get(RACKS).json()["results"]
    assert [(row["name"], len(row["feeds"]), row["placement_count"]) for row in rows] == [("R1", 2, 2)]
    assert "load_w" not in rows[0]["feeds"][0]  # loads are the detail's
    for n in range(5):
        rack = rack_create(site=r.site, actor=r.t.pm, name=f"R{n + 2}")
        PowerFeed.objects.create(rack=rack, name="PDU-A")
    with django_assert_max_num_queries(3):
        rows = api_client(r.t.user_a).get(RACKS).json()["results"]
    assert [row["name"] for row in rows] == ["R1"]  # A's server stands in R1 only
    with django_assert_max_num_queries(4):  # and the PM check
        assert len(api_client(r.t.pm).get(RACKS).json()["results"]) == 6


def test_a_pm_creates_and_changes_racks(tenants):
    r = make_rig(tenants)
    created = r.post(r.t.pm, RACKS, {"site": r.site.pk, "name": "R2", "height_u": 48})
    assert created.status_code == 201, created.content
    assert (created.json()["height_u"], created.json()["feeds"], created.json()["placement_count"]) == (
        48,
        [],
        0,
    )
    url = f"{RACKS}{created.json()['id']}/"
    assert r.patch(r.t.pm, url, {"name": "R2b"}).json()["name"] == "R2b"
    assert r.post(r.t.pm, RACKS, {"site": r.site.pk, "name": "R1"}).status_code == 409

    unknown = r.post(r.t.pm, RACKS, {"site": 999999, "name": "R9"})
    assert unknown.status_code == 404, unknown.content
    assert "site" in unknown.json()

    too_small = r.patch(r.t.pm, f"{RACKS}{r.rack.pk}/", {"height_u": 12})
    assert too_small.status_code == 409, too_small.content
    assert r.a1.hostname in too_small.json()["detail"]  # a1 reaches U15
    assert r.patch(r.t.pm, f"{RACKS}{r.rack.pk}/", {"height_u": 99}).status_code == 400

    other = site_create(
        actor=r.t.pm, name="Other", kind="colocation", operator="O", customer=None, address="A", country="BG"
    )
    moved = r.patch(r.t.pm, f"{RACKS}{r.rack.pk}/", {"site": other.pk})
    assert moved.status_code == 400 and "site" in moved.json()
    assert Rack.objects.get(pk=r.rack.pk).site == r.site


def test_racks_are_seen_where_ones_servers_stand_and_written_by_pms(tenants):
    r = make_rig(tenants)
    spare = rack_create(site=r.site, actor=r.t.pm, name="R2")
    assert ids(r.get(r.t.pm, RACKS)) == {r.rack.pk, spare.pk}
    for user in (r.t.user_a, r.t.user_b, r.t.user_p, r.t.user_q):
        assert ids(r.get(user, RACKS)) == {r.rack.pk}
    assert ids(r.get(r.t.outsider, RACKS)) == set()
    assert r.get(r.t.user_a, f"{RACKS}{spare.pk}/").status_code == 404
    assert r.post(r.t.user_a, RACKS, {"site": r.site.pk, "name": "R3"}).status_code == 403
    assert r.patch(r.t.user_a, f"{RACKS}{r.rack.pk}/", {"name": "mine"}).status_code == 403
    assert r.patch(r.t.user_a, f"{RACKS}{spare.pk}/", {"name": "mine"}).status_code == 404
    assert r.patch(r.t.outsider, f"{RACKS}{r.rack.pk}/", {"name": "mine"}).status_code == 404
    assert set(Rack.objects.values_list("name", flat=True)) == {"R1", "R2"}


def test_the_rack_power_view_never_names_another_tenants_server(tenants):
    r = make_rig(tenants)
    url = f"{RACKS}{r.rack.pk}/power/"

    response = r.get(r.t.user_a, url)
    assert response.status_code == 200
    feeds = {feed["name"]: feed for feed in response.json()["feeds"]}
    assert feeds["PDU-A"]["load_w"] == 2500.0
    assert feeds["PDU-A"]["servers"] == [
        {
            "hostname": r.a1.hostname,
            "occupied": True,
            "wall_w": 1000.0,
            "source": "measured",
            "source_label": "measured at the outlet",
        },
        {"hostname": None, "occupied": True, "wall_w": 1500.0},
    ]
    assert [s["hostname"] for s in feeds["PDU-B"]["servers"]] == [r.a1.hostname]
    for user in (r.t.user_a, r.t.user_p):
        body = r.get(user, url).content.decode()
        assert r.b1.hostname not in body and r.b1.asset_tag not in body
    for user in (r.t.user_b, r.t.user_q):
        body = r.get(user, url).content.decode()
        assert r.b1.hostname in body
        assert r.a1.hostname not in body and r.a1.asset_tag not in body

    pm_view = r.get(r.t.pm, url).json()
    assert {s["hostname"] for feed in pm_view["feeds"] for s in feed["servers"]} == {
        r.a1.hostname,
        r.b1.hostname,
    }
    assert r.get(r.t.outsider, url).status_code == 404


# --- power feeds ---------------------------------------------------------------------------------------


def test_a_pm_manages_feeds_and_a_feed_in_use_stays(tenants):
    r = make_rig(tenants)
    body = {"rack": r.rack.pk, "name": "PDU-C", "leg": "B", "voltage_v": 230, "current_a": 32, "phases": 3}
    created = r.post(r.t.pm, FEEDS, body)
    assert created.status_code == 201, created.content
    row = created.json()
    assert (row["rack_name"], row["rated_w"], row["continuous_limit_w"]) == ("R1", 22080, 17664.0)
    url = f"{FEEDS}{row['id']}/"
    assert r.patch(r.t.pm, url, {"current_a": 16}).json()["rated_w"] == 11040
    assert r.post(r.t.pm, FEEDS, {**body, "phases": 2}).status_code == 400
    assert r.post(r.t.pm, FEEDS, {**body, "rack": 999999}).status_code == 404
    assert r.post(r.t.pm, FEEDS, {**body, "name": "PDU-A"}).status_code == 409

    # 10 A leaves feed A a limit of 1,840 W under its 2,500 W.
    overloaded = r.patch(r.t.pm, f"{FEEDS}{r.feed_a.pk}/", {"current_a": 10})
    assert overloaded.status_code == 409, overloaded.content
    assert "2,500 W" in overloaded.json()["missing"][0]

    in_use = api_client(r.t.pm).delete(f"{FEEDS}{r.feed_a.pk}/")
    assert in_use.status_code == 409, in_use.content
    assert in_use.json()["code"] == "feed_in_use"
    assert r.a1.hostname in in_use.json()["detail"] and r.b1.hostname in in_use.json()["detail"]
    assert api_client(r.t.pm).delete(url).status_code == 204
    assert set(PowerFeed.objects.values_list("name", flat=True)) == {"PDU-A", "PDU-B"}


def test_feeds_are_seen_with_their_rack_and_written_by_pms(tenants):
    r = make_rig(tenants)
    spare = rack_create(site=r.site, actor=r.t.pm, name="R2")
    spare_feed = PowerFeed.objects.create(rack=spare, name="PDU-A")
    assert ids(r.get(r.t.user_a, FEEDS)) == {r.feed_a.pk, r.feed_b.pk}
    assert ids(r.get(r.t.pm, FEEDS, rack=spare.pk)) == {spare_feed.pk}
    assert r.get(r.t.user_a, FEEDS, rack=spare.pk).status_code == 400  # not a choice A may name
    assert ids(r.get(r.t.outsider, FEEDS)) == set()
    body = {"rack": r.rack.pk, "name": "PDU-C", "voltage_v": 230, "current_a": 16}
    assert r.post(r.t.user_a, FEEDS, body).status_code == 403
    assert r.patch(r.t.user_a, f"{FEEDS}{r.feed_b.pk}/", {"current_a": 32}).status_code == 403
    assert api_client(r.t.user_a).delete(f"{FEEDS}{r.feed_b.pk}/").status_code == 403
    assert api_client(r.t.user_a).delete(f"{FEEDS}{spare_feed.pk}/").status_code == 404
    assert PowerFeed.objects.count() == 3


def test_the_feed_list_costs_two_queries(tenants, django_assert_max_num_queries):
    r = make_rig(tenants)
    for n in range(4):
        PowerFeed.objects.create(rack=r.rack, name=f"X{n}")
    with django_assert_max_num_queries(2):
        assert len(api_client(r.t.user_b).get(FEEDS).json()["results"]) == 6
