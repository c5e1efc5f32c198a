"""The purchase order's PDF (issue #24): "Send" renders it once, keeps it on the PO with its SHA-256 and
e-mails it to the supplier's contact address; a repeat sends nothing more, a supplier without an address
gets none, and the PDF reads as a purchase order in English and German."""

from __future__ import annotations

import hashlib
import shutil
import subprocess

import pytest
from django.core import mail

from inventory.models import PurchaseOrder
from inventory.services import po_document_send
from tests import factories
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _draft(*, email: str = "orders@eu-parts.example", **kwargs):
    supplier = factories.SupplierFactory(name="EU Parts GmbH", contact_email=email, vat_id="DE123456789")
    part = factories.PartFactory(mpn="RTX-5090-FE", manufacturer="NVIDIA", name="GeForce RTX 5090")
    return factories.make_po(send=False, supplier=supplier, part=part, quantity=8, **kwargs)


def _text(pdf: bytes, tmp_path) -> str:
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    path = tmp_path / "po.pdf"
    path.write_bytes(pdf)
    return subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def test_send_mails_the_supplier_the_po_pdf_and_keeps_it(
    tenants, django_capture_on_commit_callbacks, tmp_path
):
    po = _draft(deliver_to=tenants.partner_p)
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client(tenants.pm).post(
            f"/api/v1/inventory/purchase-orders/{po.pk}/send/", {}, format="json"
        )
    assert response.status_code == 200, response.json()
    po.refresh_from_db()
    assert po.document.name.endswith(f"{po.number}.pdf")
    pdf = po.document.read()
    assert hashlib.sha256(pdf).hexdigest() == po.document_sha256
    assert po.document_emailed_to == ["orders@eu-parts.example"]
    (message,) = mail.outbox
    assert message.to == ["orders@eu-parts.example"] and po.number in message.subject
    (name, attached, mimetype) = message.attachments[0]
    assert (name, attached, mimetype) == (f"{po.number}.pdf", pdf, "application/pdf")
    text = _text(pdf, tmp_path)
    for expected in (
        f"Purchase order / Bestellung {po.number}",
        "EU Parts GmbH",
        f"Workshop / Werkstatt {tenants.partner_p.name}",
        "RTX-5090-FE",
        "19,200.00 EUR",  # 8 × 2,400.00
        "Fertigungslos",
    ):
        assert expected in text, expected
    event = AuditEvent.objects.get(verb="purchase_order.document", object_id=str(po.pk))
    assert event.after == {"sha256": po.document_sha256, "emailed_to": ["orders@eu-parts.example"]}


def test_a_repeated_task_sends_nothing_more_and_a_draft_gets_no_document(
    tenants, django_capture_on_commit_callbacks
):
    po = _draft()
    assert po_document_send(po_id=po.pk) is None  # a draft: nothing goes out
    with django_capture_on_commit_callbacks(execute=True):
        api_client(tenants.pm).post(f"/api/v1/inventory/purchase-orders/{po.pk}/send/", {}, format="json")
    assert len(mail.outbox) == 1
    assert po_document_send(po_id=po.pk) is None
    assert len(mail.outbox) == 1
    assert AuditEvent.objects.filter(verb="purchase_order.document").count() == 1


def test_a_supplier_without_an_address_gets_the_document_kept_and_no_mail(
    tenants, django_capture_on_commit_callbacks
):
    po = _draft(email="")
    with django_capture_on_commit_callbacks(execute=True):
        api_client(tenants.pm).post(f"/api/v1/inventory/purchase-orders/{po.pk}/send/", {}, format="json")
    po = PurchaseOrder.objects.get(pk=po.pk)
    assert po.document_sha256 and po.document_emailed_to == []
    assert mail.outbox == []


def test_the_admin_links_the_supplier_copy_for_pms_only(client, tenants, django_capture_on_commit_callbacks):
    po = _draft()
    with django_capture_on_commit_callbacks(execute=True):
        api_client(tenants.pm).post(f"/api/v1/inventory/purchase-orders/{po.pk}/send/", {}, format="json")
    po.refresh_from_db()
    client.force_login(tenants.pm)
    page = client.get(f"/admin/inventory/purchaseorder/{po.pk}/change/")
    assert f"/admin/inventory/purchaseorder/{po.pk}/document.pdf" in page.text
    assert "e-mailed to orders@eu-parts.example" in page.text
    download = client.get(f"/admin/inventory/purchaseorder/{po.pk}/document.pdf")
    assert download.status_code == 200
    assert hashlib.sha256(b"".join(download.streaming_content)).hexdigest() == po.document_sha256
    client.force_login(tenants.user_p)
    assert client.get(f"/admin/inventory/purchaseorder/{po.pk}/document.pdf").status_code in (302, 404)
