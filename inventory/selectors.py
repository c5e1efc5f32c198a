"""Inventory reads: the label sheet of a lot, and one component's label for a label printer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Count, QuerySet

from inventory.labels import Label, render_component_label, render_labels
from inventory.models import BatchLot, Component
from werkbank.errors import RuleViolation


def lot_component_counts(*, user: Any, lots: Sequence[BatchLot]) -> Sequence[BatchLot]:
    """Set `component_count` on each of `lots` (one page of a list): its components that `user` may see.

    One grouped query for the page's lots, instead of a per-row subquery that the list would evaluate for
    every lot before it is sliced (issue #15: the lots list counted every component on every page).
    """
    counts = dict(
        Component.objects.visible_to(user)
        .filter(lot__in=[lot.pk for lot in lots])
        .order_by()
        .values_list("lot")
        .annotate(n=Count("pk"))
    )
    for lot in lots:
        lot.component_count = counts.get(lot.pk, 0)  # type: ignore[attr-defined]
    return lots


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
