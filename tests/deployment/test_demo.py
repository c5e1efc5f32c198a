"""`manage.py seed_demo` racks the demo fleet in Sofia, deploys and lists its first server, and places the
7U machine in the customer's room at 98.5 % of its circuit's continuous limit; a second run adds nothing."""

from __future__ import annotations

import itertools
from decimal import Decimal

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db import connection

from builds.models import Server
from deployment.models import PowerFeed, Rack, RackPlacement, ServerNetwork, Site
from deployment.selectors import current_listing, feed_loads
from deployment.services.network import bmc_credentials
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(settings, tmp_path, capsys):
    settings.MEDIA_ROOT = tmp_path
    call_command("seed_demo", "--quiet")
    capsys.readouterr()


def _counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def _fleet() -> list[Server]:
    return list(
        Server.objects.filter(order__customer__name="Vastfleet Rentals GmbH")
        .select_related("placement__rack__site")
        .order_by("sequence")
    )


def test_the_fleet_stands_in_two_sofia_racks_without_overlap(demo):
    fleet = _fleet()
    assert len(fleet) == 8 and all(hasattr(server, "placement") for server in fleet)
    site = Site.objects.get(racks__placements__server=fleet[0])
    assert (site.kind, site.country, site.eu, site.customer) == ("colocation", "BG", True, None)
    assert "Sofia" in site.address

    for rack in Rack.objects.filter(site=site).order_by("name"):
        assert rack.height_u == 42
        feeds = {
            feed.name: (feed.leg, feed.voltage_v, feed.current_a, feed.phases) for feed in rack.feeds.all()
        }
        assert feeds == {
            "A1": ("A", 230, 32, 3),
            "B1": ("B", 230, 32, 3),
            "A2": ("A", 230, 32, 3),
            "B2": ("B", 230, 32, 3),
        }
        placements = list(RackPlacement.objects.filter(rack=rack).order_by("lowest_u"))
        assert [(p.lowest_u, p.top_u) for p in placements] == [(1, 6), (8, 13), (15, 20), (22, 27)]
        for below, above in itertools.pairwise(placements):
            assert above.lowest_u - below.top_u == 2  # one free U between servers
        assert [sorted(p.feeds.values_list("name", flat=True)) for p in placements] == [
            ["A1", "B1"],
            ["A1", "B1"],
            ["A2", "B2"],
            ["A2", "B2"],
        ]
        assert not any(p.power_override_reason for p in placements)
        loads = feed_loads(rack=rack)
        assert [len(load.servers) for load in loads] == [2, 2, 2, 2]  # each side of a pair carries both
        assert all(load.ok and load.limit_w == 17_664 for load in loads)
    assert [server.placement.rack.name for server in fleet] == ["SOF1-R07"] * 4 + ["SOF1-R08"] * 4

    # Server 01's feeds: its burn-in figure (8 × 561 W + 858 W host overhead) ÷ 0.94 plus server 02's budget.
    first_rack = fleet[0].placement.rack
    a1 = next(load for load in feed_loads(rack=first_rack) if load.feed.name == "A1")
    assert {(power.hostname, power.source, round(power.wall_w)) for power in a1.servers} == {
        (fleet[0].hostname, "burn_in", 5687),
        (fleet[1].hostname, "budget", 5806),
    }
    assert round(a1.load_w) == 11_494 and round(a1.percent_of_limit, 1) == 65.1


def test_fleet_server_01_is_deployed_with_its_network_and_a_verified_listing(demo):
    first, second = _fleet()[:2]
    # Deployed here; warranty/demo.py then hands it over (tests/warranty/test_demo.py).
    assert first.status == "handed_over" and second.status != "deployed"
    assert AuditEvent.objects.for_object(first).filter(verb="server.deploy").exists()
    network = ServerNetwork.objects.get(server=first)
    assert network.management_ip.startswith("10.") and network.bmc_ip.startswith("10.")
    assert network.management_ip.split(".")[:2] != network.bmc_ip.split(".")[:2]  # a VLAN of its own
    assert network.bmc_mac.startswith("3c:ec:ef:")
    assert first.hostname == f"{first.order.reference.lower()}-01"  # unchanged
    listing = current_listing(server=first)
    assert (listing.platform, listing.machine_id, listing.verification, listing.reliability) == (
        "vast_ai",
        "41873",
        "verified",
        Decimal("0.9962"),
    )
    assert listing.listed_on is not None and listing.verified_on is not None
    assert list(first.platform_listings.order_by("id").values_list("verification", flat=True)) == [
        "unverified",
        "verified",
    ]
    deploy = AuditEvent.objects.get(verb="deployment.deploy")
    assert deploy.after["rack"] == "SOF1-R07" and deploy.after["lowest_u"] == 1


def test_the_bmc_password_is_generated_and_stored_only_encrypted(demo):
    network = ServerNetwork.objects.get(server=_fleet()[0])
    credentials = bmc_credentials(network=network)
    password = credentials["password"]
    assert credentials["username"] == "ADMIN" and len(password) >= 20
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM deployment_servernetwork")
        table = repr(cursor.fetchall())
        cursor.execute("SELECT * FROM werkbank_auditevent")
        trail = repr(cursor.fetchall())
    assert network.bmc_mac in table  # the text holds the row
    assert password not in table and password not in trail


def test_the_seven_u_machine_stands_in_the_customers_room_at_98_5_percent_of_its_circuit(demo):
    server = Server.objects.select_related("placement__rack__site").get(
        order__customer__name="Inferenzlabor GmbH"
    )
    assert server.status == "burn_in"  # not deployed: its run waits for a PM
    placement = server.placement
    site = placement.rack.site
    assert (site.kind, site.customer.name, site.country, site.eu) == (
        "customer_room",
        "Inferenzlabor GmbH",
        "CZ",
        True,
    )
    assert (placement.rack.height_u, placement.lowest_u, placement.top_u) == (24, 1, 7)
    assert placement.measured_wall_w == 2900 and placement.power_override_reason == ""
    feed = PowerFeed.objects.get(rack=placement.rack)
    assert (feed.voltage_v, feed.current_a, feed.phases, feed.rated_w, feed.continuous_limit_w) == (
        230,
        16,
        1,
        3680,
        2944,
    )
    [load] = feed_loads(rack=placement.rack)
    assert [power.source for power in load.servers] == ["measured"]
    assert load.load_w == 2900 and load.ok and round(load.margin_w) == 44
    assert (round(load.percent_of_rated, 1), round(load.percent_of_limit, 1)) == (78.8, 98.5)
    assert "(98.5 %)" in load.sentence()


def test_a_second_run_creates_nothing(demo, capsys):
    first = _counts()
    network = ServerNetwork.objects.get()
    call_command("seed_demo")
    assert "(0 new objects)" in capsys.readouterr().out
    assert _counts() == first
    assert ServerNetwork.objects.get().bmc_credentials == network.bmc_credentials  # no new password
