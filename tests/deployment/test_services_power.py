"""Power per circuit: each server's wall power from its best source, what each feed carries, the continuous
limit 0.8 × V × A × phases, the PM's override, and the feed and rack changes the limit refuses."""

from __future__ import annotations

import pytest

from builds.models import Server
from deployment.models import PowerFeed, Rack, RackPlacement
from deployment.selectors import feed_loads, server_powers
from deployment.services import feed_delete, feed_update, placement_create, rack_update
from tests import factories
from tests.deployment import svc_rig as rig
from werkbank.errors import RuleViolation

pytestmark = pytest.mark.django_db

#: 2,500 W of TDP / 0.8 on one 230 V × 16 A circuit (2,944 W limit of 3,680 W).
OVER_16A = (
    "Feed A1 (230 V × 16 A × 1 phase) would carry 3,125 W against its continuous limit of 2,944 W "
    "(0.8 × 3,680 W): 106.1 % of the limit, 181 W over."
)


@pytest.fixture
def pm():
    return factories.make_pm(username="power-pm")


@pytest.fixture
def eff80(settings):
    """A PSU efficiency of 0.8 keeps the arithmetic exact."""
    settings.WERKBANK_PSU_EFFICIENCY = 0.8


def test_the_three_sources_of_wall_power(pm, eff80):
    measured, burnt_in, budget = rig.servers(3)
    Server.objects.filter(pk__in=[measured.pk, burnt_in.pk]).update(burnin_gpu_power_w=1800.0)
    measured.refresh_from_db()
    burnt_in.refresh_from_db()

    powers = server_powers([measured, burnt_in, budget], measured={measured.pk: 3000})

    # Measured at the outlet wins, even over a burn-in figure.
    assert (powers[measured.pk].wall_w, powers[measured.pk].source) == (3000.0, "measured")
    # Burn-in: the GPUs' measured 1,800 W plus the 500 W of non-GPU TDP, over the PSU efficiency.
    assert (powers[burnt_in.pk].wall_w, powers[burnt_in.pk].source) == ((1800 + 500) / 0.8, "burn_in")
    assert powers[burnt_in.pk].wall_w == 2875.0
    # Budget: every part's TDP (4 × 500 + 2 × 250) over the PSU efficiency.
    assert (powers[budget.pk].wall_w, powers[budget.pk].source) == (3125.0, "budget")
    assert [powers[s.pk].source_label for s in (measured, burnt_in, budget)] == [
        "measured at the outlet",
        "burn-in GPU power + host overhead",
        "configuration budget (TDP)",
    ]


def test_the_default_psu_efficiency_divides_the_budget(pm):
    server = rig.server()
    power = server_powers([server])[server.pk]
    assert power.wall_w == pytest.approx(2500 / 0.94)
    assert power.source == "budget"


def test_each_feed_carries_its_servers_and_a_and_b_each_carry_all(pm, eff80):
    rack, (a1, b1) = rig.rack(
        pm, feeds=[{"name": "A1", "current_a": 32, "phases": 3}, {"name": "B1", "leg": "B", "current_a": 32}]
    )
    measured, burnt_in, budget = rig.servers(3)
    Server.objects.filter(pk=burnt_in.pk).update(burnin_gpu_power_w=1800.0)
    # One server per phase of the three-phase A1: each phase holds 0.8 × 230 V × 32 A = 5,888 W.
    placement_create(
        server=measured,
        rack=rack,
        lowest_u=1,
        feeds=[a1],
        actor=pm,
        measured_wall_w=3000,
        phases={a1.pk: "L1"},
    )
    placement_create(server=burnt_in, rack=rack, lowest_u=5, feeds=[a1], actor=pm, phases={a1.pk: "L2"})
    placement_create(server=budget, rack=rack, lowest_u=9, feeds=[a1, b1], actor=pm, phases={a1.pk: "L3"})

    loads = {load.feed.name: load for load in feed_loads(rack=rack)}

    three_phase, single = loads["A1"], loads["B1"]
    assert [(s.hostname, s.wall_w, s.source) for s in three_phase.servers] == [
        (measured.hostname, 3000.0, "measured"),
        (burnt_in.hostname, 2875.0, "burn_in"),
        (budget.hostname, 3125.0, "budget"),
    ]
    # The A/B server counts fully on each side: either must hold it alone.
    assert [(s.hostname, s.wall_w) for s in single.servers] == [(budget.hostname, 3125.0)]
    assert (three_phase.load_w, three_phase.rated_w, three_phase.limit_w) == (9000.0, 22080, 17664.0)
    assert (single.load_w, single.rated_w, single.limit_w) == (3125.0, 7360, 5888.0)
    assert three_phase.sentence() == "Feed A1 carries 9,000 W of its 17,664 W continuous limit (51.0 %)."
    assert (single.ok, single.margin_w) == (True, 2763.0)


def test_a_placement_over_the_continuous_limit_is_refused_with_the_numbers(pm, eff80):
    rack, (a1,) = rig.rack(pm)
    server = rig.server()

    with pytest.raises(RuleViolation) as refusal:
        placement_create(server=server, rack=rack, lowest_u=1, feeds=[a1], actor=pm)

    assert refusal.value.code == "circuit_limit"
    assert (
        refusal.value.message == f"Placing server {server.hostname} would overload 1 circuit(s) of rack R01."
    )
    assert refusal.value.missing == [OVER_16A]
    assert not RackPlacement.objects.exists()


def test_an_a_and_b_placement_is_checked_on_both_feeds(pm, eff80):
    rack, (a1, b1) = rig.rack(pm, feeds=[{"name": "A1"}, {"name": "B1", "leg": "B", "phases": 3}])
    server = rig.server()

    with pytest.raises(RuleViolation) as refusal:
        placement_create(
            server=server, rack=rack, lowest_u=1, feeds=[a1, b1], actor=pm, phases={b1.pk: "L1+L2+L3"}
        )

    # Only A1 (single phase) is over; B1 (three phases, 8,832 W) holds the same 3,125 W over its phases.
    assert refusal.value.missing == [OVER_16A]


def test_the_sentence_of_a_three_phase_feed(pm, eff80):
    rack, (c1,) = rig.rack(pm, feeds=[{"name": "C1", "current_a": 4, "phases": 3}])
    with pytest.raises(RuleViolation) as refusal:
        placement_create(server=rig.server(), rack=rack, lowest_u=1, feeds=[c1], actor=pm)
    # 230 × 4 × 3 = 2,760 W rated, 2,208 W continuous.
    assert refusal.value.missing == [
        "Feed C1 (230 V × 4 A × 3 phases) would carry 3,125 W against its continuous limit of 2,208 W "
        "(0.8 × 2,760 W): 141.5 % of the limit, 917 W over."
    ]


def test_a_pm_overrides_with_a_reason_and_it_is_audited(pm, eff80):
    rack, (a1,) = rig.rack(pm)
    server = rig.server()
    reason = "Measured 2.7 kW at the socket last week; a 32 A PDU is ordered."

    placement = placement_create(
        server=server, rack=rack, lowest_u=1, feeds=[a1], actor=pm, override_reason=f"  {reason}\n"
    )

    assert placement.power_override_reason == reason
    (event,) = rig.events(server, "deployment.place")
    assert (event.actor, event.note) == (pm, reason)
    assert event.after["override"] is True
    assert event.after["circuits"] == {"A1": {"load_w": 3125, "limit_w": 2944, "percent_of_limit": 106.1}}
    assert (event.after["wall_w"], event.after["wall_source"]) == (3125, "budget")


def test_a_non_pm_cannot_override(pm, eff80):
    rack, (a1,) = rig.rack(pm)
    server = rig.server()
    partner = factories.make_member(factories.PartnerFactory(), username="fitter")

    with pytest.raises(RuleViolation) as refusal:
        placement_create(
            server=server, rack=rack, lowest_u=1, feeds=[a1], actor=partner, override_reason="It will hold"
        )

    assert refusal.value.code == "pm_only"
    assert refusal.value.missing == ["a project manager's override"]
    assert not RackPlacement.objects.exists()
    assert rig.events(server, "deployment.place") == []


def test_a_reason_without_an_overload_is_not_kept(pm, eff80):
    rack, (a1,) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}])
    server = rig.server()

    placement = placement_create(
        server=server, rack=rack, lowest_u=1, feeds=[a1], actor=pm, override_reason="Just in case"
    )

    assert placement.power_override_reason == ""
    (event,) = rig.events(server, "deployment.place")
    assert (event.note, event.after["override"]) == ("", False)


def test_lowering_a_breaker_under_the_load_is_refused(pm, eff80):
    rack, (a1,) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}])
    placement_create(server=rig.server(), rack=rack, lowest_u=1, feeds=[a1], actor=pm)

    with pytest.raises(RuleViolation) as refusal:
        feed_update(feed=a1, actor=pm, current_a=16)

    assert refusal.value.code == "circuit_limit"
    assert refusal.value.missing == [OVER_16A]
    assert refusal.value.message == f"Feed A1 cannot change so: {OVER_16A}"
    assert PowerFeed.objects.get(pk=a1.pk).current_a == 32
    # A breaker that still holds the load is fine: 230 × 20 × 0.8 = 3,680 W.
    assert feed_update(feed=a1, actor=pm, current_a=20).current_a == 20
    assert PowerFeed.objects.get(pk=a1.pk).current_a == 20


def test_a_feed_in_use_is_not_deleted(pm, eff80):
    rack, (a1, b1) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}, {"name": "B1", "leg": "B"}])
    first, second = rig.servers(2, configuration=rig.config(gpus=(100, 1), others=()))
    placement_create(server=second, rack=rack, lowest_u=10, feeds=[a1], actor=pm)
    placement_create(server=first, rack=rack, lowest_u=1, feeds=[a1], actor=pm)

    with pytest.raises(RuleViolation) as refusal:
        feed_delete(feed=a1, actor=pm)

    assert refusal.value.code == "feed_in_use"
    assert refusal.value.message == (
        f"Feed A1 supplies {first.hostname}, {second.hostname}; move them to another feed first."
    )
    assert PowerFeed.objects.filter(pk=a1.pk).exists()
    feed_delete(feed=b1, actor=pm)
    assert list(PowerFeed.objects.filter(rack=rack).values_list("name", flat=True)) == ["A1"]


def test_a_rack_does_not_shrink_under_a_placed_server(pm):
    rack, (a1,) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}])
    server = rig.server()
    placement_create(server=server, rack=rack, lowest_u=10, feeds=[a1], actor=pm)  # U10–U13

    with pytest.raises(RuleViolation) as refusal:
        rack_update(rack=rack, actor=pm, height_u=12)

    assert refusal.value.code == "rack_too_small"
    assert refusal.value.message == f"Rack R01 cannot shrink to 12U: server {server.hostname} reaches U13."
    assert refusal.value.missing == ["no server above U12"]
    assert Rack.objects.get(pk=rack.pk).height_u == 42
    assert rack_update(rack=rack, actor=pm, height_u=13).height_u == 13


def test_seed_003_one_16a_circuit_holds_the_7u_server_and_no_more(pm):
    rack, (a1,) = rig.rack(pm)
    seven_u = rig.server(configuration=rig.config(u_height=7))
    placement_create(server=seven_u, rack=rack, lowest_u=1, feeds=[a1], actor=pm, measured_wall_w=2900)

    (load,) = feed_loads(rack=rack)
    assert (load.load_w, load.limit_w, load.rated_w) == (2900.0, 2944.0, 3680)
    assert (round(load.percent_of_limit, 1), round(load.percent_of_rated, 1)) == (98.5, 78.8)
    assert load.ok is True
    assert load.sentence() == "Feed A1 carries 2,900 W of its 2,944 W continuous limit (98.5 %)."
    (event,) = rig.events(seven_u, "deployment.place")
    assert event.after["circuits"] == {"A1": {"load_w": 2900, "limit_w": 2944, "percent_of_limit": 98.5}}
    assert (event.after["wall_w"], event.after["wall_source"], event.after["override"]) == (
        2900,
        "measured",
        False,
    )

    second = rig.server(configuration=rig.config(u_height=1))
    with pytest.raises(RuleViolation) as refusal:
        placement_create(server=second, rack=rack, lowest_u=8, feeds=[a1], actor=pm, measured_wall_w=100)

    assert refusal.value.code == "circuit_limit"
    assert refusal.value.missing == [
        "Feed A1 (230 V × 16 A × 1 phase) would carry 3,000 W against its continuous limit of 2,944 W "
        "(0.8 × 3,680 W): 101.9 % of the limit, 56 W over."
    ]
    assert not RackPlacement.objects.filter(server=second).exists()


def test_an_overridden_feed_may_be_renamed_and_upgraded_but_not_lowered(pm):
    rack, (a1,) = rig.rack(pm)
    placement_create(
        server=rig.server(),
        rack=rack,
        lowest_u=1,
        feeds=[a1],
        actor=pm,
        measured_wall_w=4000,
        override_reason="Temporary: the 32 A PDU arrives next week.",
    )

    renamed = feed_update(feed=a1, actor=pm, name="A1-PDU")
    upgraded = feed_update(feed=a1, actor=pm, current_a=20)  # 3,680 W: still over, but better

    assert (renamed.name, upgraded.current_a) == ("A1-PDU", 20)
    with pytest.raises(RuleViolation) as refusal:
        feed_update(feed=a1, actor=pm, current_a=16)
    assert refusal.value.missing == [
        "Feed A1-PDU (230 V × 16 A × 1 phase) would carry 4,000 W against its continuous limit of 2,944 W "
        "(0.8 × 3,680 W): 135.9 % of the limit, 1,056 W over."
    ]
    assert PowerFeed.objects.get(pk=a1.pk).current_a == 20
