"""Supplier returns: a failed component sent back to its supplier (or maker), open → shipped → closed.

A return is the PMs' business (the customer never sees it). It starts from a failed component: one that a
claim's replacement took out of the customer's server, one a burn-in or the bench found faulty (status
`failed`, inventory/choices.py). Shipping moves the component to `rma` (at the supplier) through inventory's
ledger; the supplier's answer closes it with an outcome: a credit note, a replacement serial booked into
stock (`inventory.services.component_receive_replacement`), or a refusal.

The customer's claim and the supplier return are linked both ways (`SupplierReturn.claim`, its reverse
`claim.supplier_return`) and close independently: closing one never touches the other.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone

from inventory.choices import ComponentStatus
from inventory.models import Component
from inventory.services import component_move, component_receive_replacement
from warranty.choices import (
    SUPPLIER_RETURN_OPEN,
    SUPPLIER_RETURN_TRANSITIONS,
    ClaimStatus,
    FailureCause,
    SupplierReturnOutcome,
    SupplierReturnStatus,
)
from warranty.models import Attribution, SupplierReturn, WarrantyClaim
from werkbank.access import is_pm
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.services import next_reference
from werkbank.transitions import record_transition, require_transition
from werkbank.types import Actor

#: Supplier return numbers: SR-YYYY-NNNN, counted per year.
SUPPLIER_RETURN_PREFIX = "SR"

#: The claims whose component may go back to its supplier: the replacement was shipped, so the failed card
#: is out of the customer's server (claim_ship_replacement moves it to `failed`). An approved claim's card
#: is still installed; it goes back once it is swapped.
CLAIM_RETURNABLE = frozenset({ClaimStatus.REPLACEMENT_SHIPPED, ClaimStatus.CLOSED})


def _text(value: str, *, field: str, required: bool, max_length: int = 5000) -> str:
    value = (value or "").strip()
    if required and not value:
        raise InvalidInput(field, "must not be empty.")
    if len(value) > max_length:
        raise InvalidInput(field, f"has {len(value)} characters; at most {max_length}.")
    return value


def _require_pm(actor: Actor) -> None:
    if not is_pm(actor):
        raise RuleViolation(
            "Only project managers handle returns to suppliers.",
            missing=["a project manager"],
            code="pm_only",
        )


def _when(value: datetime | None, *, field: str, not_before: datetime | None = None) -> datetime:
    now = timezone.now()
    if value is None:
        return now
    if timezone.is_naive(value):
        raise InvalidInput(field, "must carry its time zone.")
    if value > now:
        raise InvalidInput(field, "cannot be in the future.")
    if not_before is not None and value < not_before:
        raise InvalidInput(field, f"cannot be before {not_before.isoformat()}.")
    return value


def _claim_missing(*, claim: WarrantyClaim, component: Component) -> list[str]:
    missing = []
    if claim.record.component_id != component.pk:
        missing.append(f"claim {claim.number} is on {claim.record.serial}, not on {component.serial}")
    if claim.status not in CLAIM_RETURNABLE:
        missing.append(
            f"claim {claim.number} is {claim.get_status_display().lower()}: the replacement shipped, so "
            f"that the failed card is out of the customer's server"
        )
    existing = SupplierReturn.objects.filter(claim=claim).values_list("number", flat=True).first()
    if existing is not None:
        missing.append(f"claim {claim.number} already has supplier return {existing}")
    return missing


def _attribution_missing(*, attribution: Attribution, component: Component) -> list[str]:
    if attribution.cause == FailureCause.COMPONENT and attribution.component_id == component.pk:
        return []
    return [
        f"an attribution of the failure to {component.serial} (its attribution blames the "
        f"{attribution.get_cause_display().lower()})"
    ]


@transaction.atomic
def supplier_return_open(
    *,
    component: Component,
    actor: Actor,
    reason: str,
    claim: WarrantyClaim | None = None,
    attribution: Attribution | None = None,
) -> SupplierReturn:
    """Open a return of a failed component to the supplier it came from (its lot's), SR-YYYY-NNNN (a PM).

    Refused (409 `not_returnable`, listing what is missing) unless the component is failed (out of any
    server, in our hands), the claim (if given) is the component's own with its replacement shipped and no
    return yet, and the attribution (if given) blames this component. One return in progress per component
    (a partial unique constraint backs it: 409 `supplier_return_open`).
    """
    _require_pm(actor)
    reason = _text(reason, field="reason", required=True)
    locked = (
        Component.objects.select_for_update(of=("self",)).select_related("lot__supplier").get(pk=component.pk)
    )
    in_progress = (
        SupplierReturn.objects.filter(component=locked, status__in=sorted(SUPPLIER_RETURN_OPEN))
        .values_list("number", flat=True)
        .first()
    )
    if in_progress is not None:
        raise RuleViolation(
            f"{locked.serial} is already on its way back to its supplier: {in_progress}.",
            missing=[f"{in_progress} closed"],
            code="supplier_return_open",
        )
    missing = []
    if locked.status != ComponentStatus.FAILED:
        missing.append(f"{locked.serial} failed (it is {locked.get_status_display().lower()})")
    if claim is not None:
        claim = (
            WarrantyClaim.objects.select_for_update(of=("self",)).select_related("record").get(pk=claim.pk)
        )
        missing += _claim_missing(claim=claim, component=locked)
    if attribution is not None:
        missing += _attribution_missing(attribution=attribution, component=locked)
    if missing:
        raise RuleViolation(
            f"{locked.serial} cannot go back to its supplier: " + "; ".join(missing) + ".",
            missing=missing,
            code="not_returnable",
        )
    supplier = locked.lot.supplier
    try:
        with transaction.atomic():
            supplier_return = SupplierReturn.objects.create(
                number=next_reference(SUPPLIER_RETURN_PREFIX),
                component=locked,
                supplier=supplier,
                claim=claim,
                attribution=attribution,
                reason=reason,
                created_by=user_or_none(actor),
            )
    except IntegrityError:  # another return was opened meanwhile (the row lock makes this rare)
        raise RuleViolation(
            f"{locked.serial} is already on its way back to its supplier.",
            missing=["the return in progress closed"],
            code="supplier_return_open",
        ) from None
    audit(
        actor=actor,
        verb="supplier_return.open",
        obj=supplier_return,
        after={
            "status": supplier_return.status,
            "number": supplier_return.number,
            "serial": locked.serial,
            "supplier": supplier.name,
            "claim": claim.number if claim is not None else None,
            "attribution": attribution.pk if attribution is not None else None,
        },
        note=reason,
    )
    return supplier_return


def _lock(supplier_return: SupplierReturn) -> SupplierReturn:
    return (
        SupplierReturn.objects.select_for_update(of=("self",))
        .select_related("component", "supplier")
        .get(pk=supplier_return.pk)
    )


def _require(locked: SupplierReturn, target: str, verb: str) -> None:
    require_transition(
        transitions=SUPPLIER_RETURN_TRANSITIONS,
        choices=SupplierReturnStatus,
        current=locked.status,
        target=target,
        subject=f"Supplier return {locked.number}",
        verb=verb,
    )


@transaction.atomic
def supplier_return_ship(
    *,
    supplier_return: SupplierReturn,
    actor: Actor,
    supplier_rma_number: str,
    shipped_at: datetime | None = None,
) -> SupplierReturn:
    """open → shipped (a PM): the component leaves for the supplier under the supplier's RMA number (400
    `supplier_rma_number` without it). It moves to `rma` (at the supplier) with a ledger row."""
    _require_pm(actor)
    locked = _lock(supplier_return)
    _require(locked, SupplierReturnStatus.SHIPPED, "ship")
    rma = _text(supplier_rma_number, field="supplier_rma_number", required=True, max_length=64)
    locked.supplier_rma_number = rma
    locked.shipped_at = _when(shipped_at, field="shipped_at")
    component_move(
        components=[locked.component],
        actor=actor,
        to_status=ComponentStatus.RMA,
        reason=f"Returned to {locked.supplier.name} on {locked.number}, their RMA {rma}",
        location=f"At {locked.supplier.name} ({locked.number})",
        holder=None,
    )
    record_transition(
        obj=locked,
        target=SupplierReturnStatus.SHIPPED,
        actor=actor,
        verb="supplier_return.ship",
        details={"supplier_rma_number": rma, "shipped_at": locked.shipped_at.isoformat()},
        update_fields=("status", "supplier_rma_number", "shipped_at"),
    )
    return locked


def _outcome_fields(
    *, outcome: str, replacement_serial: str, credit_amount: Decimal | None, note: str
) -> tuple[str, Decimal | None, str]:
    if outcome not in SupplierReturnOutcome.values:
        raise InvalidInput("outcome", f"must be one of {', '.join(SupplierReturnOutcome.values)}.")
    serial = (replacement_serial or "").strip()
    if outcome == SupplierReturnOutcome.REPLACEMENT and not serial:
        raise InvalidInput("replacement_serial", "a replacement names the serial the supplier sent.")
    if outcome != SupplierReturnOutcome.REPLACEMENT and serial:
        raise InvalidInput("replacement_serial", "only a replacement outcome names a serial.")
    if outcome == SupplierReturnOutcome.CREDIT:
        if credit_amount is None:
            raise InvalidInput("credit_amount", "a credit note names its amount.")
        if credit_amount <= 0:
            raise InvalidInput("credit_amount", "must be more than zero.")
    elif credit_amount is not None:
        raise InvalidInput("credit_amount", "only a credit outcome has an amount.")
    note = _text(note, field="note", required=outcome == SupplierReturnOutcome.REFUSED)
    return serial, credit_amount, note


@transaction.atomic
def supplier_return_close(
    *,
    supplier_return: SupplierReturn,
    actor: Actor,
    outcome: str,
    note: str = "",
    received_at: datetime | None = None,
    replacement_serial: str = "",
    lot_code: str = "",
    date_code: str = "",
    credit_amount: Decimal | None = None,
) -> SupplierReturn:
    """shipped → closed (a PM), with the supplier's answer.

    - replacement: the serial it sent is booked into stock at our warehouse (in the original's lot, or the
      lot `lot_code` on the same purchase order; a new lot needs its `date_code`). The failed component
      stays with the supplier: the ledger has no way back from `rma` but to stock or scrapped, and it is
      no longer ours, so it is scrapped, located at the supplier.
    - credit: `credit_amount` (in the purchase order's currency) is required; the component is scrapped
      the same way (the supplier kept it).
    - refused: the note (why) is required. The component comes back, still faulty: `rma` → `failed` is no
      move of the ledger and `in_stock` would offer a faulty part to the next build, so it is scrapped,
      in our warehouse, with the supplier's refusal as the reason.

    The claim it came from is not touched: it closes on its own (claim_close).
    """
    _require_pm(actor)
    locked = _lock(supplier_return)
    _require(locked, SupplierReturnStatus.CLOSED, "close")
    serial, credit_amount, note = _outcome_fields(
        outcome=outcome, replacement_serial=replacement_serial, credit_amount=credit_amount, note=note
    )
    locked.closed_at = _when(received_at, field="received_at", not_before=locked.shipped_at)
    supplier, old = locked.supplier, locked.component
    label = SupplierReturnOutcome(outcome).label.lower()
    if outcome == SupplierReturnOutcome.REPLACEMENT:
        try:
            locked.replacement = component_receive_replacement(
                original=old,
                serial=serial,
                actor=actor,
                lot_code=lot_code,
                date_code=date_code,
                reason=f"Replacement from {supplier.name} for {old.serial} on {locked.number}",
            )
        except InvalidInput as error:
            if error.field != "serial":
                raise
            raise InvalidInput("replacement_serial", error.field_message) from None
        where, why = f"Kept by {supplier.name}", f"replaced by {locked.replacement.serial}"
    elif outcome == SupplierReturnOutcome.CREDIT:
        where, why = f"Kept by {supplier.name}", f"credited {credit_amount}"
    else:
        where, why = "Warehouse", f"refused by {supplier.name}, the faulty part came back"
    component_move(
        components=[old],
        actor=actor,
        to_status=ComponentStatus.SCRAPPED,
        reason=(f"{locked.number} closed ({label}): {why}" + (f". {note}" if note else ""))[:500],
        location=f"{where} ({locked.number})",
        holder=None,
    )
    locked.outcome, locked.outcome_note, locked.credit_amount = outcome, note, credit_amount
    record_transition(
        obj=locked,
        target=SupplierReturnStatus.CLOSED,
        actor=actor,
        verb="supplier_return.close",
        note=note,
        details={
            "outcome": outcome,
            "closed_at": locked.closed_at.isoformat(),
            "replacement": locked.replacement.serial if locked.replacement is not None else None,
            "credit_amount": str(credit_amount) if credit_amount is not None else None,
        },
        update_fields=("status", "closed_at", "outcome", "outcome_note", "credit_amount", "replacement"),
    )
    return locked
