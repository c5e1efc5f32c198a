"""The demo's customer logins each find a portal worth showing (`manage.py seed_demo`)."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command

from werkbank.demo_context import DEMO_PASSWORD

pytestmark = pytest.mark.django_db


def test_each_demo_customer_sees_its_orders_servers_and_serials(client):
    call_command("seed_demo")
    seen = {}
    for username in ("vastfleet", "neoxis", "inferenzlabor"):
        client.logout()
        assert (
            client.post("/accounts/login/", {"username": username, "password": DEMO_PASSWORD}).status_code
            == 302
        )
        orders = client.get("/portal/").content.decode()
        [order_id] = re.findall(r'href="/portal/orders/(\d+)/"', orders)
        order = client.get(f"/portal/orders/{order_id}/").content.decode()
        servers = re.findall(r'href="/portal/servers/(\d+)/"', order)
        slots = blacklisted = 0
        if servers:
            server = client.get(f"/portal/servers/{servers[0]}/").content.decode()
            slots, blacklisted = server.count("data-slot="), server.count("data-blacklisted=")
        seen[username] = (re.search(r'<html lang="(\w+)"', orders).group(1), len(servers), slots, blacklisted)
    assert seen["vastfleet"][:2] == ("de", 8) and seen["vastfleet"][2] > 20
    assert seen["neoxis"] == ("en", 0, 0, 0)  # in ROI review: no servers yet
    assert seen["inferenzlabor"][:2] == ("de", 1) and seen["inferenzlabor"][3] == 2  # seed 003's blacklist
