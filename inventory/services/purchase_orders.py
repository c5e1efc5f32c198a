"""Purchase orders: drafting one with its lines, and its status transitions (send, cancel, close, and the
received states that receiving settles from the lines' counts)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from decimal import Decimal

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone, translation

from inventory.choices import PO_TRANSITIONS, PurchaseOrderStatus
from inventory.gates import po_quality_warnings
from inventory.models import Part, PurchaseOrder, PurchaseOrderLine, Supplier
from werkbank.audit import audit, user_or_none
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import Organization
from werkbank.services import next_reference
from werkbank.tasks import enqueue_on_commit
from werkbank.transitions import record_transition, require_transition
from werkbank.types import Actor


def _check_deliver_to(deliver_to: Organization | None) -> None:
    if deliver_to is not None and deliver_to.kind != OrganizationKind.PARTNER:
        raise InvalidInput("deliver_to", f"{deliver_to.name} is not an assembly partner's workshop.")


@transaction.atomic
def po_create(
    *,
    actor: Actor,
    supplier: Supplier,
    lines: Iterable[tuple[Part, int, Decimal]],
    currency: str = "EUR",
    deliver_to: Organization | None = None,
    notes: str = "",
) -> PurchaseOrder:
    """Draft a purchase order with its lines (part, quantity, unit price)."""
    _check_deliver_to(deliver_to)
    rows = list(lines)
    if not rows:
        raise InvalidInput("lines", "a purchase order needs at least one line.")
    parts = [part.pk for part, _quantity, _price in rows]
    if len(parts) != len(set(parts)):
        raise InvalidInput("lines", "a part is listed twice; give it once with its total quantity.")
    for part, quantity, price in rows:
        if quantity < 1:
            raise InvalidInput("lines", f"quantity of {part.mpn} must be at least 1.")
        if price < 0:
            raise InvalidInput("lines", f"unit price of {part.mpn} cannot be negative.")
    po = PurchaseOrder.objects.create(
        number=next_reference("PO"),
        supplier=supplier,
        currency=currency,
        deliver_to=deliver_to,
        notes=notes,
        created_by=user_or_none(actor),
    )
    PurchaseOrderLine.objects.bulk_create(
        [
            PurchaseOrderLine(purchase_order=po, part=part, quantity=quantity, unit_price=price)
            for part, quantity, price in rows
        ]
    )
    audit(
        actor=actor,
        verb="purchase_order.create",
        obj=po,
        after={
            "supplier": supplier.name,
            "lines": [
                {"part": part.mpn, "quantity": quantity, "unit_price": price}
                for part, quantity, price in rows
            ],
        },
    )
    return po


def _po_transition(
    *,
    po: PurchaseOrder,
    actor: Actor,
    target: str,
    verb: str,
    note: str = "",
    check: Callable[[PurchaseOrder], None] | None = None,
) -> PurchaseOrder:
    locked = PurchaseOrder.objects.select_for_update().select_related("supplier").get(pk=po.pk)
    require_transition(
        transitions=PO_TRANSITIONS,
        choices=PurchaseOrderStatus,
        current=locked.status,
        target=target,
        subject=f"Purchase order {locked.number}",
        verb=verb,
    )
    if check is not None:
        check(locked)  # the transition's own preconditions, under the lock, once the status allows it
    record_transition(obj=locked, target=target, actor=actor, verb=f"purchase_order.{verb}", note=note)
    return locked


def _in_english(po: PurchaseOrder, warnings: list[str]) -> list[str]:
    """The checks' sentences as the audit row keeps them: in English, as every stored text is."""
    if (translation.get_language() or "en").startswith("en"):
        return warnings
    with translation.override("en"):
        return po_quality_warnings(po)


@transaction.atomic
def po_send(
    *,
    po: PurchaseOrder,
    actor: Actor,
    note: str = "",
    override_reason: str = "",
    quality_override_reason: str = "",
) -> PurchaseOrder:
    """draft → sent: the order goes to the supplier. Two rules may each need a PM's written override,
    audited apart: a non-EU supplier (seed 000: "EU-Bezug"), and a PO whose supplier or parts the quality
    checks flag for their failure rate (`inventory.gates.po_quality_warnings`, issue #29). When both lack
    their reason, one 409 (code `overrides_missing`) lists everything missing; otherwise the code names the
    one rule (`non_eu_supplier`, `quality_flag`). A reason given where its rule does not apply is not
    stored."""
    override_reason = (override_reason or "").strip()
    quality_override_reason = (quality_override_reason or "").strip()
    flagged: list[str] = []

    def overrides(locked: PurchaseOrder) -> None:
        supplier = locked.supplier
        messages: list[str] = []
        missing: list[str] = []
        codes: list[str] = []
        if not supplier.is_eu and not override_reason:
            messages.append(
                f"Supplier {supplier.name} is in {supplier.country}, outside the EU: "
                f"sending {locked.number} needs an override with a written reason."
            )
            missing.append(f"an override reason for the non-EU supplier country {supplier.country}")
            codes.append("non_eu_supplier")
        warnings = po_quality_warnings(locked)
        if warnings and not quality_override_reason:
            messages.append(
                f"Purchase order {locked.number} is flagged for quality: {' '.join(warnings)} "
                "Sending it needs a quality override with a written reason."
            )
            missing.extend(f"an override reason for: {sentence}" for sentence in warnings)
            codes.append("quality_flag")
        if missing:
            code = codes[0] if len(codes) == 1 else "overrides_missing"
            raise RuleViolation(" ".join(messages), missing=missing, code=code)
        if warnings:
            flagged.extend(_in_english(locked, warnings))

    sent = _po_transition(
        po=po, actor=actor, target=PurchaseOrderStatus.SENT, verb="send", note=note, check=overrides
    )
    supplier = sent.supplier
    sent.sent_at = timezone.now()
    update = ["sent_at"]
    if not supplier.is_eu:
        sent.non_eu_override_reason = override_reason
        update.append("non_eu_override_reason")
        audit(
            actor=actor,
            verb="purchase_order.non_eu_override",
            obj=sent,
            after={"country": supplier.country, "override_reason": override_reason},
            note=override_reason,
        )
    if flagged:
        sent.quality_override_reason = quality_override_reason
        update.append("quality_override_reason")
        audit(
            actor=actor,
            verb="purchase_order.quality_override",
            obj=sent,
            after={"warnings": flagged, "override_reason": quality_override_reason},
            note=quality_override_reason,
        )
    sent.save(update_fields=update)
    # The supplier's copy: a PDF kept on the PO and e-mailed by a task once this commits (issue #24).
    enqueue_on_commit("inventory.tasks.po_document_send_task", po_id=sent.pk)
    return sent


@transaction.atomic
def po_line_add(
    *, po: PurchaseOrder, actor: Actor, part: Part, quantity: int, unit_price: Decimal
) -> PurchaseOrderLine:
    """Add a part to a draft purchase order (issue #29: a PM adds a line). The caller shows the PO's
    quality warnings with it (`inventory.gates.po_quality_warnings`); sending then needs their override.
    A part already on the PO is refused: its one line carries the total quantity."""
    if quantity is None or quantity < 1:
        raise InvalidInput("quantity", f"quantity of {part.mpn} must be at least 1.")
    if unit_price is None or unit_price < 0:
        raise InvalidInput("unit_price", f"unit price of {part.mpn} cannot be negative.")
    locked = PurchaseOrder.objects.select_for_update().get(pk=po.pk)
    if locked.status != PurchaseOrderStatus.DRAFT:
        raise RuleViolation(
            f"Purchase order {locked.number} is {locked.get_status_display().lower()}: "
            "lines are added only to a draft.",
            missing=["purchase order status draft"],
            code="po_not_draft",
        )
    if locked.lines.filter(part=part).exists():
        raise InvalidInput(
            "part", f"{part.mpn} is already on {locked.number}; it is listed once, with its total quantity."
        )
    line = PurchaseOrderLine.objects.create(
        purchase_order=locked, part=part, quantity=quantity, unit_price=unit_price
    )
    audit(
        actor=actor,
        verb="purchase_order.line_add",
        obj=locked,
        after={"line": line.pk, "part": part.mpn, "quantity": quantity, "unit_price": unit_price},
    )
    return line


@transaction.atomic
def po_cancel(*, po: PurchaseOrder, actor: Actor, reason: str) -> PurchaseOrder:
    """draft or sent → cancelled, before anything arrived."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "a written reason is required.")
    return _po_transition(
        po=po, actor=actor, target=PurchaseOrderStatus.CANCELLED, verb="cancel", note=reason
    )


@transaction.atomic
def po_close(*, po: PurchaseOrder, actor: Actor, note: str = "") -> PurchaseOrder:
    """received or partially received → closed: nothing more is expected."""
    return _po_transition(po=po, actor=actor, target=PurchaseOrderStatus.CLOSED, verb="close", note=note)


@transaction.atomic
def po_set_delivery(*, po: PurchaseOrder, actor: Actor, deliver_to: Organization) -> PurchaseOrder:
    """Deliver a purchase order to an assembly partner's workshop, before anything of it arrived: its
    serials are then booked at the workshop, where the partner's bench finds them (issue #24).

    Refused (409) once a line has received serials (they lie where they were booked; moving them is a
    stock movement, not a new address) or when the PO is cancelled or closed.
    """
    _check_deliver_to(deliver_to)
    locked = PurchaseOrder.objects.select_for_update(of=("self",)).select_related("deliver_to").get(pk=po.pk)
    if locked.deliver_to_id == deliver_to.pk:
        return locked
    received = locked.lines.aggregate(received=Sum("quantity_received"))["received"] or 0
    if received or locked.status in (PurchaseOrderStatus.CANCELLED, PurchaseOrderStatus.CLOSED):
        raise RuleViolation(
            f"Purchase order {locked.number} is {locked.get_status_display().lower()} with {received} "
            f"serial(s) received; its delivery address can no longer change to {deliver_to.name}.",
            missing=[f"a purchase order with nothing received yet (received: {received})"],
            code="po_delivery_fixed",
        )
    before = locked.deliver_to.name if locked.deliver_to else None
    locked.deliver_to = deliver_to
    locked.save(update_fields=["deliver_to"])
    audit(
        actor=actor,
        verb="po.set_delivery",
        obj=locked,
        before={"deliver_to": before},
        after={"deliver_to": deliver_to.name},
    )
    return locked


#: The PO transitions by action name, for the API, the admin and the tests.
PO_TRANSITION_SERVICES = {"send": po_send, "cancel": po_cancel, "close": po_close}


def settle_po_status(*, po: PurchaseOrder, actor: Actor) -> None:
    """sent/partially received → partially received or received, from the lines' counts."""
    locked = PurchaseOrder.objects.select_for_update().get(pk=po.pk)
    totals = locked.lines.aggregate(ordered=Sum("quantity"), received=Sum("quantity_received"))
    target = (
        PurchaseOrderStatus.RECEIVED
        if totals["received"] >= totals["ordered"]
        else PurchaseOrderStatus.PARTIALLY_RECEIVED
    )
    if target != locked.status:
        _po_transition(po=locked, actor=actor, target=target, verb=target)
