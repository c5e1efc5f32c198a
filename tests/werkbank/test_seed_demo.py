"""`manage.py seed_demo` loads the seeds' fleets, and a second run changes nothing."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db.models import Count

from inventory.models import BatchLot, Component, PurchaseOrder
from orders.models import Order
from orders.selectors import approval_checks
from werkbank.demo_context import DEMO_PASSWORD
from werkbank.models import AuditEvent

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
    assert (fleet.server_count, fleet.status) == (8, "procurement")
    # Seed 000's 5458 W of TDP fit 5× 1600 W N+1 × 0.9 = 5760 W: approved without an override.
    assert fleet.approval_override_reason == ""
    assert not AuditEvent.objects.filter(verb="order.approve_override").exists()
    fleet_checks = {check.name: check for check in approval_checks(order=fleet)}
    assert all(check.ok for check in fleet_checks.values())
    assert fleet_checks["psu"].numbers["psu_margin_w"] == 302
    # Seed 001's NEOXIS server stays in ROI review on its PSU check alone: 5730 W against 4320 W.
    neoxis_failed = [check for check in approval_checks(order=orders["NEOXIS AD"]) if not check.ok]
    assert [(check.name, check.numbers["psu_margin_w"]) for check in neoxis_failed] == [("psu", -1410)]
    # Procured with 5 % spares, sent to EU suppliers, received by lot: the GPUs of each server share a lot.
    gpu_lots = (
        BatchLot.objects.filter(part__mpn="RTX5090-32G-SRV")
        .annotate(count=Count("components"))
        .order_by("lot_code")
        .values_list("count", flat=True)
    )
    assert list(gpu_lots) == [8] * 8 + [4]
    assert all(link.purchase_order.status == "received" for link in fleet.purchase_order_links.all())
    assert all(po.supplier.is_eu for po in PurchaseOrder.objects.all())
    # Fleet: BOM × 8 servers + 5 % spares, rounded up per part (263); the 7U machine without spares (30).
    at_kentino = Component.objects.filter(holder__name="Kentino Werkstatt").count()
    assert at_kentino == Component.objects.count() == 293
    assert orders["NEOXIS AD"].status == "roi_review"
    assert orders["Inferenzlabor Demo GmbH"].status == "procurement"
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
