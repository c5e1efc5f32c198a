"""Power per phase (issue #28 item 1): a feed's phases, the phase(s) each placement draws from, the continuous
limit per phase (0.8 × V × A) and per feed, A/B failover per phase, the imbalance, the review list of the
phases nobody chose, and the PM's correction (`placement_set_phases`)."""

from __future__ import annotations

import pytest
from django.test import Client

from builds.models import Server
from deployment.elevation import phase_caption, rack_elevation_svg
from deployment.models import PlacementFeed, RackPlacement
from deployment.selectors import feed_loads, phase_review
from deployment.services import feed_update, placement_create, placement_set_phases
from tests import factories
from tests.deployment import svc_rig as rig
from werkbank.errors import InvalidInput, RuleViolation

pytestmark = pytest.mark.django_db

#: 3 × 230 V × 32 A: 5,888 W continuous per phase (0.8 × 7,360 W), 17,664 W per feed.
THREE_32A = {"name": "PDU-A", "current_a": 32, "phases": 3}
#: The issue's acceptance: two 5.7 kW servers on L1 of one 3 × 32 A feed.
OVER_L1 = (
    "Feed PDU-A phase L1 (230 V × 32 A) would carry 11,400 W against its continuous limit of 5,888 W "
    "(0.8 × 7,360 W): 193.6 % of the limit, 5,512 W over."
)


@pytest.fixture
def pm():
    return factories.make_pm(username="phase-pm")


def _place(server, rack, lowest_u, feeds, pm, **kwargs):
    return placement_create(server=server, rack=rack, lowest_u=lowest_u, feeds=feeds, actor=pm, **kwargs)


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_two_5_7_kw_servers_on_one_phase_are_refused_naming_the_phase(pm):
    rack, (pdu,) = rig.rack(pm, feeds=[THREE_32A])
    first, second = rig.servers(2)
    _place(first, rack, 1, [pdu], pm, measured_wall_w=5700, phases={pdu.pk: "L1"})

    with pytest.raises(RuleViolation) as refusal:
        _place(second, rack, 10, [pdu], pm, measured_wall_w=5700, phases={pdu.pk: "L1"})

    assert refusal.value.code == "circuit_limit"
    assert (
        refusal.value.message == f"Placing server {second.hostname} would overload 1 circuit(s) of rack R01."
    )
    # The feed in all holds (11,400 W of 17,664 W): the phase does not.
    assert refusal.value.missing == [OVER_L1]
    assert not RackPlacement.objects.filter(server=second).exists()


def test_on_two_phases_they_are_accepted_and_the_rack_page_shows_both_phases(pm):
    rack, (pdu,) = rig.rack(pm, feeds=[THREE_32A])
    first, second = rig.servers(2)
    _place(first, rack, 1, [pdu], pm, measured_wall_w=5700, phases={pdu.pk: "L1"})
    _place(second, rack, 10, [pdu], pm, measured_wall_w=5700, phases={pdu.pk: "L2"})

    (load,) = feed_loads(rack=rack)
    assert load.ok and load.pool_ok
    assert [(p.line, p.load_w, p.limit_w, round(p.percent_of_limit, 1)) for p in load.phase_loads] == [
        ("L1", 5700.0, 5888.0, 96.8),
        ("L2", 5700.0, 5888.0, 96.8),
        ("L3", 0.0, 5888.0, 0.0),
    ]
    assert load.imbalance_percent == pytest.approx(150.0)  # (5,700 − 0) / 3,800
    assert (load.phase_of(first.pk), load.phase_of(second.pk)) == ("L1", "L2")
    assert phase_caption(load) == (
        "L1 5,700 W (96.8 %) · L2 5,700 W (96.8 %) · L3 0 W (0.0 %) · imbalance 150.0 %"
    )

    html = _client(pm).get(f"/deployment/racks/{rack.pk}/").content.decode()
    table = html[html.index('class="load phase-loads"') : html.index("</table>", html.index("phase-loads"))]
    for line in ("L1", "L2"):
        row = table[table.index(f'data-phase="{line}"') :]
        row = row[: row.index("</tr>")]
        assert "5,700 W" in row and "5,888 W" in row and "96.8 %" in row
    assert "Imbalance 150.0 %" in table
    # The elevation says the same under the feed's bar.
    assert "L1 5,700 W (96.8 %) · L2 5,700 W (96.8 %)" in rack_elevation_svg(rack=rack, user=pm)
    assert 'data-l1-w="5700" data-l2-w="5700" data-l3-w="0"' in html


def test_a_and_b_each_carry_the_full_load_on_their_own_phase(pm):
    rack, (a1, b1) = rig.rack(
        pm, feeds=[{**THREE_32A, "name": "A1"}, {**THREE_32A, "name": "B1", "leg": "B"}]
    )
    first, second = rig.servers(2)
    _place(first, rack, 1, [a1, b1], pm, measured_wall_w=5000, phases={a1.pk: "L1", b1.pk: "L2"})

    # A1 L2 is free, B1 L2 is not: B1 alone must hold the whole 5,000 W of each when A fails.
    with pytest.raises(RuleViolation) as refusal:
        _place(second, rack, 10, [a1, b1], pm, measured_wall_w=5000, phases={a1.pk: "L2", b1.pk: "L2"})
    assert refusal.value.missing == [
        "Feed B1 phase L2 (230 V × 32 A) would carry 10,000 W against its continuous limit of 5,888 W "
        "(0.8 × 7,360 W): 169.8 % of the limit, 4,112 W over."
    ]

    _place(second, rack, 10, [a1, b1], pm, measured_wall_w=5000, phases={a1.pk: "L2", b1.pk: "L3"})
    loads = {load.feed.name: [p.load_w for p in load.phase_loads] for load in feed_loads(rack=rack)}
    assert loads == {"A1": [5000.0, 5000.0, 0.0], "B1": [0.0, 5000.0, 5000.0]}


def test_a_load_on_several_phases_splits_evenly_and_the_audit_row_has_the_phase_figures(pm):
    rack, (pdu,) = rig.rack(pm, feeds=[THREE_32A])
    server = rig.server()
    _place(server, rack, 1, [pdu], pm, measured_wall_w=5700, phases={pdu.pk: "L1+L2+L3"})

    (load,) = feed_loads(rack=rack)
    assert [p.load_w for p in load.phase_loads] == [1900.0, 1900.0, 1900.0]
    assert load.imbalance_percent == 0.0
    (event,) = rig.events(server, "deployment.place")
    assert event.after["circuits"] == {
        "PDU-A": {
            "load_w": 5700,
            "limit_w": 17664,
            "percent_of_limit": 32.3,
            "phase": "L1+L2+L3",
            "phase_chosen": True,
            "phases": {
                line: {"load_w": 1900, "limit_w": 5888, "percent_of_limit": 32.3}
                for line in ("L1", "L2", "L3")
            },
            "imbalance_percent": 0.0,
        }
    }
    assert PlacementFeed.objects.get(rackplacement__server=server).phase == "L1+L2+L3"


def test_a_feed_over_in_all_is_named_by_its_total(pm):
    rack, (c1,) = rig.rack(pm, feeds=[{"name": "C1", "phases": 3}])  # 3 × 16 A: 2,944 W a phase
    servers = rig.servers(3)
    for n, server in enumerate(servers[:2]):
        _place(server, rack, 1 + 5 * n, [c1], pm, measured_wall_w=3000, phases={c1.pk: "L1+L2+L3"})

    with pytest.raises(RuleViolation) as refusal:
        _place(servers[2], rack, 11, [c1], pm, measured_wall_w=3000, phases={c1.pk: "L1+L2+L3"})

    # Each phase is over too, but no split over the phases could hold 9,000 W: the feed's total says it.
    assert refusal.value.missing == [
        "Feed C1 (230 V × 16 A × 3 phases) would carry 9,000 W against its continuous limit of 8,832 W "
        "(0.8 × 11,040 W): 101.9 % of the limit, 168 W over."
    ]


@pytest.mark.parametrize(
    ("phases", "message"),
    [
        ({"a1": "L2"}, "phases: feed A1 is single-phase: its only phase is L1; got 'L2'."),
        ({"c1": "L4"}, "phases: feed C1 has the phases L1, L2, L3, L1+L2, L1+L3, L2+L3, L1+L2+L3; got 'L4'."),
        (
            {"b1": "L1"},
            "phases: {b1} is not one of the chosen feeds; name phases for A1 (id {a1}), C1 (id {c1})",
        ),
    ],
)
def test_a_phase_the_feed_lacks_or_of_a_feed_not_chosen_is_a_400(pm, phases, message):
    rack, (a1, b1, c1) = rig.rack(
        pm, feeds=[{"name": "A1"}, {"name": "B1", "leg": "B"}, {"name": "C1", "phases": 3}]
    )
    ids = {"a1": a1.pk, "b1": b1.pk, "c1": c1.pk}
    server = rig.server(configuration=rig.config(gpus=(100, 1), others=()))

    with pytest.raises(InvalidInput) as refusal:
        _place(server, rack, 1, [a1, c1], pm, phases={ids[key]: value for key, value in phases.items()})

    assert refusal.value.field == "phases"
    assert refusal.value.message.startswith(message.format(**ids))
    assert not RackPlacement.objects.filter(server=server).exists()


def test_a_feed_left_out_draws_from_l1_assumed_only_on_three_phases(pm):
    rack, (a1, c1) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}, {"name": "C1", "phases": 3}])
    server = rig.server(configuration=rig.config(gpus=(100, 1), others=()))
    placement = _place(server, rack, 1, [a1, c1], pm)

    links = {link.powerfeed.name: (link.phase, link.phase_assumed) for link in placement.feed_links.all()}
    assert links == {"A1": ("L1", False), "C1": ("L1", True)}  # a single phase has nothing to choose
    (review,) = phase_review(feed_loads(rack=rack))
    assert (review.hostname, review.links, review.assumed_feeds) == (
        server.hostname,
        [("A1", "L1", False), ("C1", "L1", True)],
        ["C1"],
    )


def test_set_phases_corrects_confirms_and_is_audited(pm):
    rack, (a1, b1) = rig.rack(
        pm, feeds=[{**THREE_32A, "name": "A1"}, {**THREE_32A, "name": "B1", "leg": "B"}]
    )
    first, second = rig.servers(2)
    placement = _place(first, rack, 1, [a1, b1], pm, measured_wall_w=5000)  # both assumed L1
    _place(second, rack, 10, [a1, b1], pm, measured_wall_w=800)  # assumed L1 as well
    Server.objects.filter(pk=first.pk).update(status="deployed")  # allowed after deploy: no U, no feed moves

    placement_set_phases(placement=placement, phases={b1.pk: "L3"}, actor=pm)

    links = {link.powerfeed.name: (link.phase, link.phase_assumed) for link in placement.feed_links.all()}
    assert links == {"A1": ("L1", False), "B1": ("L3", False)}  # A1 kept and confirmed
    (event,) = rig.events(first, "deployment.phases")
    assert event.actor == pm
    assert event.before == {"phases": {"A1": "L1", "B1": "L1"}, "not_chosen": ["A1", "B1"]}
    assert event.after["phases"] == {"A1": "L1", "B1": "L3"}
    assert event.after["circuits"]["B1"]["phases"]["L3"] == {
        "load_w": 5000,
        "limit_w": 5888,
        "percent_of_limit": 84.9,
    }
    assert [review.hostname for review in phase_review(feed_loads(rack=rack))] == [second.hostname]
    placed = RackPlacement.objects.get(pk=placement.pk)
    assert (placed.lowest_u, sorted(placed.feeds.values_list("name", flat=True))) == (1, ["A1", "B1"])
    # Nothing left to confirm and nothing given: no row.
    placement_set_phases(placement=placement, phases={}, actor=pm)
    assert len(rig.events(first, "deployment.phases")) == 1


def test_set_phases_checks_the_limit_per_phase_and_a_pm_may_override(pm):
    rack, (pdu,) = rig.rack(pm, feeds=[THREE_32A])
    first, second = rig.servers(2)
    _place(first, rack, 1, [pdu], pm, measured_wall_w=5700, phases={pdu.pk: "L1"})
    placement = _place(second, rack, 10, [pdu], pm, measured_wall_w=5700, phases={pdu.pk: "L2"})

    with pytest.raises(RuleViolation) as refusal:
        placement_set_phases(placement=placement, phases={pdu.pk: "L1"}, actor=pm)
    assert refusal.value.message == (
        f"Setting the phases of server {second.hostname} would overload 1 circuit(s) of rack R01."
    )
    assert refusal.value.missing == [OVER_L1]
    assert PlacementFeed.objects.get(rackplacement=placement).phase == "L2"

    partner = factories.make_member(factories.PartnerFactory(), username="phase-fitter")
    with pytest.raises(RuleViolation) as refusal:
        placement_set_phases(placement=placement, phases={pdu.pk: "L1"}, actor=partner, override_reason="Hm")
    assert refusal.value.code == "pm_only"

    reason = "The electrician re-cables L1 to the new PDU on Monday."
    placement_set_phases(placement=placement, phases={pdu.pk: "L1"}, actor=pm, override_reason=reason)
    assert RackPlacement.objects.get(pk=placement.pk).power_override_reason == reason
    (event,) = rig.events(second, "deployment.phases")
    assert (event.note, event.after["override"]) == (reason, True)
    assert event.after["circuits"]["PDU-A"]["phases"]["L1"]["load_w"] == 11400


def test_set_phases_refuses_a_phase_the_feed_lacks(pm):
    rack, (a1,) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}])
    placement = _place(rig.server(), rack, 1, [a1], pm)
    with pytest.raises(InvalidInput) as refusal:
        placement_set_phases(placement=placement, phases={a1.pk: "L3"}, actor=pm)
    assert refusal.value.message == "phases: feed A1 is single-phase: its only phase is L1; got 'L3'."


def test_lowering_a_breaker_under_one_phase_load_is_refused_naming_the_phase(pm):
    rack, (pdu,) = rig.rack(pm, feeds=[THREE_32A])
    _place(rig.server(), rack, 1, [pdu], pm, measured_wall_w=5000, phases={pdu.pk: "L1"})

    # 25 A: 4,600 W a phase, 13,800 W in all: the feed holds 5,000 W, its phase L1 does not.
    with pytest.raises(RuleViolation) as refusal:
        feed_update(feed=pdu, actor=pm, current_a=25)
    assert refusal.value.missing == [
        "Feed PDU-A phase L1 (230 V × 25 A) would carry 5,000 W against its continuous limit of 4,600 W "
        "(0.8 × 5,750 W): 108.7 % of the limit, 400 W over."
    ]


def test_the_rack_page_lists_the_assumed_phases_for_pms_only(tenants):
    from tests.deployment.rack_rig import make_rack_world

    world = make_rack_world(tenants)  # server B stands on the three-phase C1 without a phase: assumed L1
    html = _client(tenants.pm).get(f"/deployment/racks/{world.rack.pk}/").content.decode()
    section = html[html.index('id="phase-review"') :]
    section = section[: section.index("</section>")]
    assert world.server_b.hostname in section
    assert "C1 L1 (phase assumed L1 — review)" in section
    assert world.server_a.hostname not in section  # A1 and B1 are single-phase: nothing to choose
    assert f"?phase_review=yes&amp;rack__id__exact={world.rack.pk}" in section
    for member in (tenants.user_a, tenants.user_b):
        assert (
            'id="phase-review"'
            not in _client(member).get(f"/deployment/racks/{world.rack.pk}/").content.decode()
        )


def test_the_admin_lists_corrects_and_confirms_the_phases(tenants):
    from tests.deployment.rack_rig import make_rack_world

    world = make_rack_world(tenants)
    browser = _client(tenants.pm)
    placement = RackPlacement.objects.get(server=world.server_b)
    url = "/admin/deployment/rackplacement/"

    listed = browser.get(url, {"phase_review": "yes"}).content.decode()
    assert world.server_b.hostname in listed and world.server_a.hostname not in listed
    assert "C1 L1 (assumed)" in listed
    assert world.server_a.hostname in browser.get(url, {"phase_review": "no"}).content.decode()
    change = browser.get(f"{url}{placement.pk}/change/").content.decode()
    assert "Feeds and phases" in change and f"{url}{placement.pk}/phases/" in change

    page = browser.get(f"{url}{placement.pk}/phases/")
    assert page.status_code == 200 and "Assumed L1 (nobody chose it)" in page.content.decode()
    c1 = world.feeds["C1"]
    response = browser.post(
        f"{url}{placement.pk}/phases/", {f"phase_{c1.pk}": "L2+L3", "override_reason": ""}
    )
    assert response.status_code == 302
    link = PlacementFeed.objects.get(rackplacement=placement)
    assert (link.phase, link.phase_assumed) == ("L2+L3", False)
    assert rig.events(world.server_b, "deployment.phases")

    # The action confirms what is recorded, through the same service.
    PlacementFeed.objects.filter(pk=link.pk).update(phase="L1", phase_assumed=True)
    browser.post(url, {"action": "confirm_phases", "_selected_action": [placement.pk]})
    assert PlacementFeed.objects.get(pk=link.pk).phase_assumed is False
    assert len(rig.events(world.server_b, "deployment.phases")) == 2
    assert browser.get(f"{url}999999/phases/").status_code == 404


def test_the_admin_add_form_names_the_phases_and_refuses_a_wrong_one(tenants):
    from tests.deployment.rack_rig import make_rack_world

    world = make_rack_world(tenants)
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=2)
    first, second = factories.make_servers(order, status="burn_in_passed")
    browser = _client(tenants.pm)
    body = {
        "server": first.pk,
        "rack": world.rack.pk,
        "lowest_u": 20,
        "face": "front",
        "feeds": [world.feeds["C1"].pk, world.feeds["A1"].pk],
        "measured_wall_w": "40",  # A1 carries 2,900 W of its 2,944 W
        "power_override_reason": "",
    }
    refused = browser.post("/admin/deployment/rackplacement/add/", {**body, "phases": "c1: l4"})
    assert refused.status_code == 200
    assert "Feed C1 has no phase &#x27;l4&#x27;: it has L1, L2, L3" in refused.content.decode()
    unknown = browser.post("/admin/deployment/rackplacement/add/", {**body, "phases": "PDU-Z: L1"})
    assert "does not name one of the chosen feeds (A1, C1)" in unknown.content.decode()

    assert (
        browser.post("/admin/deployment/rackplacement/add/", {**body, "phases": "C1: l2 + l3"}).status_code
        == 302
    )
    links = {
        link.powerfeed.name: (link.phase, link.phase_assumed)
        for link in PlacementFeed.objects.filter(rackplacement__server=first)
    }
    assert links == {"A1": ("L1", False), "C1": ("L2+L3", False)}
    assert not RackPlacement.objects.filter(server=second).exists()


def test_a_feed_goes_single_phase_only_while_nobody_draws_from_l2_or_l3(pm):
    rack, (pdu,) = rig.rack(pm, feeds=[THREE_32A])
    first, second = rig.servers(2, configuration=rig.config(gpus=(100, 1), others=()))
    _place(first, rack, 1, [pdu], pm, phases={pdu.pk: "L1"})
    placement = _place(second, rack, 10, [pdu], pm, phases={pdu.pk: "L2+L3"})

    with pytest.raises(RuleViolation) as refusal:
        feed_update(feed=pdu, actor=pm, phases=1)
    assert refusal.value.code == "feed_phases_in_use"
    assert refusal.value.message == (
        f"Feed PDU-A cannot become single-phase: {second.hostname} (L2+L3) draw from other phases than L1; "
        "set their phases to L1 first."
    )

    placement_set_phases(placement=placement, phases={pdu.pk: "L1"}, actor=pm)
    assert feed_update(feed=pdu, actor=pm, phases=1).phases == 1
    (load,) = feed_loads(rack=rack)
    assert [phase.line for phase in load.phase_loads] == ["L1"]
