"""Rack placement (`deployment.services.placement`): U ranges, rack height, feeds, the server's status, the
chassis height, removal, and the audit rows."""

from __future__ import annotations

import pytest

from deployment.models import RackPlacement
from deployment.services import placement_create, placement_remove
from tests import factories
from tests.deployment import svc_rig as rig
from werkbank.errors import InvalidInput, RuleViolation

pytestmark = pytest.mark.django_db


@pytest.fixture
def pm():
    return factories.make_pm(username="placer")


@pytest.fixture
def rack42(pm):
    # Two 32 A feeds: the power check never gets in the way of the U-range tests.
    return rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}, {"name": "B1", "leg": "B", "current_a": 32}])


def _place(server, rack_feeds, lowest_u, actor, **kwargs):
    rack, feeds = rack_feeds
    return placement_create(
        server=server, rack=rack, lowest_u=lowest_u, feeds=feeds[:1], actor=actor, **kwargs
    )


def test_adjacent_ranges_are_allowed(pm, rack42):
    first, second = rig.servers(2)  # 4U each

    low = _place(first, rack42, 1, pm)
    high = _place(second, rack42, 5, pm)

    assert (low.lowest_u, low.top_u, high.lowest_u, high.top_u) == (1, 4, 5, 8)
    assert RackPlacement.objects.filter(rack=rack42[0]).count() == 2


@pytest.mark.parametrize(
    ("lowest_u", "top_u"),
    [(4, 7), (5, 8), (7, 10), (9, 12), (10, 13)],
    ids=["shares-its-lowest-u", "partial-below", "same-range", "partial-above", "shares-its-top-u"],
)
def test_an_overlap_names_the_server_in_the_way(pm, rack42, lowest_u, top_u):
    # The server in the way stands at U7–U10; the newcomer is 4U high too.
    in_the_way, newcomer = rig.servers(2)
    other = _place(in_the_way, rack42, 7, pm)

    with pytest.raises(RuleViolation) as refusal:
        _place(newcomer, rack42, lowest_u, pm)

    assert refusal.value.code == "placement_overlap"
    assert refusal.value.message == (
        f"U{lowest_u}–U{top_u} of rack R01 overlaps server {in_the_way.hostname} at "
        f"U{other.lowest_u}–U{other.top_u}."
    )
    assert refusal.value.missing == [
        f"free U{lowest_u}–U{top_u} in rack R01 (server {in_the_way.hostname} is in the way)"
    ]
    assert not RackPlacement.objects.filter(server=newcomer).exists()


def test_a_larger_server_covering_a_smaller_one_is_an_overlap(pm, rack42):
    small = rig.server(configuration=rig.config(u_height=1))
    big = rig.server(configuration=rig.config(u_height=8))
    _place(small, rack42, 5, pm)

    with pytest.raises(RuleViolation) as refusal:
        _place(big, rack42, 2, pm)  # U2–U9 covers U5 entirely

    assert refusal.value.code == "placement_overlap"
    assert small.hostname in refusal.value.message
    assert "U2–U9" in refusal.value.message


def test_above_the_rack_height_names_the_highest_start(pm, rack42):
    server = rig.server()  # 4U

    with pytest.raises(InvalidInput) as refused:
        _place(server, rack42, 40, pm)

    assert refused.value.field == "lowest_u"
    assert refused.value.field_message == (
        f"server {server.hostname} is 4U high: from U40 it would reach U43, above the 42U of rack R01 "
        "(the highest start is U39)."
    )
    # The highest start itself fits.
    assert _place(server, rack42, 39, pm).top_u == 42


def test_a_server_taller_than_the_rack_says_so(pm):
    rack = rig.rack(pm, height_u=6, feeds=[{"name": "A1", "current_a": 32}])
    server = rig.server(configuration=rig.config(u_height=8))

    with pytest.raises(InvalidInput) as refused:
        _place(server, rack, 1, pm)

    assert refused.value.field == "lowest_u"
    assert (
        refused.value.field_message == f"server {server.hostname} is 8U high, taller than the 6U of rack R01."
    )


@pytest.mark.parametrize("watts", [0, 100_001, True, 2900.5, "2900"])
def test_measured_wall_power_is_whole_watts(pm, rack42, watts):
    with pytest.raises(InvalidInput) as refused:
        _place(rig.server(), rack42, 1, pm, measured_wall_w=watts)
    assert refused.value.field == "measured_wall_w"
    assert not RackPlacement.objects.exists()


@pytest.mark.parametrize("lowest_u", [0, -1, True, "3"])
def test_lowest_u_counts_from_one(pm, rack42, lowest_u):
    with pytest.raises(InvalidInput) as refused:
        _place(rig.server(), rack42, lowest_u, pm)
    assert refused.value.field == "lowest_u"
    assert refused.value.field_message == f"U positions count from 1; got {lowest_u!r}."


def test_feeds_must_be_given_and_be_the_racks_own(pm, rack42):
    server = rig.server()
    rack, _ = rack42
    _, foreign = rig.rack(pm, name="R02")

    with pytest.raises(InvalidInput) as empty:
        placement_create(server=server, rack=rack, lowest_u=1, feeds=[], actor=pm)
    with pytest.raises(InvalidInput) as stranger:
        placement_create(server=server, rack=rack, lowest_u=1, feeds=[foreign[0]], actor=pm)

    assert (empty.value.field, empty.value.field_message) == (
        "feeds",
        "a placement draws from at least one power feed of the rack.",
    )
    assert (stranger.value.field, stranger.value.field_message) == (
        "feeds",
        "A1 (rack R02 at Site of R02) is not a feed of rack R01 at Site of R01: its feeds are A1, B1.",
    )
    assert not RackPlacement.objects.exists()


def test_the_refusal_of_strangers_names_each_feed_with_its_rack_never_an_id(pm, rack42):
    """Issue #24: "feed(s) 9" named a database id. The refusal names the feeds and their racks, and a feed
    deleted meanwhile as such."""
    rack, own = rack42
    _, foreign = rig.rack(pm, name="R02", feeds=[{"name": "PDU-A"}, {"name": "PDU-B"}])
    gone = foreign[1].pk
    foreign[1].delete()

    with pytest.raises(InvalidInput) as refused:
        placement_create(
            server=rig.server(), rack=rack, lowest_u=1, feeds=[own[0], foreign[0], gone], actor=pm
        )

    assert refused.value.field_message == (
        "PDU-A (rack R02 at Site of R02) and a feed that no longer exists are not feeds of rack R01 at "
        "Site of R01: its feeds are A1, B1."
    )
    assert not RackPlacement.objects.exists()


@pytest.mark.parametrize("status", ["deployed", "handed_over"])
def test_a_deployed_server_is_not_placed(pm, rack42, status):
    server = rig.server(status=status)

    with pytest.raises(RuleViolation) as refusal:
        _place(server, rack42, 1, pm)

    assert refusal.value.code == "placement_closed"
    assert refusal.value.missing == ["a server that is not deployed yet"]


def test_an_already_placed_server_is_refused(pm, rack42):
    server = rig.server()
    _place(server, rack42, 10, pm)

    with pytest.raises(RuleViolation) as refusal:
        _place(server, rack42, 20, pm)

    assert refusal.value.code == "already_placed"
    assert refusal.value.message == (
        f"Server {server.hostname} is already placed in rack R01 at U10–U13; remove that placement first."
    )
    assert RackPlacement.objects.get(server=server).lowest_u == 10


def test_the_height_comes_from_the_chassis_part(pm, rack42):
    server = rig.server(configuration=rig.config(u_height=7))

    placement = _place(server, rack42, 3, pm)

    assert (placement.height_u, placement.top_u) == (7, 9)


@pytest.mark.parametrize("chassis", [True, False], ids=["chassis-without-height", "no-chassis"])
def test_no_chassis_height_is_refused(pm, rack42, chassis):
    server = rig.server(configuration=rig.config(u_height=None, chassis=chassis))

    with pytest.raises(RuleViolation) as refusal:
        _place(server, rack42, 1, pm)

    assert refusal.value.code == "no_chassis_height"
    assert refusal.value.missing == ["a chassis part with its height (U) on the configuration"]


def test_remove_before_deploy_then_place_again(pm, rack42):
    server = rig.server()
    placement = _place(server, rack42, 10, pm)

    placement_remove(placement=placement, actor=pm, reason="  Moved to the cooler row  ")

    assert not RackPlacement.objects.filter(server=server).exists()
    (event,) = rig.events(server, "deployment.unplace")
    assert (event.actor, event.note) == (pm, "Moved to the cooler row")
    assert event.before == {"rack": "R01", "lowest_u": 10, "top_u": 13}
    # The U range is free again, for this server or another.
    assert _place(server, rack42, 10, pm).top_u == 13


def test_remove_after_deploy_is_refused(pm, rack42):
    server = rig.server()
    placement = _place(server, rack42, 10, pm)
    server.__class__.objects.filter(pk=server.pk).update(status="deployed")

    with pytest.raises(RuleViolation) as refusal:
        placement_remove(placement=placement, actor=pm)

    assert refusal.value.code == "placement_closed"
    assert RackPlacement.objects.filter(server=server).exists()
    assert rig.events(server, "deployment.unplace") == []


def test_the_placement_is_audited_on_the_server(pm, settings):
    settings.WERKBANK_PSU_EFFICIENCY = 0.8
    rack, (a1, b1) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}, {"name": "B1", "leg": "B"}])
    server = rig.server()  # 2,500 W of TDP / 0.8 = 3,125 W; the B feed (2,944 W limit) holds less

    with pytest.raises(RuleViolation):
        placement_create(server=server, rack=rack, lowest_u=20, feeds=[a1, b1], actor=pm)
    placement = placement_create(server=server, rack=rack, lowest_u=20, feeds=[a1], actor=pm, face="rear")

    assert placement.placed_by == pm
    assert placement.power_override_reason == ""
    assert list(placement.feeds.all()) == [a1]
    (event,) = rig.events(server, "deployment.place")
    assert event.actor == pm
    assert event.note == ""
    assert event.after == {
        "rack": f"{rack.site.name} / R01",
        "lowest_u": 20,
        "top_u": 23,
        "face": "rear",
        "feeds": ["A1"],
        "wall_w": 3125,
        "wall_source": "budget",
        "circuits": {"A1": {"load_w": 3125, "limit_w": 5888, "percent_of_limit": 53.1}},
        "override": False,
    }


def test_an_unknown_face_is_refused(pm, rack42):
    with pytest.raises(InvalidInput) as refused:
        _place(rig.server(), rack42, 1, pm, face="side")
    assert refused.value.field == "face"
