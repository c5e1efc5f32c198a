"""A colocation rack shared by two tenants, for the deployment API's tests.

Customer A's order (built by partner P) and customer B's order (built by partner Q) have servers that passed
burn-in. Rack R1 of the colocation site in Sofia has two 230 V × 16 A single-phase feeds (A and B legs,
continuous limit 2,944 W each). B's server b1 stands at U1–U6 on feed A (measured 1,500 W); A's server a1 at
U10–U15 on feeds A and B (measured 1,000 W). A's second server a2 is not placed yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from builds.choices import ServerStatus
from builds.models import Server
from deployment.choices import SiteKind
from deployment.models import PowerFeed, Rack, RackPlacement, Site
from deployment.services import feed_create, placement_create, rack_create, site_create
from tests import factories
from tests.tenants_rig import Tenants, api_client


@dataclass
class Rig:
    t: Tenants
    site: Site
    rack: Rack
    feed_a: PowerFeed
    feed_b: PowerFeed
    a1: Server
    a2: Server
    b1: Server
    place_a1: RackPlacement
    place_b1: RackPlacement

    def get(self, user: Any, url: str, **params: Any) -> Any:
        return api_client(user).get(url, params)

    def post(self, user: Any, url: str, body: dict) -> Any:
        return api_client(user).post(url, body, format="json")

    def patch(self, user: Any, url: str, body: dict) -> Any:
        return api_client(user).patch(url, body, format="json")


def _servers(t: Tenants, customer: Any, partner: Any, count: int) -> list[Server]:
    order = factories.OrderFactory(customer=customer, server_count=count)
    factories.make_servers(order, status=ServerStatus.BURN_IN_PASSED)
    Server.objects.filter(order=order).update(partner=partner)
    return list(Server.objects.filter(order=order).order_by("sequence"))


def make_rig(t: Tenants) -> Rig:
    site = site_create(
        actor=t.pm,
        name="Sofia Colo 1",
        kind=SiteKind.COLOCATION,
        operator="Telepoint",
        customer=None,
        address="Business Park Sofia",
        country="BG",
    )
    rack = rack_create(site=site, actor=t.pm, name="R1", height_u=42)
    feed_a = feed_create(rack=rack, actor=t.pm, name="PDU-A", leg="A", voltage_v=230, current_a=16, phases=1)
    feed_b = feed_create(rack=rack, actor=t.pm, name="PDU-B", leg="B", voltage_v=230, current_a=16, phases=1)
    a1, a2 = _servers(t, t.customer_a, t.partner_p, 2)
    (b1,) = _servers(t, t.customer_b, t.partner_q, 1)
    place_b1 = placement_create(
        server=b1, rack=rack, lowest_u=1, feeds=[feed_a], actor=t.pm, measured_wall_w=1500
    )
    place_a1 = placement_create(
        server=a1, rack=rack, lowest_u=10, feeds=[feed_a, feed_b], actor=t.pm, measured_wall_w=1000
    )
    return Rig(
        t=t,
        site=site,
        rack=rack,
        feed_a=feed_a,
        feed_b=feed_b,
        a1=a1,
        a2=a2,
        b1=b1,
        place_a1=place_a1,
        place_b1=place_b1,
    )


def ids(response: Any) -> set[int]:
    assert response.status_code == 200, response.content
    return {row["id"] for row in response.json()["results"]}
