"""The admin's placement form offers the chosen rack's feeds, each named with its rack (issue #24, item 7):
two racks both have an "A1", and the form listed every feed of every rack by that bare name."""

from __future__ import annotations

import re

import pytest

from deployment.models import RackPlacement
from deployment.services import feed_create, rack_create
from tests import factories
from tests.deployment.rack_rig import make_rack_world

pytestmark = pytest.mark.django_db

ADD = "/admin/deployment/rackplacement/add/"


@pytest.fixture
def world(tenants):
    world = make_rack_world(tenants)
    other = rack_create(site=world.site, actor=tenants.pm, name="R08", height_u=42)
    world.other_a1 = feed_create(rack=other, actor=tenants.pm, name="A1", voltage_v=230, current_a=16)
    world.other = other
    return world


@pytest.fixture
def pm_client(client, tenants):
    assert client.login(username="pm", password=factories.PASSWORD)
    return client


def _options(html: str) -> dict[str, tuple[str, str]]:
    """The feeds select's options: value → (data-rack, label)."""
    select = re.search(r'<select name="feeds"[^>]*>(.*?)</select>', html, re.S)
    assert select, html[:2000]
    return {
        value: (rack, label.strip())
        for value, rack, label in re.findall(
            r'<option value="(\d+)" data-rack="(\d+)"[^>]*>([^<]*)</option>', select.group(1)
        )
    }


def test_every_feed_is_named_with_its_rack_and_carries_it_for_the_script(pm_client, world):
    html = pm_client.get(ADD).content.decode()
    options = _options(html)
    feeds = {**{f"R07-{name}": feed for name, feed in world.feeds.items()}, "R08-A1": world.other_a1}
    assert set(options) == {str(feed.pk) for feed in feeds.values()}
    assert options[str(world.feeds["A1"].pk)] == (
        str(world.rack.pk),
        "Sofia Colo 1 / R07 · A1 (230 V × 16 A × 1)",
    )
    assert options[str(world.other_a1.pk)] == (
        str(world.other.pk),
        "Sofia Colo 1 / R08 · A1 (230 V × 16 A × 1)",
    )
    assert "deployment/placement_feeds.js" in html  # hides the other racks' feeds as the rack changes


def test_opened_for_one_rack_the_form_offers_only_its_feeds(pm_client, world):
    options = _options(pm_client.get(f"{ADD}?rack={world.other.pk}").content.decode())
    assert options == {
        str(world.other_a1.pk): (str(world.other.pk), "Sofia Colo 1 / R08 · A1 (230 V × 16 A × 1)")
    }


def test_a_feed_of_another_rack_is_refused_by_name_and_rack_never_by_id(pm_client, world, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in_passed")
    body = {
        "server": server.pk,
        "rack": world.rack.pk,
        "lowest_u": 20,
        "face": "front",
        "feeds": [world.feeds["C1"].pk, world.other_a1.pk],
        "measured_wall_w": "",
        "power_override_reason": "",
    }
    response = pm_client.post(ADD, body)
    assert response.status_code == 200  # the form again, with its error
    errors = response.context["adminform"].form.errors["feeds"]
    assert errors == [
        "Sofia Colo 1 / R08 · A1 (230 V × 16 A × 1) is not a feed of rack Sofia Colo 1 / R07: pick among its "
        "own feeds."
    ]
    assert not RackPlacement.objects.filter(server=server).exists()

    # A feed deleted meanwhile: the form says so, without its id.
    gone = world.other_a1.pk
    world.other_a1.delete()
    response = pm_client.post(ADD, {**body, "feeds": [gone]})
    errors = response.context["adminform"].form.errors["feeds"]
    assert errors == ["One of the chosen feeds no longer exists: pick the feeds again."]
