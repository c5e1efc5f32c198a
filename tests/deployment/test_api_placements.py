"""Placements through the API: a server into a rack's U range on named circuits. Overlaps and circuits over
their limit are 409s that say why; ids the caller cannot see are 404s naming the field; PMs only write."""

from __future__ import annotations

import pytest

from builds.choices import ServerStatus
from builds.models import Server
from deployment.models import RackPlacement
from deployment.services import placement_create, rack_create
from tests import factories
from tests.deployment.api_rig import ids, make_rig
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

PLACEMENTS = "/api/v1/placements/"


def _body(r, **overrides):
    return {"server": r.a2.pk, "rack": r.rack.pk, "lowest_u": 20, "feeds": [r.feed_b.pk], **overrides}


def test_a_pm_places_a_server(tenants):
    r = make_rig(tenants)
    response = r.post(r.t.pm, PLACEMENTS, _body(r, face="rear", measured_wall_w=900))
    assert response.status_code == 201, response.content
    row = response.json()
    assert row == {
        "id": row["id"],
        "server": r.a2.pk,
        "hostname": r.a2.hostname,
        "asset_tag": r.a2.asset_tag,
        "rack": r.rack.pk,
        "rack_name": "R1",
        "site_name": "Sofia Colo 1",
        "lowest_u": 20,
        "top_u": 25,
        "height_u": 6,
        "face": "rear",
        "feeds": [{"id": r.feed_b.pk, "name": "PDU-B", "phase": "L1", "phase_assumed": False}],
        "measured_wall_w": 900,
        "power_override_reason": "",
        "placed_at": row["placed_at"],
    }
    event = AuditEvent.objects.for_object(r.a2).get(verb="deployment.place")
    assert event.after["feeds"] == ["PDU-B"]
    assert r.get(r.t.user_a, f"{PLACEMENTS}{row['id']}/").json()["hostname"] == r.a2.hostname


def test_an_overlap_is_a_409_naming_the_server_in_the_way(tenants):
    r = make_rig(tenants)
    response = r.post(r.t.pm, PLACEMENTS, _body(r, lowest_u=13))  # U13–U18 meets a1 at U10–U15
    assert response.status_code == 409, response.content
    assert response.json()["code"] == "placement_overlap"
    assert r.a1.hostname in response.json()["detail"]
    assert not RackPlacement.objects.filter(server=r.a2).exists()


def test_above_the_rack_is_a_400(tenants):
    r = make_rig(tenants)
    response = r.post(r.t.pm, PLACEMENTS, _body(r, lowest_u=40))
    assert response.status_code == 400, response.content
    assert "lowest_u" in response.json()


def test_a_circuit_over_its_limit_is_a_409_with_the_numbers_unless_a_pm_overrides(tenants):
    r = make_rig(tenants)
    # Feed A carries 2,500 W of its 2,944 W; 900 W more is 3,400 W.
    over = r.post(r.t.pm, PLACEMENTS, _body(r, feeds=[r.feed_a.pk], measured_wall_w=900))
    assert over.status_code == 409, over.content
    assert over.json()["code"] == "circuit_limit"
    (sentence,) = over.json()["missing"]
    assert "3,400 W" in sentence and "2,944 W" in sentence and "PDU-A" in sentence
    assert not RackPlacement.objects.filter(server=r.a2).exists()

    reason = "Feed A is re-rated to 32 A next week (ticket 4711)."
    overridden = r.post(
        r.t.pm, PLACEMENTS, _body(r, feeds=[r.feed_a.pk], measured_wall_w=900, override_reason=reason)
    )
    assert overridden.status_code == 201, overridden.content
    assert overridden.json()["power_override_reason"] == reason
    event = AuditEvent.objects.for_object(r.a2).get(verb="deployment.place")
    assert (event.note, event.after["override"]) == (reason, True)
    assert event.after["circuits"]["PDU-A"]["load_w"] == 3400

    # The reason is the PMs' internal note: the customer and the partner see the placement, not the note.
    url = f"{PLACEMENTS}{overridden.json()['id']}/"
    for user in (r.t.user_a, r.t.user_p):
        assert "power_override_reason" not in r.get(user, url).json()  # left out, not nulled
        assert reason not in r.get(user, PLACEMENTS).content.decode()
    assert r.get(r.t.pm, url).json()["power_override_reason"] == reason


def test_ids_the_caller_cannot_use_are_404s_naming_the_field(tenants):
    r = make_rig(tenants)
    for field, value in (("server", 999999), ("rack", 999999), ("feeds", [r.feed_b.pk, 999999])):
        response = r.post(r.t.pm, PLACEMENTS, _body(r, **{field: value}))
        assert response.status_code == 404, (field, response.content)
        assert field in response.json(), response.json()
    # A feed of another rack exists, but is not the rack's: a 400 saying so.
    spare = rack_create(site=r.site, actor=r.t.pm, name="R2")
    foreign = spare.feeds.create(name="PDU-X")
    response = r.post(r.t.pm, PLACEMENTS, _body(r, feeds=[foreign.pk]))
    assert response.status_code == 400 and "feeds" in response.json()
    assert r.post(r.t.pm, PLACEMENTS, _body(r, feeds=[])).status_code == 400
    assert not RackPlacement.objects.filter(server=r.a2).exists()


def test_only_pms_place_and_remove(tenants):
    r = make_rig(tenants)
    for user in (r.t.user_a, r.t.user_p, r.t.user_b, r.t.outsider):
        assert r.post(user, PLACEMENTS, _body(r)).status_code == 403, user.username
    url = f"{PLACEMENTS}{r.place_a1.pk}/"
    for user in (r.t.user_a, r.t.user_p):  # they see a1's placement
        assert api_client(user).delete(url).status_code == 403
    for user in (r.t.user_b, r.t.user_q, r.t.outsider):
        assert api_client(user).delete(url).status_code == 404
    assert RackPlacement.objects.count() == 2


def test_a_pm_removes_a_placement_with_a_reason(tenants):
    r = make_rig(tenants)
    response = api_client(r.t.pm).delete(
        f"{PLACEMENTS}{r.place_a1.pk}/", {"reason": "moved to R2"}, format="json"
    )
    assert response.status_code == 204, response.content
    assert AuditEvent.objects.for_object(r.a1).get(verb="deployment.unplace").note == "moved to R2"
    response = api_client(r.t.pm).delete(f"{PLACEMENTS}{r.place_b1.pk}/?reason=swap")
    assert response.status_code == 204, response.content
    assert AuditEvent.objects.for_object(r.b1).get(verb="deployment.unplace").note == "swap"
    assert not RackPlacement.objects.exists()


def test_a_deployed_servers_placement_stays(tenants):
    r = make_rig(tenants)
    Server.objects.filter(pk=r.a1.pk).update(status=ServerStatus.DEPLOYED)
    response = api_client(r.t.pm).delete(f"{PLACEMENTS}{r.place_a1.pk}/")
    assert response.status_code == 409 and response.json()["code"] == "placement_closed"
    assert RackPlacement.objects.filter(pk=r.place_a1.pk).exists()


def test_each_sees_the_placements_of_their_servers(tenants):
    r = make_rig(tenants)
    assert ids(r.get(r.t.pm, PLACEMENTS)) == {r.place_a1.pk, r.place_b1.pk}
    for user in (r.t.user_a, r.t.user_p):
        assert ids(r.get(user, PLACEMENTS)) == {r.place_a1.pk}
    for user in (r.t.user_b, r.t.user_q):
        assert ids(r.get(user, PLACEMENTS)) == {r.place_b1.pk}
    assert ids(r.get(r.t.outsider, PLACEMENTS)) == set()
    assert r.get(r.t.user_q, f"{PLACEMENTS}{r.place_a1.pk}/").status_code == 404
    assert r.get(r.t.user_q, PLACEMENTS, server=r.a1.pk).status_code == 400
    # Filters and search.
    assert ids(r.get(r.t.pm, PLACEMENTS, rack=r.rack.pk, q=r.b1.asset_tag)) == {r.place_b1.pk}
    assert ids(r.get(r.t.pm, PLACEMENTS, site=r.site.pk)) == {r.place_a1.pk, r.place_b1.pk}


def test_the_placement_list_costs_three_queries_whatever_its_length(tenants, django_assert_max_num_queries):
    r = make_rig(tenants)
    order = factories.OrderFactory(customer=r.t.customer_a, server_count=4)
    factories.make_servers(order, status=ServerStatus.BURN_IN_PASSED)
    for n, server in enumerate(order.servers.order_by("sequence")):
        placement_create(
            server=server,
            rack=r.rack,
            lowest_u=16 + 6 * n,
            feeds=[r.feed_b],
            actor=r.t.pm,
            measured_wall_w=100,
        )
    with django_assert_max_num_queries(3):  # the count, the page, the feeds
        rows = api_client(r.t.user_a).get(PLACEMENTS).json()["results"]
    assert len(rows) == 5
    with django_assert_max_num_queries(4):  # and the PM check
        assert len(api_client(r.t.pm).get(PLACEMENTS).json()["results"]) == 6
