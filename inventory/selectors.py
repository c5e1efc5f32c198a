"""Inventory reads: the label sheet of a lot, and one component's label for a label printer."""

from __future__ import annotations

from django.db.models import QuerySet

from inventory.labels import Label, render_component_label, render_labels
from inventory.models import BatchLot, Component
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


def component_label_pdf(*, component: Component) -> bytes:
    """One component's label for a 62 mm label printer (the component already scoped to the user)."""
    part, lot = component.part, component.lot
    return render_component_label(
        Label(
            serial=component.serial,
            part=f"{part.manufacturer} {part.name} ({part.mpn})",
            mpn=part.mpn,
            lot=lot.lot_code,
            po=component.po_line.purchase_order.number,
            extra=f"DC {lot.date_code} · {lot.country_of_origin}",
        )
    )
