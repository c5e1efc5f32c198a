"""Inventory reads: the label sheet of a lot, the labels of a batch, and one component's label for a label
printer."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.db.models import Count, QuerySet

from inventory.labels import Label, render_component_label, render_labels
from inventory.models import BatchLot, Component, LabelBatch
from werkbank.errors import RuleViolation
from werkbank.types import Actor

#: Labels that render in the request itself (about 0.4 s); a larger lot's sheet is a label batch, rendered
#: by a task (`label_batch_request`), so that no request blocks for seconds.
LABELS_IN_REQUEST_MAX = 200


def lot_component_counts(*, user: Actor, lots: Sequence[BatchLot]) -> Sequence[BatchLot]:
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
    """A PDF of QR labels, one per serial of the lot (of those given, already scoped to the user); 409 for
    more than LABELS_IN_REQUEST_MAX."""
    ordered = components.select_related("po_line__purchase_order").order_by("serial")
    rows = ordered[: LABELS_IN_REQUEST_MAX + 1]  # one more than renders here: enough to refuse a larger lot
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
    if len(labels) > LABELS_IN_REQUEST_MAX:
        raise RuleViolation(
            f"Lot {lot.lot_code} has more than {LABELS_IN_REQUEST_MAX} serials: its labels are rendered in "
            f'the background. POST {{"lot": {lot.pk}}} to /api/v1/inventory/label-batches/ (or use the '
            "lots' print action in the admin) and download the PDF once it is ready.",
            missing=["a label batch for this lot"],
            code="too_many_labels",
        )
    return render_labels(labels, title=f"Labels of lot {lot.lot_code} ({lot.part.mpn})")


def component_label_pdf(*, component: Component) -> bytes:
    """One component's label for a 62 mm label printer (the component already scoped to the user)."""
    return render_component_label(_component_label(component))


def _component_label(component: Component) -> Label:
    part, lot = component.part, component.lot
    return Label(
        serial=component.serial,
        part=f"{part.manufacturer} {part.name} ({part.mpn})",
        mpn=part.mpn,
        lot=lot.lot_code,
        po=component.po_line.purchase_order.number,
        extra=f"DC {lot.date_code} · {lot.country_of_origin}",
    )


def label_batch_labels(*, batch: LabelBatch) -> list[Label]:
    """The batch's labels in its print order: one query, whatever the count (ids a since removed component
    had are skipped)."""
    ids: Sequence[int] = batch.component_ids
    rows = Component.objects.filter(pk__in=ids).select_related("part", "lot", "po_line__purchase_order")
    by_id = {component.pk: component for component in rows}
    return [_component_label(by_id[pk]) for pk in ids if pk in by_id]


def label_batch_pdf(*, batch: LabelBatch, progress: Callable[[int], None] | None = None) -> bytes:
    """Render the batch's A4 label sheets; `progress` gets the share done (0–100) as pages are drawn."""
    labels = label_batch_labels(batch=batch)
    if not labels:
        raise RuleViolation(
            f"{batch.title}: none of its components is on record any more.", code="empty_batch"
        )
    report = progress or (lambda _value: None)
    return render_labels(labels, title=batch.title, on_page=lambda done: report(done * 100 // len(labels)))
