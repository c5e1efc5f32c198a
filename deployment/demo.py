"""Demo data of the deployment: where the demo's servers stand, and the fleet's first server live on Vast.ai.

- The rental fleet (seed 000, Vastfleet Rentals GmbH, 8 servers of 6U) goes to an EU colocation in Sofia,
  Bulgaria: "Serdika Colocation SOF1" (a fictional provider). Two 42U racks, SOF1-R07 and SOF1-R08, each
  with four feeds A1/B1/A2/B2 of 3 × 230 V × 32 A: 22,080 W rated, 17,664 W continuous (0.8 ×). Four
  servers per rack at U1, U8, U15 and U22 (U1–U6, U8–U13, U15–U20, U22–U27), a free U between them for
  airflow; the first two of each rack on A1 + B1, the other two on A2 + B2. Each feed carries the full wall
  power of its two servers (either side of the A/B pair must hold all of it): the configuration's budget is
  5,806 W at the wall per server (5,458 W DC ÷ 0.94), 11,613 W for two, 65.7 % of the continuous limit.
  Server 01 passed burn-in, so its figure is its burn-in power: 8 × 561 W GPU mean + 858 W host overhead
  (the non-GPU TDP) ÷ 0.94 = 5,687 W, and its feeds carry 11,494 W (65.1 %). Per phase (0.8 × 230 V × 32 A
  = 5,888 W each): the first server of a pair hangs on L1 of both its feeds, the second on L2, so L1
  carries 5,687 W (96.6 %), L2 5,806 W (98.6 %) and L3 nothing; on one phase the two would be 195 %.
- Fleet server 01 gets its network record (management IP 10.20.7.11, BMC 10.99.7.11 in the management VLAN,
  BMC MAC 3c:ec:ef:4b:07:11 in Supermicro's OUI), BMC credentials (user ADMIN, a password generated at seed
  time with `secrets.token_urlsafe`, stored only encrypted; no password is written here), is deployed, and is
  listed on Vast.ai as machine 41873: first listed unverified, then verified with a reliability of 0.9962.
- The 7U machine of Inferenzlabor GmbH (seed 003) stands in the customer's own server room in Prague
  (its seed report's hostname is gpu7u-prg-01; the workshop that built it is in Prague too), in a 24U rack
  PRG-R01 at U1–U7 on ONE feed of 16 A / 230 V single phase: 3,680 W rated, 2,944 W continuous. Seed 003
  measured ~2.9 kW at the socket under full load, recorded as measured_wall_w = 2900: 78.8 % of the rating
  (about 80 % of the circuit) and 98.5 % of the continuous limit, 44 W to spare. It stays in burn-in.

Everything goes through the deployment services, without a power override; running it again adds nothing.
"""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

from django.utils import timezone

from builds.choices import ServerStatus
from builds.models import Server
from deployment.choices import FeedLeg, Platform, SiteKind, Verification
from deployment.demo_income import seed_earnings
from deployment.demo_prefixes import seed_prefixes
from deployment.models import PlatformListing, PowerFeed, Rack, RackPlacement, ServerNetwork, Site
from deployment.services import (
    feed_create,
    listing_record,
    network_set,
    placement_create,
    rack_create,
    server_deploy,
    site_create,
)
from werkbank.demo_context import DemoContext

COLOCATION = {
    "name": "Serdika Colocation SOF1",
    "kind": SiteKind.COLOCATION,
    "operator": "Serdika Colocation EAD",
    "address": "Serdika Colocation EAD, SOF1, bul. Iskarsko shose 7, 1528 Sofia, Bulgaria",
    "country": "BG",
}
CUSTOMER_ROOM = {
    "name": "Serverraum Inferenzlabor Prag",
    "kind": SiteKind.CUSTOMER_ROOM,
    "operator": "Inferenzlabor GmbH, Haustechnik",
    "address": "Inferenzlabor GmbH, Karolinská 650/1, 186 00 Praha 8 – Karlín, Tschechien",
    "country": "CZ",
}

#: Each fleet rack: 42U, four feeds of 3 × 230 V × 32 A on legs A and B.
FLEET_RACKS = ("SOF1-R07", "SOF1-R08")
FLEET_FEEDS = [
    {"name": name, "leg": name[0], "voltage_v": 230, "current_a": 32, "phases": 3}
    for name in ("A1", "B1", "A2", "B2")
]
#: Per server of a rack: its lowest U (6U servers, a free U between them), its A/B feed pair and the phase
#: it draws from on both feeds of the pair.
FLEET_SLOTS = [
    (1, ("A1", "B1"), "L1"),
    (8, ("A1", "B1"), "L2"),
    (15, ("A2", "B2"), "L1"),
    (22, ("A2", "B2"), "L2"),
]

SEVEN_U_RACK = "PRG-R01"
SEVEN_U_FEED = {"name": "A1", "leg": FeedLeg.A, "voltage_v": 230, "current_a": 16, "phases": 1}
SEVEN_U_LOWEST_U = 1
#: Seed 003: ~2.9 kW measured at the socket under full load.
SEVEN_U_MEASURED_W = 2900

FLEET_NETWORK = {"management_ip": "10.20.7.11", "bmc_ip": "10.99.7.11", "bmc_mac": "3c:ec:ef:4b:07:11"}
BMC_USERNAME = "ADMIN"
VAST_MACHINE_ID = "41873"
VAST_RELIABILITY = Decimal("0.9962")


def seed(context: DemoContext) -> None:
    fleet = list(context.orders["Vastfleet Rentals GmbH"].servers.order_by("sequence"))
    colocation = _site(context, **COLOCATION)
    seed_prefixes(context, colocation)
    for rack_index, rack_name in enumerate(FLEET_RACKS):
        rack = _rack(context, colocation, rack_name, height_u=42, feeds=FLEET_FEEDS)
        feeds = {feed.name: feed for feed in rack.feeds.all()}
        for slot, (lowest_u, pair, phase) in enumerate(FLEET_SLOTS):
            index = rack_index * len(FLEET_SLOTS) + slot
            if index < len(fleet):
                chosen = [feeds[name] for name in pair]
                _place(
                    context, fleet[index], rack, lowest_u, chosen, phases={feed.pk: phase for feed in chosen}
                )
    if fleet:
        _go_live(context, fleet[0])
        seed_earnings(context, fleet[0], today=timezone.localdate())

    seven_u = context.orders["Inferenzlabor GmbH"].servers.order_by("sequence").first()
    room = _site(context, customer=context.organizations["Inferenzlabor GmbH"], **CUSTOMER_ROOM)
    rack = _rack(context, room, SEVEN_U_RACK, height_u=24, feeds=[SEVEN_U_FEED])
    if seven_u is not None:
        _place(
            context,
            seven_u,
            rack,
            SEVEN_U_LOWEST_U,
            list(rack.feeds.all()),
            measured_wall_w=SEVEN_U_MEASURED_W,
        )


def _site(context: DemoContext, **values: Any) -> Site:
    site = Site.objects.filter(name=values["name"]).first()
    if site is None:
        site = site_create(actor=context.pm, **values)
        context.created += 1
    return site


def _rack(context: DemoContext, site: Site, name: str, *, height_u: int, feeds: list[dict[str, Any]]) -> Rack:
    rack = Rack.objects.filter(site=site, name=name).first()
    if rack is None:
        rack = rack_create(site=site, actor=context.pm, name=name, height_u=height_u)
        context.created += 1
    for values in feeds:
        if not PowerFeed.objects.filter(rack=rack, name=values["name"]).exists():
            feed_create(rack=rack, actor=context.pm, **values)
            context.created += 1
    return rack


def _place(
    context: DemoContext,
    server: Server,
    rack: Rack,
    lowest_u: int,
    feeds: list[PowerFeed],
    *,
    measured_wall_w: int | None = None,
    phases: dict[int, str] | None = None,
) -> None:
    if RackPlacement.objects.filter(server=server).exists():
        return
    placement_create(
        server=server,
        rack=rack,
        lowest_u=lowest_u,
        feeds=feeds,
        actor=context.pm,
        measured_wall_w=measured_wall_w,
        phases=phases,
    )
    context.created += 1


def _go_live(context: DemoContext, server: Server) -> None:
    """The fleet's first server passed burn-in: its network and BMC, deployment, and its Vast.ai listing."""
    pm = context.pm
    if not ServerNetwork.objects.filter(server=server).exists():
        network_set(
            server=server,
            actor=pm,
            bmc_username=BMC_USERNAME,
            bmc_password=secrets.token_urlsafe(18),  # generated here, stored only as a Fernet token
            **FLEET_NETWORK,
        )
        context.created += 1
    server.refresh_from_db()
    if server.status == ServerStatus.BURN_IN_PASSED:
        server = server_deploy(
            server=server, actor=pm, note="Racked in SOF1-R07 U1–U6 on A1 + B1; BMC reachable."
        )
        context.created += 1
    if server.status == ServerStatus.DEPLOYED and not PlatformListing.objects.filter(server=server).exists():
        listing_record(
            server=server,
            actor=pm,
            platform=Platform.VAST_AI,
            machine_id=VAST_MACHINE_ID,
            verification=Verification.UNVERIFIED,
            note="Listed on Vast.ai; waiting for the platform's verification.",
        )
        listing_record(
            server=server,
            actor=pm,
            platform=Platform.VAST_AI,
            machine_id=VAST_MACHINE_ID,
            verification=Verification.VERIFIED,
            reliability=VAST_RELIABILITY,
            note="Verified by Vast.ai; reliability 99.62 %.",
        )
        context.created += 1
