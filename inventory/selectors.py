"""Inventory reads: the label sheet of a lot, the labels of a batch, one component's label for a label
printer, and the spares in stock near the end of their supplier warranty."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from dateutil.relativedelta import relativedelta
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from inventory.choices import ComponentStatus
from inventory.labels import Label, render_component_label, render_labels
from inventory.models import BatchLot, Component, LabelBatch, Supplier
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


# --- spares near the end of their supplier warranty (issue #29) -----------------------------------------


@dataclass(frozen=True)
class SpareWarranty:
    """A component in stock and the end of its supplier's warranty: its receipt plus the supplier's
    `warranty_months` (the same day of the month; relativedelta clamps the 31st to a shorter month's end)."""

    component: Component
    ends: date
    days_left: int  # negative: ended that many days ago

    @property
    def ended(self) -> bool:
        return self.days_left < 0


def supplier_warranty_end(received: date, months: int) -> date:
    """The last day of a supplier warranty of `months` on what was received on `received`."""
    return received + relativedelta(months=months)


def _last_receipt_day(limit: date, months: int) -> date:
    """The latest receipt day whose supplier warranty of `months` ends on or before `limit`.

    `limit - months` is one such day, but not always the latest: with month ends clamped, 29, 30 and 31
    January + 1 month all end on 28 February, so the days after it are tried too (at most three)."""
    day = limit - relativedelta(months=months)
    while supplier_warranty_end(day + timedelta(days=1), months) <= limit:
        day += timedelta(days=1)
    return day


def spares_supplier_warranty_ending(
    *, within_days: int = 90, today: date | None = None
) -> list[SpareWarranty]:
    """The components in stock whose supplier warranty ends within `within_days` days from `today`, and
    those whose supplier warranty has already ended (`ended`), soonest (longest ended) first.

    Suppliers are few and so are their warranty terms: one query reads the distinct terms, and one reads the
    components, with a receipt cutoff per term ORed together (a receipt before the start of the day after
    the latest receipt day that still ends in time, in the current time zone), so the database compares
    `received_at` against constants. The end dates are computed here, for the rows found only.
    """
    today = today or timezone.localdate()
    limit = today + timedelta(days=within_days)
    zone = timezone.get_current_timezone()
    terms = sorted(set(Supplier.objects.order_by().values_list("warranty_months", flat=True)))
    if not terms:
        return []
    due = Q()
    for months in terms:
        before = datetime.combine(_last_receipt_day(limit, months) + timedelta(days=1), time.min, tzinfo=zone)
        due |= Q(lot__supplier__warranty_months=months, received_at__lt=before)
    components = (
        Component.objects.filter(due, status=ComponentStatus.IN_STOCK)
        .select_related("part", "lot__supplier")
        .order_by("received_at", "serial", "pk")
    )
    spares = []
    for component in components:
        ends = supplier_warranty_end(
            timezone.localdate(component.received_at), component.lot.supplier.warranty_months
        )
        spares.append(SpareWarranty(component=component, ends=ends, days_left=(ends - today).days))
    return sorted(spares, key=lambda spare: (spare.ends, spare.component.serial))
