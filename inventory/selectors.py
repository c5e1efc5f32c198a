"""Inventory reads: the label sheet of a lot."""

from __future__ import annotations

from django.db.models import QuerySet

from inventory.labels import Label, render_labels
from inventory.models import BatchLot
from werkbank.errors import RuleViolation


def lot_labels_pdf(*, lot: BatchLot, components: QuerySet) -> bytes:
    """A PDF of QR labels, one per serial of the lot (of those given, already scoped to the user)."""
    rows = components.select_related("po_line__purchase_order").order_by("serial")
    part = f"{lot.part.manufacturer} {lot.part.name} ({lot.part.mpn})"
    labels = [
        Label(
            serial=component.serial,
            part=part,
            lot=lot.lot_code,
            po=component.po_line.purchase_order.number,
            extra=f"DC {lot.date_code} · {lot.country_of_origin}",
        )
        for component in rows
    ]
    if not labels:
        raise RuleViolation(f"Lot {lot.lot_code} has no components to label.", code="empty_lot")
    return render_labels(labels, title=f"Labels of lot {lot.lot_code} ({lot.part.mpn})")
