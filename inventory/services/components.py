"""Components: the status, location and holder of serials change here only, with a ledger row each."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, QuerySet

from inventory.choices import COMPONENT_TRANSITIONS, ComponentStatus
from inventory.models import BatchLot, Component, StockMovement
from inventory.packing import serial_problem
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import Organization
from werkbank.types import Actor


def serials_seen_by(actor: Actor) -> QuerySet:
    """The components whose whereabouts a refusal may name to `actor`: those it may see. Without an actor
    (a command run by an operator on the server), all of them."""
    if actor is None:
        return Component.objects.all()
    return Component.objects.visible_to(actor)


@transaction.atomic
def component_move(
    *,
    components: Iterable[Component],
    actor: Actor,
    to_status: str,
    reason: str,
    location: str | None = None,
    holder: Organization | Literal[False] | None = False,
) -> list[Component]:
    """Change the status (and optionally the location and holder) of components, with one ledger row each.

    The apps above call this; nobody sets a component's status directly. `holder=False` keeps the holder.
    """
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "a reason is required for every stock movement.")
    ids = [component.pk for component in components]
    locked = list(Component.objects.select_for_update().filter(pk__in=ids).order_by("pk"))
    if len(locked) != len(set(ids)):
        raise RuleViolation("Some components no longer exist.", code="component_missing")
    refused = [c for c in locked if to_status not in COMPONENT_TRANSITIONS[c.status]]
    if refused:
        raise RuleViolation(
            f"{len(refused)} component(s) cannot become {ComponentStatus(to_status).label.lower()}: "
            + ", ".join(f"{c.serial} is {c.get_status_display().lower()}" for c in refused[:10]),
            missing=[f"{c.serial}: a status from which {to_status} is allowed" for c in refused],
            code="invalid_transition",
        )
    movements = []
    for component in locked:
        movements.append(
            StockMovement(
                component=component,
                actor=user_or_none(actor),
                from_status=component.status,
                to_status=to_status,
                from_location=component.location,
                to_location=location or component.location,
                reason=reason,
            )
        )
        component.status = to_status
        if location is not None:
            component.location = location
        if holder is not False:
            component.holder = holder
    Component.objects.bulk_update(locked, ["status", "location", "holder"])
    StockMovement.objects.bulk_create(movements)
    return locked


@transaction.atomic
def component_receive_replacement(
    *,
    original: Component,
    serial: str,
    actor: Actor,
    lot_code: str = "",
    date_code: str = "",
    reason: str,
) -> Component:
    """Book the replacement a supplier sent for `original` into stock at our warehouse (holder none).

    The new serial is of the original's part and stays on the original's purchase order line, without
    counting as received against it (`quantity_received` counts what was ordered; a replacement was not).
    It joins the original's lot when `lot_code` is empty or the original's, else a lot of that code on the
    original's purchase order (a new one needs the maker's date code; its country of origin is the original
    lot's). The serial is unique per manufacturer in its normal form (inventory.serials): a serial on record
    is refused as receiving refuses it (400 `serial`). One ledger row, and the audit row
    `component.receive_replacement` on the new component.
    """
    # receiving imports this module: its refusal wording and the warehouse's name are read at call time.
    from inventory.services.receiving import _known_message, _unusable_message, warehouse_location

    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "a reason is required for every stock movement.")
    serial = (serial or "").strip()
    problem = serial_problem(serial)
    if problem is not None:
        raise InvalidInput("serial", f"the serial {problem}.")
    lot_code, date_code = (lot_code or "").strip(), (date_code or "").strip()
    old = Component.objects.select_related("part", "lot__purchase_order", "po_line").get(pk=original.pk)
    part, old_lot = old.part, old.lot

    on_record = (
        Component.objects.with_serial(serial)
        .filter(manufacturer=part.manufacturer)
        .annotate(seen=Exists(serials_seen_by(actor).filter(pk=OuterRef("pk"))))
        .values_list("serial", "lot__lot_code", "seen")
        .first()
    )
    if on_record is not None:
        known, known_lot, seen = on_record
        raise InvalidInput(
            "serial", _known_message(serial, known, known_lot) if seen else _unusable_message(serial)
        )

    if not lot_code or lot_code == old_lot.lot_code:
        lot = old_lot
    else:
        if not date_code:
            raise InvalidInput("date_code", f"the manufacturer's date code of lot {lot_code} is required.")
        lot, created = BatchLot.objects.get_or_create(
            purchase_order=old_lot.purchase_order,
            part=part,
            lot_code=lot_code,
            defaults={
                "supplier": old_lot.supplier,
                "date_code": date_code,
                "country_of_origin": old_lot.country_of_origin,
            },
        )
        if not created and lot.date_code != date_code:
            raise RuleViolation(
                f"Lot {lot_code} of {part.mpn} is on record on {old_lot.purchase_order.number} with date "
                f"code {lot.date_code}; this replacement says {date_code}.",
                missing=["the lot's recorded date code"],
                code="lot_mismatch",
            )
    location = warehouse_location(None)
    try:
        with transaction.atomic():
            new = Component.objects.create(
                part=part,
                manufacturer=part.manufacturer,
                serial=serial,
                lot=lot,
                po_line=old.po_line,
                status=ComponentStatus.IN_STOCK,
                location=location,
                holder=None,
            )
    except IntegrityError:
        # Booked by someone else since the check above: the same answer as a serial on record before.
        raise InvalidInput("serial", _unusable_message(serial)) from None
    StockMovement.objects.create(
        component=new,
        actor=user_or_none(actor),
        to_status=ComponentStatus.IN_STOCK,
        to_location=location,
        reason=reason[:500],
    )
    audit(
        actor=actor,
        verb="component.receive_replacement",
        obj=new,
        before={"replaces": old.serial, "component": old.pk},
        after={"serial": new.serial, "part": part.mpn, "lot": lot.lot_code, "location": location},
        note=reason,
    )
    return new
