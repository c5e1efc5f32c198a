"""The fleet's quality back into procurement and the bench, through the REAL checks pm/apps.py registers
(pm.quality.checks; tests/inventory/test_quality_gate.py has the registries with stand-in checks):
`procure` for a flagged supplier drafts a PO that shows the figures and is refused (409 `quality_flag`)
until an override reason; a PO line of a flagged part says so; receiving into a flagged lot code answers the
warning; a flagged connector position is proposed for blacklisting on a new build of its layout."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client

from builds import proposals
from builds.services import servers_create_for_order
from inventory import gates
from inventory.choices import PurchaseOrderStatus as PS
from inventory.services import po_create
from orders.choices import OrderStatus
from orders.models import OrderPurchaseOrder
from pm.quality import checks
from tests import factories
from tests.pm import quality_rig
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

PO_URL = "/api/v1/inventory/purchase-orders/"
FIGURES = "3 of 8 failed, 95 % interval 13.7–69.4 %"


def test_the_checks_are_registered_once():
    assert gates._po_checks.count(checks.po_check) == 1
    assert gates._receipt_checks.count(checks.receipt_check) == 1
    assert proposals._sources.count(checks.blacklist_proposals) == 1


@pytest.fixture
def bad_lot():
    """Supplier Lotwerk's lot L-2291 of a GPU: 3 of 8 failed (two burn-in fails, one claim): flagged, and so
    are Lotwerk's GPUs (the same 3 of 8) and the part."""
    supplier = factories.SupplierFactory(name="Lotwerk GmbH")
    fleet = quality_rig.fleet(servers=8, lots={"L-2291": 8}, supplier=supplier)
    quality_rig.fail(fleet.servers[0], component=fleet.gpus[0], stage="burn_in")
    quality_rig.fail(fleet.servers[1], component=fleet.gpus[1], stage="burn_in")
    quality_rig.fail(fleet.servers[2], component=fleet.gpus[2], stage="claim")
    return fleet


def _supplier_sentence(fleet) -> str:
    return f"Lotwerk GmbH, GPU: {FIGURES}."


def _part_sentence(fleet) -> str:
    part = fleet.part
    return f"NVIDIA {part.name} ({part.mpn}): {FIGURES}."


def _send(user, po, **body):
    return api_client(user).post(f"{PO_URL}{po.pk}/send/", body, format="json")


def test_procure_for_a_flagged_supplier_drafts_a_po_with_the_warning(tenants, bad_lot):
    # A new GPU of the flagged supplier: its own part row is clean, the supplier's GPU row is not.
    gpu = factories.PartFactory(preferred_supplier=bad_lot.supplier, list_price=Decimal("2400.00"))
    clean = factories.SupplierFactory(name="Nordic Memory & Compute AB", country="SE")
    chassis = factories.ChassisFactory(preferred_supplier=clean, list_price=Decimal("2200.00"))
    order = factories.pass_gate(
        factories.OrderFactory(
            customer=tenants.customer_a,
            configuration=factories.ConfigurationFactory(lines=[(gpu, 8), (chassis, 1)]),
            server_count=1,
            status=OrderStatus.APPROVED,
        )
    )
    response = api_client(tenants.pm).post(f"/api/v1/orders/{order.pk}/procure/", {}, format="json")
    assert response.status_code == 200, response.json()

    po = OrderPurchaseOrder.objects.get(order=order, purchase_order__supplier=bad_lot.supplier).purchase_order
    other = OrderPurchaseOrder.objects.get(order=order, purchase_order__supplier=clean).purchase_order
    assert po.status == PS.DRAFT
    assert AuditEvent.objects.get(verb="order.procure").after["quality_warnings"] == {
        po.number: [_supplier_sentence(bad_lot)]
    }
    assert api_client(tenants.pm).get(f"{PO_URL}{po.pk}/").json()["quality_warnings"] == [
        _supplier_sentence(bad_lot)
    ]
    assert api_client(tenants.pm).get(f"{PO_URL}{other.pk}/").json()["quality_warnings"] == []

    refused = _send(tenants.pm, po)
    assert refused.status_code == 409 and refused.json()["code"] == "quality_flag"
    assert FIGURES in refused.json()["detail"]
    po.refresh_from_db()
    assert po.status == PS.DRAFT
    sent = _send(tenants.pm, po, quality_override_reason="Only source in time; extra burn-in for the lot")
    assert sent.status_code == 200, sent.json()
    assert sent.json()["status"] == "sent"
    event = AuditEvent.objects.get(verb="purchase_order.quality_override", object_id=str(po.pk))
    assert event.after["warnings"] == [_supplier_sentence(bad_lot)]


def test_a_flagged_part_warns_from_any_supplier(tenants, bad_lot):
    other = factories.SupplierFactory(name="Second Source SAS", country="FR")
    po = po_create(actor=tenants.pm, supplier=other, lines=[(bad_lot.part, 4, Decimal("2400.00"))])
    assert api_client(tenants.pm).get(f"{PO_URL}{po.pk}/").json()["quality_warnings"] == [
        _part_sentence(bad_lot)
    ]
    # The supplier and the part both flagged: both sentences.
    again = po_create(
        actor=tenants.pm, supplier=bad_lot.supplier, lines=[(bad_lot.part, 4, Decimal("2400.00"))]
    )
    assert checks.po_check(again) == [_supplier_sentence(bad_lot), _part_sentence(bad_lot)]


def test_a_lot_with_one_of_eight_failed_warns_nobody(tenants):
    supplier = factories.SupplierFactory(name="Fine Parts GmbH")
    fleet = quality_rig.fleet(servers=8, lots={"L-OK": 8}, supplier=supplier)
    quality_rig.fail(fleet.servers[0], component=fleet.gpus[0], stage="claim")
    po = po_create(actor=tenants.pm, supplier=supplier, lines=[(fleet.part, 4, Decimal("2400.00"))])
    assert checks.po_check(po) == []
    assert checks.receipt_check(fleet.part, supplier, "L-OK") == []
    assert _send(tenants.pm, po).status_code == 200


def _receive(user, line, lot: str, serials: str):
    body = {"lot": lot, "date_code": "2526", "origin": "TW", "serials": serials}
    return api_client(user).post(
        f"/api/v1/inventory/purchase-order-lines/{line.pk}/receive/", body, format="json"
    )


def test_receiving_into_a_flagged_lot_code_answers_the_warning(tenants, bad_lot):
    other = factories.SupplierFactory(name="Second Source SAS", country="FR")
    po = po_create(actor=tenants.pm, supplier=other, lines=[(bad_lot.part, 4, Decimal("2400.00"))])
    sent = _send(tenants.pm, po, quality_override_reason="Replacement stock")
    assert sent.status_code == 200, sent.json()
    line = po.lines.get()

    clean = _receive(tenants.pm, line, "L-3000", "NEW-1")
    assert clean.status_code == 201, clean.json()
    assert clean.json()["quality_warnings"] == []

    again = _receive(tenants.pm, line, "L-2291", "NEW-2\nNEW-3")
    assert again.status_code == 201, again.json()
    assert again.json()["quality_warnings"] == [f"Lot L-2291 of {bad_lot.part.name}: {FIGURES}."]
    event = AuditEvent.objects.filter(verb="purchase_order.receive", object_id=str(po.pk)).latest("pk")
    assert event.after["quality_warnings"] == [f"Lot L-2291 of {bad_lot.part.name}: {FIGURES}."]


def test_a_flagged_position_is_proposed_for_blacklisting_on_a_new_build(tenants):
    fleet = quality_rig.fleet(servers=4, lots={"L-P": 8}, gpus_per_server=2)
    # Seed 003: x8 links at PCIe-2 of two servers, the connector's (a card moved there trained at x8).
    quality_rig.fail(fleet.servers[0], connector="PCIe-2", stage="bench")
    quality_rig.fail(fleet.servers[1], connector="PCIe-2", stage="burn_in", cause="connector")
    quality_rig.fail(
        fleet.servers[2], component=fleet.gpus[2], connector="PCIe-1"
    )  # the card's: not PCIe-1's
    sentence = "PCIe-2 on 7U GPU chassis: 2 of 4 failed, 95 % interval 15.0–85.0 %."
    assert checks.blacklist_proposals(fleet.layout) == {"PCIe-2": sentence}

    order = factories.OrderFactory(
        customer=tenants.customer_a, configuration=fleet.order.configuration, server_count=1
    )
    (new,) = servers_create_for_order(order=order, actor=tenants.pm)
    client = Client()
    client.force_login(tenants.pm)
    page = client.get(f"/bench/servers/{new.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    proposed = html[html.index('id="blacklist-proposals"') :]
    proposed = proposed[: proposed.index("</ul>")]
    assert f'<li data-connector="PCIe-2"><strong>PCIe-2</strong>: {sentence}</li>' in proposed
    assert 'data-connector="PCIe-1"' not in proposed
    # A server past the bench is proposed nothing.
    page = client.get(f"/bench/servers/{fleet.servers[3].pk}/")
    assert 'id="blacklist-proposals"' not in page.content.decode()
