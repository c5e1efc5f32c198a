"""Purchase orders: drafting one with its lines, and its status transitions (send, cancel, close, and the
received states that receiving settles from the lines' counts)."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from inventory.choices import PO_TRANSITIONS, PurchaseOrderStatus
from inventory.models import Part, PurchaseOrder, PurchaseOrderLine, Supplier
from werkbank.audit import audit, user_or_none
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import Organization
from werkbank.services import next_reference
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
    *, po: PurchaseOrder, actor: Actor, target: str, verb: str, note: str = ""
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
    record_transition(obj=locked, target=target, actor=actor, verb=f"purchase_order.{verb}", note=note)
    return locked


@transaction.atomic
def po_send(*, po: PurchaseOrder, actor: Actor, note: str = "", override_reason: str = "") -> PurchaseOrder:
    """draft → sent: the order goes to the supplier. A non-EU supplier needs a PM's written override
    (seed 000: "EU-Bezug")."""
    override_reason = (override_reason or "").strip()
    supplier = po.supplier
    if not supplier.is_eu and not override_reason:
        raise RuleViolation(
            f"Supplier {supplier.name} is in {supplier.country}, outside the EU: "
            f"sending {po.number} needs an override with a written reason.",
            missing=[f"an override reason for the non-EU supplier country {supplier.country}"],
            code="non_eu_supplier",
        )
    sent = _po_transition(po=po, actor=actor, target=PurchaseOrderStatus.SENT, verb="send", note=note)
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
    sent.save(update_fields=update)
    return sent


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
