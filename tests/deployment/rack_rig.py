"""A rack shared by two customers, for the elevation, page, admin and browser tests.

Site "Sofia Colo 1" (BG) with rack R07 (42U) and three feeds: A1 and B1 (230 V × 16 A, single phase:
2,944 W continuous, 3,680 W rated) and C1 (230 V × 32 A × 3 phases). Customer A's server (built by partner
P) stands at U1–U6 on A1 and B1, measured at 2,900 W; customer B's (built by partner Q) at U10–U15 on C1.
Both passed burn-in. A's server has a network record with BMC credentials; B's has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from builds.models import Server
from deployment.services import feed_create, network_set, placement_create, rack_create, site_create
from tests import factories

BMC_PASSWORD = "Zebra-Quokka-9931-secret"
BMC_USERNAME = "bmc-operator-7"


@dataclass
class RackWorld:
    t: Any
    site: Any
    rack: Any
    feeds: dict[str, Any]
    server_a: Any
    server_b: Any


def make_rack_world(tenants: Any) -> RackWorld:
    pm = tenants.pm
    site = site_create(
        actor=pm,
        name="Sofia Colo 1",
        kind="colocation",
        operator="Telepoint",
        customer=None,
        address="Business Park Sofia, building 7",
        country="BG",
    )
    rack = rack_create(site=site, actor=pm, name="R07", height_u=42)
    feeds = {
        "A1": feed_create(rack=rack, actor=pm, name="A1", leg="A", voltage_v=230, current_a=16, phases=1),
        "B1": feed_create(rack=rack, actor=pm, name="B1", leg="B", voltage_v=230, current_a=16, phases=1),
        "C1": feed_create(rack=rack, actor=pm, name="C1", leg="A", voltage_v=230, current_a=32, phases=3),
    }
    servers = []
    for customer, partner in (
        (tenants.customer_a, tenants.partner_p),
        (tenants.customer_b, tenants.partner_q),
    ):
        order = factories.OrderFactory(customer=customer, server_count=1)
        [server] = factories.make_servers(order, status="burn_in_passed")
        Server.objects.filter(pk=server.pk).update(partner=partner)
        server.refresh_from_db()
        servers.append(server)
    server_a, server_b = servers
    placement_create(
        server=server_a,
        rack=rack,
        lowest_u=1,
        feeds=[feeds["A1"], feeds["B1"]],
        actor=pm,
        measured_wall_w=2900,
    )
    placement_create(server=server_b, rack=rack, lowest_u=10, feeds=[feeds["C1"]], actor=pm)
    network_set(
        server=server_a,
        actor=pm,
        management_ip="10.20.0.11",
        bmc_ip="10.21.0.11",
        bmc_mac="3c:ec:ef:12:34:56",
        bmc_username=BMC_USERNAME,
        bmc_password=BMC_PASSWORD,
    )
    return RackWorld(t=tenants, site=site, rack=rack, feeds=feeds, server_a=server_a, server_b=server_b)
