"""The purchase order's PDF for the supplier (issue #24): rendered once when the PO is sent, kept on the
PO, and e-mailed to the supplier's contact address by a task."""

from __future__ import annotations

import hashlib

from django.core.mail import EmailMessage
from django.db import transaction

from inventory.choices import PurchaseOrderStatus
from inventory.models import PurchaseOrder
from inventory.po_document import render_po_pdf
from werkbank.audit import audit
from werkbank.files import save_with_file


@transaction.atomic
def po_document_send(*, po_id: int) -> PurchaseOrder | None:
    """Render the sent PO's PDF, keep it on the PO and e-mail it to the supplier; the task's service.

    Once per PO: a PO that has its document is left alone (a repeated or redelivered task sends nothing
    more), and so is one that was never sent. If the e-mail fails, everything rolls back (the file is
    written only after the commit) and the task's retry sends it. A supplier without a contact address
    gets the document kept and no e-mail; the audit row says so (`emailed_to` empty).
    """
    po = (
        PurchaseOrder.objects.select_for_update(of=("self",))
        .select_related("supplier", "deliver_to")
        .get(pk=po_id)
    )
    if po.document_sha256 or po.status == PurchaseOrderStatus.DRAFT or po.sent_at is None:
        return None
    pdf = render_po_pdf(po)
    recipients = [po.supplier.contact_email] if po.supplier.contact_email else []
    po.document_sha256 = hashlib.sha256(pdf).hexdigest()
    po.document_emailed_to = recipients
    save_with_file(
        po,
        field="document",
        content=pdf,
        filename=f"{po.number}.pdf",
        update_fields=("document_sha256", "document_emailed_to"),
    )
    audit(
        actor=None,
        verb="purchase_order.document",
        obj=po,
        after={"sha256": po.document_sha256, "emailed_to": recipients},
    )
    if recipients:
        message = EmailMessage(
            subject=f"Purchase order {po.number} / Bestellung {po.number}",
            body=(
                f"Hello,\n\nplease find our purchase order {po.number} attached.\n\n"
                f"Guten Tag,\n\nanbei unsere Bestellung {po.number}.\n\n-- \nWerkbank\n"
            ),
            to=recipients,
        )
        message.attach(f"{po.number}.pdf", pdf, "application/pdf")
        message.send()
    return po
