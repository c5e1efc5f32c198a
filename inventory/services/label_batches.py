"""Label batches: the QR labels of a lot, a purchase order or a list of components, rendered by a task.

A PM or a partner asks for the labels (`label_batch_request`); a Celery task renders them
(`label_batch_generate`) in the steps of a rendered-file job (werkbank/filejobs.py), as warranty's handover
packs: claim the row, render outside any lock (inventory/labels.py) with the progress in small transactions,
store the PDF and mark the batch ready with its SHA-256 (a repeated or redelivered task changes nothing: the
`ready_has_file` constraint and the claim's check), or mark it failed and re-raise, so that the task retries.
"""

from __future__ import annotations

from django.db import transaction

from inventory.models import BatchLot, LabelBatch, PurchaseOrder
from inventory.selectors import label_batch_pdf
from inventory.services.components import serials_seen_by
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.filejobs import FileJob
from werkbank.tasks import enqueue_on_commit
from werkbank.types import Actor

#: The most labels one batch prints (about 40 s of rendering, a 9 MB PDF); split a larger set.
LABEL_BATCH_MAX = 20_000


def _batch_components(
    *, actor: Actor, lot: BatchLot | None, purchase_order: PurchaseOrder | None, components: list[int] | None
) -> tuple[str, list[int]]:
    """The batch's title and the ids of the components `actor` may see, in print order."""
    given = [name for name, value in (("lot", lot), ("purchase_order", purchase_order)) if value is not None]
    if components is not None:
        given.append("components")
    if len(given) != 1:
        raise InvalidInput("lot", "give exactly one of lot, purchase_order or components.")
    visible = serials_seen_by(actor)
    if lot is not None:
        if not BatchLot.objects.visible_to(actor).filter(pk=lot.pk).exists():
            raise InvalidInput("lot", f"no lot with id {lot.pk}.")
        ids = list(visible.filter(lot=lot).order_by("serial").values_list("pk", flat=True))
        return f"Labels of lot {lot.lot_code} ({lot.part.mpn})", ids
    if purchase_order is not None:
        if not PurchaseOrder.objects.visible_to(actor).filter(pk=purchase_order.pk).exists():
            raise InvalidInput("purchase_order", f"no purchase order with id {purchase_order.pk}.")
        rows = visible.filter(po_line__purchase_order=purchase_order).order_by("lot_id", "serial")
        return f"Labels of {purchase_order.number}", list(rows.values_list("pk", flat=True))
    wanted = list(dict.fromkeys(components or []))  # the given order, each once
    found = set(visible.filter(pk__in=wanted).values_list("pk", flat=True))
    unknown = [pk for pk in wanted if pk not in found]
    if unknown:
        shown = ", ".join(str(pk) for pk in unknown[:10]) + (" …" if len(unknown) > 10 else "")
        raise InvalidInput("components", f"{len(unknown)} component id(s) not found: {shown}.")
    return f"Labels of {len(wanted)} components", wanted


@transaction.atomic
def label_batch_request(
    *,
    actor: Actor,
    lot: BatchLot | None = None,
    purchase_order: PurchaseOrder | None = None,
    components: list[int] | None = None,
) -> LabelBatch:
    """Queue the labels of one lot, one purchase order or a list of component ids, rendered by a task.

    Exactly one of the three is given. The batch prints the components `actor` may see now (the ids are
    stored, so a later change of access neither adds nor removes labels); 409 when there are none, 400
    for a foreign lot or purchase order, for component ids not found and for more than LABEL_BATCH_MAX.
    """
    title, ids = _batch_components(actor=actor, lot=lot, purchase_order=purchase_order, components=components)
    if not ids:
        raise RuleViolation(f"{title}: there are no components to label.", code="empty_batch")
    if len(ids) > LABEL_BATCH_MAX:
        raise InvalidInput(
            "components", f"{len(ids)} labels; one batch prints at most {LABEL_BATCH_MAX}: split the request."
        )
    batch = LabelBatch.objects.create(
        requested_by=user_or_none(actor),
        lot=lot,
        purchase_order=purchase_order,
        title=title,
        component_ids=ids,
        count=len(ids),
    )
    audit(actor=actor, verb="label_batch.request", obj=batch, after={"title": title, "count": len(ids)})
    enqueue_on_commit("inventory.tasks.label_batch_render_task", batch_id=batch.pk)
    return batch


#: The steps of werkbank.filejobs for label batches: one PDF, its label count in the audited result.
LABEL_BATCH_JOB = FileJob(
    model=LabelBatch,
    noun="Label batch",
    verb="label_batch",
    files=("pdf",),
    summary=lambda batch: {"count": batch.count},
)


def label_batch_progress(*, batch_id: int, progress: int) -> None:
    """Write a running batch's progress (0–99) in a transaction of its own, so that a watcher sees it."""
    LABEL_BATCH_JOB.progress(batch_id, progress)


def label_batch_generate(*, batch_id: int) -> LabelBatch | None:
    """Render and store one label batch: the task's service, in the steps of this module's docstring.

    Returns the ready batch, or None when there was nothing to do. Re-raises what failed, after marking the
    batch failed, so that the task retries transient errors."""
    reported = [0]

    def progress(value: int) -> None:
        if value >= reported[0] + 5:  # a row update every 5 % at most, not one per page
            reported[0] = value
            label_batch_progress(batch_id=batch_id, progress=value)

    return LABEL_BATCH_JOB.run(
        batch_id,
        lambda batch: {"pdf": (f"labels-{batch.pk}.pdf", label_batch_pdf(batch=batch, progress=progress))},
    )
