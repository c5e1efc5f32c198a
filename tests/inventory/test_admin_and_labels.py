"""The PM's inventory pages, and the label PDF as a user downloads it."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader

from inventory.choices import PurchaseOrderStatus
from inventory.models import BatchLot
from tests import factories
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def received(tenants):
    serials = [f"LBL-{i:03d}" for i in range(30)]
    po = factories.receive_stock(deliver_to=tenants.partner_p, lots={"L-LBL": serials})
    return po, serials


def test_lot_labels_pdf_has_one_qr_label_per_serial(tenants, received):
    po, serials = received
    lot = BatchLot.objects.get(lot_code="L-LBL")
    response = api_client(tenants.user_p).get(f"/api/v1/inventory/lots/{lot.pk}/labels/")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="labels-{lot.pk}.pdf"'
    reader = PdfReader(io.BytesIO(response.content))
    assert len(reader.pages) == 2  # 24 labels a sheet
    text = "\n".join(page.extract_text() for page in reader.pages)
    assert sorted(serial for serial in serials if serial in text) == serials
    assert text.count(po.number) == 30
    assert "Lot L-LBL" in text


@pytest.mark.parametrize(
    "url",
    [
        "/admin/inventory/supplier/",
        "/admin/inventory/purchaseorder/",
        "/admin/inventory/batchlot/",
        "/admin/inventory/component/?q=LBL-001",
        "/admin/inventory/stockmovement/",
        "/admin/inventory/part/",
    ],
)
def test_pm_inventory_pages_open(client, tenants, received, url):
    client.force_login(tenants.pm)
    assert client.get(url).status_code == 200


def test_po_page_shows_lines_and_timeline(client, tenants, received):
    po, _serials = received
    client.force_login(tenants.pm)
    page = client.get(f"/admin/inventory/purchaseorder/{po.pk}/change/").content.decode()
    assert "purchase_order.receive" in page and "purchase_order.send" in page
    assert po.lines.get().part.mpn in page


def test_admin_send_action_applies_the_eu_rule(client, tenants):
    supplier = factories.SupplierFactory(name="Shenzhen Chassis Works Ltd.", country="CN")
    po = factories.make_po(supplier=supplier, send=False)
    client.force_login(tenants.pm)
    response = client.post(
        "/admin/inventory/purchaseorder/",
        {"action": "send_selected", "_selected_action": [po.pk]},
        follow=True,
    )
    # A page asks for the non-EU override reason first (issue #24: no step needs the API).
    assert "Non-EU override reason" in response.content.decode()
    po.refresh_from_db()
    assert po.status == PurchaseOrderStatus.DRAFT
    apply = {"action": "send_selected", "_selected_action": [po.pk], "apply": "1"}
    refused = client.post("/admin/inventory/purchaseorder/", apply, follow=True)
    assert "is in CN, outside the EU" in refused.content.decode()
    po.refresh_from_db()
    assert po.status == PurchaseOrderStatus.DRAFT
    reason = "Only maker of this chassis; EU distributor out of stock for 12 weeks."
    client.post("/admin/inventory/purchaseorder/", {**apply, "override_reason": reason}, follow=True)
    po.refresh_from_db()
    assert (po.status, po.non_eu_override_reason) == (PurchaseOrderStatus.SENT, reason)
