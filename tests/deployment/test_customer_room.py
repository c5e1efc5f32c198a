"""A customer's own room takes only that customer's servers (issue #28 item 2): another customer's server is
a 409 naming both customers, through the API as through the service; the room's own customer is placed."""

from __future__ import annotations

import pytest

from deployment.choices import SiteKind
from deployment.models import RackPlacement
from deployment.services import feed_create, rack_create, site_create
from tests.deployment.api_rig import make_rig

pytestmark = pytest.mark.django_db

PLACEMENTS = "/api/v1/placements/"


def _customer_room(r, customer):
    site = site_create(
        actor=r.t.pm,
        name=f"{customer.name} server room",
        kind=SiteKind.CUSTOMER_ROOM,
        operator=f"{customer.name} facilities",
        customer=customer,
        address="Hauptstraße 1, Leipzig",
        country="DE",
    )
    rack = rack_create(site=site, actor=r.t.pm, name="Room rack", height_u=42)
    feed = feed_create(
        rack=rack, actor=r.t.pm, name="Wall 16 A", leg="A", voltage_v=230, current_a=16, phases=1
    )
    return site, rack, feed


def test_another_customers_server_is_refused_naming_both(tenants):
    r = make_rig(tenants)
    _, rack, feed = _customer_room(r, r.t.customer_b)
    response = r.post(
        r.t.pm, PLACEMENTS, {"server": r.a2.pk, "rack": rack.pk, "lowest_u": 1, "feeds": [feed.pk]}
    )
    assert response.status_code == 409, response.content
    body = response.json()
    assert body["code"] == "foreign_room"
    assert r.t.customer_b.name in body["detail"] and r.t.customer_a.name in body["detail"]
    assert r.a2.hostname in body["detail"]
    assert not RackPlacement.objects.filter(server=r.a2).exists()


def test_the_rooms_own_customer_is_placed(tenants):
    r = make_rig(tenants)
    _, rack, feed = _customer_room(r, r.t.customer_a)
    response = r.post(
        r.t.pm,
        PLACEMENTS,
        {"server": r.a2.pk, "rack": rack.pk, "lowest_u": 1, "feeds": [feed.pk], "measured_wall_w": 900},
    )
    assert response.status_code == 201, response.content
    assert RackPlacement.objects.get(server=r.a2).rack == rack
