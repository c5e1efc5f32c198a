"""The placement API with phases (issue #28 item 1): `phases` on create ({"<feed id>": "L2"}), the 409 that
names the phase, the 400 for a phase the feed lacks, each feed of a placement with its phase, and the rack's
loads per phase."""

from __future__ import annotations

import pytest

from builds.choices import ServerStatus
from deployment.models import RackPlacement
from deployment.services import feed_create
from tests import factories
from tests.deployment.api_rig import make_rig

pytestmark = pytest.mark.django_db

PLACEMENTS = "/api/v1/placements/"
RACKS = "/api/v1/racks/"


@pytest.fixture
def r(tenants):
    rig = make_rig(tenants)
    # 3 × 230 V × 32 A: 5,888 W continuous per phase, 17,664 W in all.
    rig.feed_c = feed_create(
        rack=rig.rack, actor=tenants.pm, name="PDU-C", leg="A", voltage_v=230, current_a=32, phases=3
    )
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=2)
    rig.big = factories.make_servers(order, status=ServerStatus.BURN_IN_PASSED)
    return rig


def _body(r, server, lowest_u, phases, **more):
    return {
        "server": server.pk,
        "rack": r.rack.pk,
        "lowest_u": lowest_u,
        "feeds": [r.feed_c.pk],
        "measured_wall_w": 5700,
        "phases": phases,
        **more,
    }


def test_the_second_5_7_kw_server_on_the_same_phase_is_a_409_naming_it(r):
    first, second = r.big
    placed = r.post(r.t.pm, PLACEMENTS, _body(r, first, 20, {str(r.feed_c.pk): "L1"}))
    assert placed.status_code == 201, placed.content
    assert placed.json()["feeds"] == [
        {"id": r.feed_c.pk, "name": "PDU-C", "phase": "L1", "phase_assumed": False}
    ]

    refused = r.post(r.t.pm, PLACEMENTS, _body(r, second, 30, {str(r.feed_c.pk): "L1"}))

    assert refused.status_code == 409, refused.content
    body = refused.json()
    assert body["code"] == "circuit_limit"
    assert body["missing"] == [
        "Feed PDU-C phase L1 (230 V × 32 A) would carry 11,400 W against its continuous limit of 5,888 W "
        "(0.8 × 7,360 W): 193.6 % of the limit, 5,512 W over."
    ]
    assert not RackPlacement.objects.filter(server=second).exists()


def test_on_another_phase_it_is_placed_and_the_rack_shows_both_phases(r):
    first, second = r.big
    assert r.post(r.t.pm, PLACEMENTS, _body(r, first, 20, {str(r.feed_c.pk): "L1"})).status_code == 201
    placed = r.post(r.t.pm, PLACEMENTS, _body(r, second, 30, {str(r.feed_c.pk): "L2"}))
    assert placed.status_code == 201, placed.content
    assert placed.json()["feeds"][0]["phase"] == "L2"

    feeds = {feed["name"]: feed for feed in r.get(r.t.pm, f"{RACKS}{r.rack.pk}/").json()["feeds"]}
    pdu = feeds["PDU-C"]
    assert (pdu["load_w"], pdu["ok"], pdu["imbalance_percent"]) == (11400.0, True, 150.0)
    assert [(p["phase"], p["load_w"], p["limit_w"], p["ok"]) for p in pdu["phase_loads"]] == [
        ("L1", 5700.0, 5888.0, True),
        ("L2", 5700.0, 5888.0, True),
        ("L3", 0.0, 5888.0, True),
    ]
    # A single-phase feed has its one phase, and no imbalance.
    assert [p["phase"] for p in feeds["PDU-A"]["phase_loads"]] == ["L1"]
    assert feeds["PDU-A"]["imbalance_percent"] is None
    power = {feed["name"]: feed for feed in r.get(r.t.user_a, f"{RACKS}{r.rack.pk}/power/").json()["feeds"]}
    assert [p["load_w"] for p in power["PDU-C"]["phase_loads"]] == [5700.0, 5700.0, 0.0]


@pytest.mark.parametrize(
    ("phases", "words"),
    [
        ({"c": "L4"}, "feed PDU-C has the phases L1, L2, L3"),
        ({"a": "L2"}, "feed PDU-A is single-phase: its only phase is L1"),
        ({"b": "L1"}, "is not one of the chosen feeds"),
        ({"x": "L1"}, "'x' is not a feed id."),
    ],
)
def test_a_phase_the_feed_lacks_is_a_400_naming_phases(r, phases, words):
    first, _ = r.big
    keys = {"a": str(r.feed_a.pk), "b": str(r.feed_b.pk), "c": str(r.feed_c.pk), "x": "x"}
    body = _body(
        r,
        first,
        20,
        {keys[key]: value for key, value in phases.items()},
        feeds=[r.feed_a.pk, r.feed_c.pk],
        measured_wall_w=100,
    )
    response = r.post(r.t.pm, PLACEMENTS, body)
    assert response.status_code == 400, response.content
    assert words in str(response.json()["phases"])
    assert not RackPlacement.objects.filter(server=first).exists()


def test_a_three_phase_feed_left_out_is_placed_on_l1_assumed(r):
    first, _ = r.big
    placed = r.post(r.t.pm, PLACEMENTS, {**_body(r, first, 20, {}), "measured_wall_w": 1000})
    assert placed.status_code == 201, placed.content
    assert placed.json()["feeds"] == [
        {"id": r.feed_c.pk, "name": "PDU-C", "phase": "L1", "phase_assumed": True}
    ]
    # The customer sees its own placement with the phase; another customer does not see it at all.
    url = f"{PLACEMENTS}{placed.json()['id']}/"
    assert r.get(r.t.user_a, url).json()["feeds"][0]["phase"] == "L1"
    assert r.get(r.t.user_b, url).status_code == 404
