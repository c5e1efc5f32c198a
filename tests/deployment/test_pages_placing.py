"""Placing a server from the rack page (issue #28 item 2): a PM's form beside the front and rear elevations,
the POST through `placement_create` with its phases, the service's refusals shown on the page with the form
keeping its values, and nothing of it for anyone else."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from django.test import Client

from builds.models import Server
from deployment import placing
from deployment.choices import SiteKind
from deployment.elevation import rack_elevation_svg
from deployment.models import PlacementFeed, RackPlacement
from deployment.selectors import elevation_slots
from deployment.services import feed_create, placement_create, rack_create, site_create
from tests import factories
from tests.deployment.rack_rig import make_rack_world
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

SVG = "{http://www.w3.org/2000/svg}"
#: A PM's rack page: session, user, PM group, rack, its visible servers, placements, feeds, feed links, the
#: configurations' power, and the servers to place with their heights (one query).
QUERIES = 10


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _unplaced(customer: Any, count: int = 1, status: str = "burn_in_passed") -> list[Server]:
    order = factories.OrderFactory(customer=customer, server_count=count)
    servers = factories.make_servers(order, status=status)
    return servers


@pytest.fixture
def world(tenants):
    world = make_rack_world(tenants)
    [world.server_c] = _unplaced(tenants.customer_a)
    return world


def _page(world) -> str:
    return f"/deployment/racks/{world.rack.pk}/"


def _place(world) -> str:
    return f"/deployment/racks/{world.rack.pk}/place/"


def _svgs(html: str) -> list[ET.Element]:
    found, start = [], html.find("<svg")
    while start != -1:
        end = html.index("</svg>", start) + len("</svg>")
        found.append(ET.fromstring(html[start:end]))
        start = html.find("<svg", end)
    return found


def _post(world, **values: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "server": world.server_c.pk,
        "lowest_u": 20,
        "face": "front",
        "feeds": [world.feeds["C1"].pk],
        f"phase_{world.feeds['C1'].pk}": "L2",
        "measured_wall_w": "1500",
    }
    data.update(values)
    return data


def test_the_pm_gets_the_form_with_the_server_its_height_and_the_racks_feeds_and_phases(world, tenants):
    html = _client(tenants.pm).get(_page(world)).content.decode()
    assert 'id="placing-form"' in html and "deployment/rack_placing.js" in html
    option = re.search(rf'<option value="{world.server_c.pk}"[^>]*>([^<]*)</option>', html)
    assert option is not None and 'data-height="6"' in option.group(0)
    assert world.server_c.hostname in option.group(1) and "Alpha Rentals GmbH" in option.group(1)
    assert str(world.server_c.order) in option.group(1) and "6U" in option.group(1)
    # Placed servers are not offered.
    assert f'<option value="{world.server_a.pk}"' not in html
    # The rack's feeds only, each named with the site and rack; a 3-phase feed offers all seven phase values.
    assert "Sofia Colo 1 / R07 · C1 (230 V × 32 A × 3)" in html
    assert "Sofia Colo 1 / R07 · A1 (230 V × 16 A × 1)" in html
    c1 = re.search(rf'<select name="phase_{world.feeds["C1"].pk}"[^>]*>(.*?)</select>', html).group(1)
    assert re.findall(r'value="([^"]+)"', c1) == ["L1", "L2", "L3", "L1+L2", "L1+L3", "L2+L3", "L1+L2+L3"]
    a1 = re.search(rf'<select name="phase_{world.feeds["A1"].pk}"[^>]*>(.*?)</select>', html).group(1)
    assert re.findall(r'value="([^"]+)"', a1) == ["L1"]
    assert "Free: U7–U9, U16–U42." in html
    # No override reason until a circuit would be over its limit.
    assert 'name="override_reason"' not in html
    # Front and rear: every free U a target of its face; the rear draws no feeds.
    front, rear = _svgs(html)
    for svg, face, free in ((front, "front", 30), (rear, "rear", 30)):
        targets = [node for node in svg.iter(f"{SVG}rect") if node.get("data-face") == face]
        assert len(targets) == free and all(node.get("class") == "slot slot-free" for node in targets)
        assert all(node.get("tabindex") == "0" and node.get("role") == "button" for node in targets)
    assert not [g for g in rear.iter(f"{SVG}g") if "feed" in (g.get("class") or "")]
    assert "R07 · rear" in "".join(rear.itertext())


def test_the_pm_places_a_server_with_its_phase_and_sees_it_in_the_elevation(world, tenants):
    pm = _client(tenants.pm)
    response = pm.post(_place(world), _post(world, face="rear"))
    assert response.status_code == 302 and response["Location"] == _page(world)
    placement = RackPlacement.objects.get(server=world.server_c)
    assert (placement.rack, placement.lowest_u, placement.top_u, placement.face) == (
        world.rack,
        20,
        25,
        "rear",
    )
    assert placement.measured_wall_w == 1500
    [link] = PlacementFeed.objects.filter(rackplacement=placement)
    assert (link.powerfeed, link.phase, link.phase_assumed) == (world.feeds["C1"], "L2", False)
    event = AuditEvent.objects.filter(verb="deployment.place", object_id=str(world.server_c.pk)).get()
    assert event.actor == tenants.pm and event.after["lowest_u"] == 20
    html = pm.get(_page(world)).content.decode()
    assert f"{world.server_c.hostname} is placed in rack R07 at U20–U25, from the rear." in html
    front = _svgs(html)[0]
    block = next(a for a in front.iter(f"{SVG}a") if a.get("data-server") == str(world.server_c.pk))
    assert block.get("data-lowest-u") == "20" and world.server_c.hostname in "".join(block.itertext())
    assert f'<option value="{world.server_c.pk}"' not in html  # placed: no longer offered


def test_an_occupied_u_is_refused_naming_the_server_in_the_way_and_the_form_keeps_its_values(world, tenants):
    response = _client(tenants.pm).post(_place(world), _post(world, lowest_u=3))
    assert response.status_code == 409
    html = response.content.decode()
    assert f"{world.server_c.hostname} was not placed." in html
    assert f"U3–U8 of rack R07 overlaps server {world.server_a.hostname} at U1–U6." in html
    assert f"free U3–U8 in rack R07 (server {world.server_a.hostname} is in the way)" in html
    assert re.search(rf'<option value="{world.server_c.pk}"[^>]*selected', html)
    assert re.search(r'name="lowest_u" value="3"', html)
    assert re.search(rf'value="{world.feeds["C1"].pk}" data-feed="C1" checked', html)
    c1 = re.search(rf'<select name="phase_{world.feeds["C1"].pk}"[^>]*>(.*?)</select>', html).group(1)
    assert '<option value="L2" selected>' in c1
    assert not RackPlacement.objects.filter(server=world.server_c).exists()


def test_another_customers_room_is_refused_naming_both_customers(world, tenants):
    site = site_create(
        actor=tenants.pm,
        name="Beta server room",
        kind=SiteKind.CUSTOMER_ROOM,
        operator="Beta facilities",
        customer=tenants.customer_b,
        address="Hauptstraße 1, Leipzig",
        country="DE",
    )
    rack = rack_create(site=site, actor=tenants.pm, name="Room rack", height_u=42)
    feed = feed_create(
        rack=rack, actor=tenants.pm, name="Wall", leg="A", voltage_v=230, current_a=16, phases=1
    )
    [own] = _unplaced(tenants.customer_b)
    pm = _client(tenants.pm)
    html = pm.get(f"/deployment/racks/{rack.pk}/").content.decode()
    # The room's customer's servers first; the others apart, marked as refused here.
    own_at = html.index(f'<option value="{own.pk}"')
    foreign = re.search(rf'<option value="{world.server_c.pk}" data-foreign="1"', html)
    assert foreign is not None and own_at < foreign.start()
    assert "Other customers' servers: this room takes only servers of Beta Research AG" in html
    response = pm.post(
        f"/deployment/racks/{rack.pk}/place/",
        {"server": world.server_c.pk, "lowest_u": 1, "face": "front", "feeds": [feed.pk]},
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "Rack Room rack stands in Beta server room, Beta Research AG&#x27;s own room; server " in html
    assert f"{world.server_c.hostname} belongs to Alpha Rentals GmbH&#x27;s order" in html
    assert not RackPlacement.objects.filter(server=world.server_c).exists()
    response = pm.post(
        f"/deployment/racks/{rack.pk}/place/",
        {"server": own.pk, "lowest_u": 1, "face": "front", "feeds": [feed.pk], "measured_wall_w": "900"},
    )
    assert response.status_code == 302 and RackPlacement.objects.get(server=own).rack == rack


def test_a_circuit_over_its_limit_asks_for_the_reason_and_then_places_with_it(world, tenants):
    pm = _client(tenants.pm)
    a1 = world.feeds["A1"].pk
    values = _post(world, feeds=[a1], measured_wall_w="1000", **{f"phase_{a1}": "L1"})
    response = pm.post(_place(world), values)
    assert response.status_code == 409
    html = response.content.decode()
    assert f"Placing server {world.server_c.hostname} would overload 1 circuit(s) of rack R07." in html
    assert 'name="override_reason"' in html
    response = pm.post(_place(world), {**values, "override_reason": "Measured peak, the PDU carries it"})
    assert response.status_code == 302
    placement = RackPlacement.objects.get(server=world.server_c)
    assert placement.power_override_reason == "Measured peak, the PDU carries it"


@pytest.mark.parametrize(
    ("values", "field", "message"),
    [
        ({"lowest_u": 40}, "lowest_u", "from U40 it would reach U45, above the 42U of rack R07"),
        ({"phase_C1": "L4"}, "", "feed C1 has the phases"),
        ({"feeds": []}, "feeds", "Pick at least one of the rack&#x27;s feeds."),
        ({"server": ""}, "server", "Pick a server to place."),
    ],
)
def test_a_bad_value_is_refused_with_its_message(world, tenants, values, field, message):
    if "phase_C1" in values:
        values = {f"phase_{world.feeds['C1'].pk}": values["phase_C1"]}
    response = _client(tenants.pm).post(_place(world), _post(world, **values))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not RackPlacement.objects.filter(server=world.server_c).exists()


def test_a_feed_of_another_rack_is_refused_naming_it_and_its_rack(world, tenants):
    other = rack_create(site=world.site, actor=tenants.pm, name="R08", height_u=42)
    stranger = feed_create(
        rack=other, actor=tenants.pm, name="X1", leg="A", voltage_v=230, current_a=16, phases=1
    )
    response = _client(tenants.pm).post(_place(world), _post(world, feeds=[stranger.pk]))
    assert response.status_code == 400
    assert "X1 (rack R08 at Sofia Colo 1) is not a feed of rack R07" in response.content.decode()


@pytest.mark.parametrize(("viewer", "status"), [("user_a", 403), ("user_p", 403), ("outsider", 404)])
def test_only_a_pm_places_others_are_refused(world, tenants, viewer, status):
    response = _client(getattr(tenants, viewer)).post(_place(world), _post(world))
    assert response.status_code == status
    assert not RackPlacement.objects.filter(server=world.server_c).exists()


def test_an_anonymous_post_goes_to_the_login_and_a_get_is_not_allowed(world, tenants):
    response = Client().post(_place(world), _post(world))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert _client(tenants.pm).get(_place(world)).status_code == 405
    assert not RackPlacement.objects.filter(server=world.server_c).exists()


@pytest.mark.parametrize("viewer", ["user_a", "user_b", "user_p"])
def test_the_rack_page_of_a_non_pm_has_no_form_and_no_targets(world, tenants, viewer):
    user = getattr(tenants, viewer)
    html = _client(user).get(_page(world)).content.decode()
    assert "placing-form" not in html and "rack_placing.js" not in html and "data-face" not in html
    assert "Rear elevation" not in html and world.server_c.hostname not in html
    [svg] = _svgs(html)
    assert ET.tostring(svg) == ET.tostring(ET.fromstring(rack_elevation_svg(rack=world.rack, user=user)))


def test_the_search_narrows_the_servers_and_a_long_list_says_it_is_cut(world, tenants, monkeypatch):
    others = _unplaced(tenants.customer_b, count=3)
    pm = _client(tenants.pm)
    html = pm.get(_page(world), {"q": "Beta Research"}).content.decode()
    assert all(f'<option value="{server.pk}"' in html for server in others)
    assert f'<option value="{world.server_c.pk}"' not in html
    monkeypatch.setattr(placing, "CANDIDATE_LIMIT", 2)
    html = pm.get(_page(world)).content.decode()
    assert len(re.findall(r"<option value=\"\d+\" data-height", html)) == 2
    assert "Only the first 2 servers are listed: search to narrow them." in html


def test_a_deployed_server_is_not_offered(world, tenants):
    [deployed] = _unplaced(tenants.customer_a, status="deployed")
    html = _client(tenants.pm).get(_page(world)).content.decode()
    assert f'<option value="{deployed.pk}"' not in html


def test_free_runs_and_the_candidates_heights(world, tenants):
    slots = elevation_slots(rack=world.rack, user=tenants.pm)
    assert placing.free_runs(rack=world.rack, slots=slots) == [(7, 9), (16, 42)]
    found = placing.placing_candidates(rack=world.rack)
    assert [(each.hostname, each.height_u, each.foreign) for each in found.servers] == [
        (world.server_c.hostname, 6, False)
    ]


def test_the_pm_rack_page_reads_a_fixed_number_of_queries(world, tenants, django_assert_num_queries):
    pm = _client(tenants.pm)
    pm.get(_page(world))  # the session and the PM group are read once
    with django_assert_num_queries(QUERIES):
        assert pm.get(_page(world)).status_code == 200
    # More servers in the rack and more waiting to be placed: the same queries.
    servers = _unplaced(tenants.customer_b, count=4)
    for n, server in enumerate(servers[:2]):
        placement_create(
            server=server,
            rack=world.rack,
            lowest_u=20 + 6 * n,
            feeds=[world.feeds["C1"]],
            phases={world.feeds["C1"].pk: ["L2", "L3"][n]},
            actor=tenants.pm,
            measured_wall_w=1000,
        )
    with django_assert_num_queries(QUERIES):
        html = pm.get(_page(world)).content.decode()
    assert all(server.hostname in html for server in servers)


def test_the_form_and_its_refusal_speak_german(world, tenants, settings):
    pm = _client(tenants.pm)
    pm.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"
    html = pm.get(_page(world)).content.decode()
    for german in ("Server einbauen", "Rückansicht", "Zuleitungen dieses Racks", "Unterste HE", "Frei:"):
        assert german in html
    assert "U20 von hinten: den Server hier einbauen" in html
    for english in ("Place a server", "Rear elevation", "Lowest U", "pick a server"):
        assert english not in html
    html = pm.post(_place(world), _post(world, lowest_u=3)).content.decode()
    assert f"{world.server_c.hostname} wurde nicht eingebaut." in html
