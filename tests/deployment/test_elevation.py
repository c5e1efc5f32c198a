"""The rack elevation SVG and its endpoint: who sees which server by name, the U scale, the feed bars."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from deployment.elevation import rack_elevation_svg
from tests.deployment.rack_rig import make_rack_world
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db

NS = {"svg": "http://www.w3.org/2000/svg"}


@pytest.fixture
def world(tenants):
    return make_rack_world(tenants)


def _texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return ["".join(node.itertext()) for node in root.iter() if node.tag.endswith(("text", "title"))]


def test_the_svg_parses_and_has_the_title_the_u_scale_and_the_feed_bars(world, tenants):
    svg = rack_elevation_svg(rack=world.rack, user=tenants.pm)
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert "R07" in root.find("svg:title", NS).text
    u_numbers = [int(t.text) for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "u"]
    assert sorted(set(u_numbers)) == list(range(1, 43))
    # U1 is drawn at the bottom, U42 at the top.
    y = {
        int(t.text): float(t.get("y"))
        for t in root.iter("{http://www.w3.org/2000/svg}text")
        if t.get("class") == "u"
    }
    assert y[1] > y[2] > y[42]
    texts = _texts(svg)
    assert "A1 · 2,900 W of 2,944 W continuous (98.5 %) · 3,680 W rated" in texts
    assert "B1 · 2,900 W of 2,944 W continuous (98.5 %) · 3,680 W rated" in texts
    assert any(text.startswith("C1 · ") and text.endswith("· 22,080 W rated") for text in texts)
    # 42 U, 12 of them taken: 30 free slots.
    free = [node for node in root.iter() if node.get("class") == "slot slot-free"]
    assert len(free) == 30
    # The continuous-limit marker sits at 0.8 of the bar.
    feed = next(g for g in root.iter("{http://www.w3.org/2000/svg}g") if g.get("data-feed") == "A1")
    bar = next(r for r in feed.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") is None)
    limit = next(
        line for line in feed.iter("{http://www.w3.org/2000/svg}line") if line.get("class") == "limit"
    )
    assert float(limit.get("x1")) == pytest.approx(
        float(bar.get("x")) + 0.8 * float(bar.get("width")), abs=0.1
    )


def test_the_pm_sees_every_server_named_with_status_and_link(world, tenants):
    svg = rack_elevation_svg(rack=world.rack, user=tenants.pm)
    for server in (world.server_a, world.server_b):
        assert server.hostname in svg
        assert f'href="/deployment/servers/{server.pk}/"' in svg
    assert "Burn-in passed" in svg  # the status in words, beside its colour
    assert ">occupied<" not in svg
    # Page styles (.status, .ok, .occupied) cannot restyle the drawing: its classes are its own.
    root = ET.fromstring(svg)
    classes = {c for node in root.iter() for c in (node.get("class") or "").split()}
    assert not classes & {"status", "ok", "occupied", "hostname", "free"}


@pytest.mark.parametrize(
    ("viewer", "own", "other"),
    [
        ("user_a", "server_a", "server_b"),
        ("user_b", "server_b", "server_a"),
        ("user_p", "server_a", "server_b"),
        ("user_q", "server_b", "server_a"),
    ],
)
def test_a_member_sees_own_servers_named_and_the_others_only_as_occupied(world, tenants, viewer, own, other):
    svg = rack_elevation_svg(rack=world.rack, user=getattr(tenants, viewer))
    ET.fromstring(svg)
    mine, theirs = getattr(world, own), getattr(world, other)
    assert mine.hostname in svg and mine.asset_tag in svg
    assert f"/deployment/servers/{mine.pk}/" in svg
    assert theirs.hostname not in svg
    assert theirs.asset_tag not in svg
    assert f"/deployment/servers/{theirs.pk}/" not in svg
    assert f'data-server="{theirs.pk}"' not in svg
    root = ET.fromstring(svg)
    occupied = [node for node in root.iter() if node.get("class") == "slot slot-occupied"]
    assert len(occupied) == 1
    assert (
        "".join(occupied[0].itertext())
        == f"Occupied (U{theirs.placement.lowest_u}–U{theirs.placement.top_u})occupied"
    )


def test_names_are_escaped(world, tenants):
    from deployment.models import Rack

    Rack.objects.filter(pk=world.rack.pk).update(name='R<7> & "co"')
    world.rack.refresh_from_db()
    svg = rack_elevation_svg(rack=world.rack, user=tenants.pm)
    assert "R<7>" not in svg
    assert ET.fromstring(svg).find("svg:title", NS).text.startswith('Rack R<7> & "co"')


def test_the_endpoint_serves_svg_to_whoever_sees_the_rack(world, tenants):
    url = f"/api/v1/racks/{world.rack.pk}/elevation.svg/"
    for user in (tenants.pm, tenants.user_a, tenants.user_b, tenants.user_p):
        response = api_client(user).get(url)
        assert response.status_code == 200, user.username
        assert response["Content-Type"] == "image/svg+xml"
        ET.fromstring(response.content)
    body = api_client(tenants.user_a).get(url, HTTP_ACCEPT="image/svg+xml").content.decode()
    assert world.server_a.hostname in body and world.server_b.hostname not in body


def test_the_endpoint_is_a_404_for_a_rack_the_user_may_not_see(world, tenants):
    from deployment.services import rack_create, site_create

    room = site_create(
        actor=tenants.pm,
        name="Beta server room",
        kind="customer_room",
        operator="Beta facilities",
        customer=tenants.customer_b,
        address="Basel",
        country="CH",
    )
    rack_b = rack_create(site=room, actor=tenants.pm, name="B-01", height_u=24)
    url = f"/api/v1/racks/{rack_b.pk}/elevation.svg/"
    assert api_client(tenants.user_b).get(url).status_code == 200  # B's own room, empty
    for user in (tenants.user_a, tenants.user_p, tenants.user_q, tenants.outsider):
        assert api_client(user).get(url).status_code == 404, user.username
    assert (
        api_client(tenants.outsider).get(f"/api/v1/racks/{world.rack.pk}/elevation.svg/").status_code == 404
    )
    missing = api_client(tenants.pm).get("/api/v1/racks/999999/elevation.svg/", HTTP_ACCEPT="image/svg+xml")
    assert missing.status_code == 404
    assert api_client(None).get(url).status_code in {401, 403}


def test_the_rack_route_has_no_list_or_detail():
    from werkbank.urls import api_router

    names = {pattern.name for pattern in api_router.urls}
    assert "rack-elevation-svg" in names
    assert not {"rack-elevation-list", "rack-elevation-detail"} & names


def _feed_states(svg: str) -> dict[str, str]:
    root = ET.fromstring(svg)
    return {
        g.get("data-feed"): g.get("class")
        for g in root.iter("{http://www.w3.org/2000/svg}g")
        if g.get("data-feed")
    }


def test_a_feed_near_or_over_its_limit_says_so_in_words(world, tenants):
    from deployment.services import placement_create
    from tests import factories

    assert _feed_states(rack_elevation_svg(rack=world.rack, user=tenants.pm)) == {
        "A1": "feed feed-near",  # 98.5 % of the continuous limit
        "B1": "feed feed-near",
        "C1": "feed feed-ok",
    }
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in_passed")
    placement_create(
        server=server,
        rack=world.rack,
        lowest_u=30,
        feeds=[world.feeds["A1"]],
        actor=tenants.pm,
        measured_wall_w=500,
        override_reason="Temporary, until feed A3 is installed",
    )
    svg = rack_elevation_svg(rack=world.rack, user=tenants.pm)
    assert _feed_states(svg)["A1"] == "feed feed-over"
    assert "A1 · 3,400 W of 2,944 W continuous (115.5 %) · 3,680 W rated" in _texts(svg)
    assert "OVER the continuous limit" in svg
