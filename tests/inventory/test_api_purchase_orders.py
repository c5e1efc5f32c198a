"""Purchase orders through the API: creation, every transition, the EU rule, and procurement for an order."""

from __future__ import annotations

from decimal import Decimal

import pytest

from inventory.choices import PurchaseOrderStatus as PS
from inventory.models import PurchaseOrder
from orders.choices import OrderStatus
from orders.models import OrderPurchaseOrder
from tests import factories
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _post(client, po, action, body=None):
    return client.post(f"/api/v1/inventory/purchase-orders/{po.pk}/{action}/", body or {}, format="json")


def test_pm_creates_a_purchase_order(tenants):
    supplier, part = factories.SupplierFactory(), factories.PartFactory()
    body = {
        "supplier": supplier.pk,
        "currency": "EUR",
        "deliver_to": tenants.partner_p.pk,
        "lines": [{"part": part.pk, "quantity": 8, "unit_price": "2399.00"}],
    }
    response = api_client(tenants.pm).post("/api/v1/inventory/purchase-orders/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["number"].startswith("PO-")
    assert response.json()["status"] == "draft"
    assert response.json()["lines"][0]["remaining"] == 8


def test_deliver_to_must_be_a_partner(tenants):
    body = {
        "supplier": factories.SupplierFactory().pk,
        "deliver_to": tenants.customer_a.pk,
        "lines": [{"part": factories.PartFactory().pk, "quantity": 1, "unit_price": "1"}],
    }
    response = api_client(tenants.pm).post("/api/v1/inventory/purchase-orders/", body, format="json")
    assert response.status_code == 400
    assert "deliver_to" in response.json()
    assert not PurchaseOrder.objects.exists()


# action, from status, to status, a status it is refused from, body
CASES = [
    ("send", PS.DRAFT, PS.SENT, PS.SENT, {}),
    ("cancel", PS.SENT, PS.CANCELLED, PS.RECEIVED, {"reason": "Supplier out of stock"}),
    ("close", PS.RECEIVED, PS.CLOSED, PS.SENT, {"note": "All in"}),
]


def _po_in(status: str, tenants) -> PurchaseOrder:
    po = factories.make_po(send=False)
    PurchaseOrder.objects.filter(pk=po.pk).update(status=status)
    po.refresh_from_db()
    AuditEvent.objects.all().delete()
    return po


@pytest.mark.parametrize(("action", "source", "target", "refused", "body"), CASES, ids=[c[0] for c in CASES])
def test_po_transition_allowed(tenants, action, source, target, refused, body):
    po = _po_in(source, tenants)
    response = _post(api_client(tenants.pm), po, action, body)
    assert response.status_code == 200, response.json()
    po.refresh_from_db()
    assert po.status == target
    event = AuditEvent.objects.for_object(po).get()
    assert (event.verb, event.before, event.after) == (
        f"purchase_order.{action}",
        {"status": source},
        {"status": target},
    )


@pytest.mark.parametrize(("action", "source", "target", "refused", "body"), CASES, ids=[c[0] for c in CASES])
def test_po_transition_refused(tenants, action, source, target, refused, body):
    po = _po_in(refused, tenants)
    response = _post(api_client(tenants.pm), po, action, body)
    assert response.status_code == 409
    assert response.json()["code"] == "invalid_transition"
    assert f"is {PS(refused).label.lower()}" in response.json()["detail"]
    po.refresh_from_db()
    assert po.status == refused
    assert not AuditEvent.objects.exists()


def test_non_eu_supplier_needs_an_override_naming_its_country(tenants):
    supplier = factories.SupplierFactory(name="Shenzhen Chassis Works Ltd.", country="CN")
    po = factories.make_po(supplier=supplier, send=False)
    AuditEvent.objects.all().delete()
    refused = _post(api_client(tenants.pm), po, "send")
    assert refused.status_code == 409
    assert "is in CN, outside the EU" in refused.json()["detail"]
    assert refused.json()["missing"] == ["an override reason for the non-EU supplier country CN"]
    po.refresh_from_db()
    assert po.status == PS.DRAFT
    assert not AuditEvent.objects.exists()

    sent = _post(api_client(tenants.pm), po, "send", {"override_reason": "Only source of the 7U rails"})
    assert sent.status_code == 200
    assert sent.json()["non_eu_override_reason"] == "Only source of the 7U rails"
    assert AuditEvent.objects.filter(verb="purchase_order.non_eu_override").count() == 1


def test_eu_membership_is_derived_from_the_country(tenants):
    client = api_client(tenants.pm)
    de = client.post("/api/v1/inventory/suppliers/", {"name": "A", "country": "de"}, format="json").json()
    ch = client.post("/api/v1/inventory/suppliers/", {"name": "B", "country": "CH"}, format="json").json()
    assert (de["country"], de["is_eu"], ch["is_eu"]) == ("DE", True, False)
    bad = client.post("/api/v1/inventory/suppliers/", {"name": "C", "country": "Germany"}, format="json")
    assert bad.status_code == 400 and "country" in bad.json()


def test_procure_builds_draft_pos_per_preferred_supplier_with_spares(
    tenants, django_capture_on_commit_callbacks
):
    gpu_supplier = factories.SupplierFactory()
    host_supplier = factories.SupplierFactory(name="Nordic Memory & Compute AB", country="SE")
    gpu = factories.PartFactory(preferred_supplier=gpu_supplier, list_price=Decimal("2400.00"))
    chassis = factories.ChassisFactory(preferred_supplier=host_supplier, list_price=Decimal("2200.00"))
    dimm = factories.PartFactory(category="memory", vram_gb=None, preferred_supplier=host_supplier)
    configuration = factories.ConfigurationFactory(lines=[(gpu, 8), (chassis, 1), (dimm, 12)])
    order = factories.pass_gate(
        factories.OrderFactory(
            customer=tenants.customer_a,
            configuration=configuration,
            server_count=8,
            status=OrderStatus.APPROVED,
            spare_percent=5,
        )
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client(tenants.pm).post(
            f"/api/v1/orders/{order.pk}/procure/", {"deliver_to": tenants.partner_p.pk}, format="json"
        )
    assert response.status_code == 200, response.json()
    order.refresh_from_db()
    assert order.status == OrderStatus.PROCUREMENT
    pos = {
        link.purchase_order.supplier.name: link.purchase_order
        for link in OrderPurchaseOrder.objects.filter(order=order)
    }
    assert set(pos) == {gpu_supplier.name, host_supplier.name}
    gpu_lines = {line.part.mpn: line.quantity for line in pos[gpu_supplier.name].lines.all()}
    host_lines = {line.part.mpn: line.quantity for line in pos[host_supplier.name].lines.all()}
    assert gpu_lines == {gpu.mpn: 68}  # 64 + 5 % rounded up
    assert host_lines == {chassis.mpn: 9, dimm.mpn: 101}  # 8 + 0.4 → 9; 96 + 4.8 → 101
    assert all(po.status == PS.DRAFT and po.deliver_to == tenants.partner_p for po in pos.values())
    assert sorted(response.json()["purchase_orders"]) == sorted(po.pk for po in pos.values())
    event = AuditEvent.objects.get(verb="order.procure")
    assert sorted(event.after["purchase_orders"]) == sorted(po.number for po in pos.values())


def test_procure_refuses_parts_without_purchasing_data(tenants):
    gpu = factories.PartFactory(preferred_supplier=None)
    chassis = factories.ChassisFactory(list_price=None)
    configuration = factories.ConfigurationFactory(lines=[(gpu, 8), (chassis, 1)])
    order = factories.OrderFactory(
        customer=tenants.customer_a, configuration=configuration, status=OrderStatus.APPROVED
    )
    response = api_client(tenants.pm).post(f"/api/v1/orders/{order.pk}/procure/", {}, format="json")
    assert response.status_code == 409
    assert response.json()["missing"] == [
        f"{gpu.mpn}: no preferred supplier",
        f"{chassis.mpn}: no list price",
    ]
    order.refresh_from_db()
    assert order.status == OrderStatus.APPROVED
    assert not PurchaseOrder.objects.exists()
