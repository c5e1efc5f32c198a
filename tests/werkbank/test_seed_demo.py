"""`manage.py seed_demo` loads the seeds' fleets, and a second run changes nothing."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.core.management import call_command

from orders.models import Order
from werkbank.demo_context import DEMO_PASSWORD

pytestmark = pytest.mark.django_db


def _counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def test_seed_demo_is_idempotent_and_loads_the_fleets(client, capsys):
    call_command("seed_demo")
    first = _counts()
    out = capsys.readouterr().out
    call_command("seed_demo")
    assert _counts() == first

    assert "pm " in out and DEMO_PASSWORD in out
    orders = {order.customer.name: order for order in Order.objects.select_related("configuration")}
    fleet = orders["Vastfleet Rentals GmbH"]
    assert (fleet.server_count, fleet.status) == (8, "approved")
    bom = {line.part.mpn: line.quantity for line in fleet.configuration.lines.select_related("part")}
    assert bom["RTX5090-32G-SRV"] == 8
    assert bom["TURIN2D24G-2L+"] == 1
    assert bom["AD-6U-8GPU"] == 1
    assert fleet.configuration.usable_psu_w == 6400  # 5× 1600 W, N+1
    assert orders["NEOXIS AD"].configuration.lines.get(part__category="gpu").quantity == 8
    maxq = orders["Inferenzlabor Demo GmbH"].configuration
    assert maxq.lines.get(part__category="gpu").part.tdp_w == 300
    assert maxq.lines.get(part__category="chassis").part.u_height == 7

    assert client.login(username="pm", password=DEMO_PASSWORD)
    assert client.get("/admin/").status_code == 200
