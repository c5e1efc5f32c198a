"""Warranty claims (RMA): open → approved or rejected → replacement_shipped → closed, with the replacement
installed through the builds assembly services and its record's lineage kept both ways."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from builds.models import Installation
from builds.services import server_swap_component
from inventory.models import Component
from warranty.choices import CLAIM_OPEN, CLAIM_TRANSITIONS, ClaimStatus, RecordKind
from warranty.models import WarrantyClaim, WarrantyRecord
from warranty.selectors import component_description
from warranty.services.records import remaining_months
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.services import next_reference
from werkbank.transitions import record_transition, require_transition
from werkbank.types import Actor

#: Claim numbers: RMA-YYYY-NNNNN, counted per year.
CLAIM_PREFIX = "RMA"
CLAIM_DIGITS = 5


def _text(value: str, *, field: str, required: bool, max_length: int = 5000) -> str:
    value = (value or "").strip()
    if required and not value:
        raise InvalidInput(field, "must not be empty.")
    if len(value) > max_length:
        raise InvalidInput(field, f"has {len(value)} characters; at most {max_length}.")
    return value


@transaction.atomic
def claim_open(*, record: WarrantyRecord, actor: Actor, description: str) -> WarrantyClaim:
    """File a claim against a record the actor may see (the record's customer, or a PM).

    Refused (409) for the server's own record (claims name the failing component), a record already
    replaced (claim on its replacement), a record whose warranty has ended, and a record with a claim in
    progress (one at a time; the partial unique constraint backs it).
    """
    description = _text(description, field="description", required=True)
    locked = (
        WarrantyRecord.objects.visible_to(actor).select_for_update(of=("self",)).filter(pk=record.pk).first()
    )
    if locked is None:
        raise UnknownObject("record", "no warranty record with this id.")
    today = timezone.localdate()
    # The refusals are translated where they are raised: the portal shows them on the claim form in the
    # customer's language, while the API (werkbank/i18n.py activates English for /api/) answers English.
    serial = {"serial": locked.serial}
    missing = []
    if locked.kind == RecordKind.SERVER:
        # The server's own record is the machine's warranty as a whole; what fails and gets replaced is
        # a component, every one of which (the chassis included) has its own record.
        missing.append(
            _("%(serial)s is the server's own record; file the claim on the serial of the failing component.")
            % serial
        )
    if locked.replaced_at is not None:
        successor = WarrantyRecord.objects.filter(replaces=locked).values_list("serial", flat=True).first()
        missing.append(
            _("%(serial)s was replaced by %(successor)s; file the claim on the replacement.")
            % {**serial, "successor": successor}
        )
    if locked.end_date < today:
        missing.append(
            _("The warranty of %(serial)s ended on %(date)s.")
            % {**serial, "date": locked.end_date.isoformat()}
        )
    in_progress = WarrantyClaim.objects.filter(record=locked, status__in=CLAIM_OPEN).first()
    if in_progress is not None:
        missing.append(
            _("%(serial)s already has claim %(number)s in progress.")
            % {**serial, "number": in_progress.number}
        )
    if missing:
        raise RuleViolation(
            _("No claim can be opened on %(serial)s.") % serial + " " + " ".join(missing),
            missing=missing,
            code="claim_refused",
        )
    claim = WarrantyClaim.objects.create(
        number=next_reference(CLAIM_PREFIX, digits=CLAIM_DIGITS),
        record=locked,
        customer_id=locked.customer_id,
        description=description,
        opened_by=user_or_none(actor),
    )
    audit(
        actor=actor,
        verb="warranty.claim_open",
        obj=claim,
        after={"status": claim.status, "serial": locked.serial, "number": claim.number},
        note=description,
    )
    return claim


def _lock(claim: WarrantyClaim) -> WarrantyClaim:
    return WarrantyClaim.objects.select_for_update(of=("self",)).select_related("record").get(pk=claim.pk)


def _move(
    *, claim: WarrantyClaim, actor: Actor, target: str, verb: str, note: str, fields: tuple[str, ...] = ()
) -> WarrantyClaim:
    require_transition(
        transitions=CLAIM_TRANSITIONS,
        choices=ClaimStatus,
        current=claim.status,
        target=target,
        subject=f"Claim {claim.number}",
        verb=verb,
    )
    record_transition(
        obj=claim,
        target=target,
        actor=actor,
        verb=f"warranty.claim_{verb}",
        note=note,
        update_fields=("status", "updated_at", *fields),
    )
    return claim


def _decide(
    *, claim: WarrantyClaim, actor: Actor, note: str, target: str, verb: str, required: bool
) -> WarrantyClaim:
    locked = _lock(claim)
    locked.decision_note = _text(note, field="note", required=required)
    return _move(
        claim=locked,
        actor=actor,
        target=target,
        verb=verb,
        note=locked.decision_note,
        fields=("decision_note",),
    )


@transaction.atomic
def claim_approve(*, claim: WarrantyClaim, actor: Actor, note: str = "") -> WarrantyClaim:
    """open → approved (a PM): a replacement will be shipped. The note is shown to the customer."""
    return _decide(
        claim=claim, actor=actor, note=note, target=ClaimStatus.APPROVED, verb="approve", required=False
    )


@transaction.atomic
def claim_reject(*, claim: WarrantyClaim, actor: Actor, note: str) -> WarrantyClaim:
    """open → rejected (a PM), with the reason the customer reads."""
    return _decide(
        claim=claim, actor=actor, note=note, target=ClaimStatus.REJECTED, verb="reject", required=True
    )


@transaction.atomic
def claim_ship_replacement(
    *, claim: WarrantyClaim, actor: Actor, component: Component, note: str = ""
) -> WarrantyClaim:
    """approved → replacement_shipped (a PM): the replacement goes into the failed component's connector
    through `builds.services.server_swap_component` (logged on the server), and gets a record for the
    remaining term: the same end date as the replaced record, lineage kept both ways (`replaces` on the
    new record, `replaced_by` / `replaced_at` on the old)."""
    locked = _lock(claim)
    require_transition(
        transitions=CLAIM_TRANSITIONS,
        choices=ClaimStatus,
        current=locked.status,
        target=ClaimStatus.REPLACEMENT_SHIPPED,
        subject=f"Claim {locked.number}",
        verb="ship_replacement",
    )
    old = (
        WarrantyRecord.objects.select_for_update(of=("self",))
        .select_related("server")
        .get(pk=locked.record_id)
    )
    if old.kind != RecordKind.COMPONENT:
        raise RuleViolation(
            f"Claim {locked.number} is on the server {old.serial} itself; a replacement is shipped for a "
            "component. Open the claim on the failed component's serial.",
            missing=["a claim on a component's record"],
            code="not_a_component",
        )
    installation = (
        Installation.objects.active().filter(server=old.server, component_id=old.component_id).first()
    )
    if installation is None:
        raise RuleViolation(
            f"{old.serial} is no longer installed in {old.server.hostname}.",
            missing=[f"{old.serial} installed in {old.server.hostname}"],
            code="not_installed",
        )
    now = timezone.now()
    start = timezone.localdate(now)
    if start >= old.end_date:
        raise RuleViolation(
            f"The warranty of {old.serial} ends on {old.end_date.isoformat()}; no term remains for a "
            "replacement.",
            code="warranty_ended",
        )
    note = _text(note, field="note", required=False)
    swapped = server_swap_component(
        installation=installation,
        actor=actor,
        component=component,
        reason=f"Warranty claim {locked.number}" + (f": {note}" if note else ""),
    )
    new = WarrantyRecord.objects.create(
        kind=RecordKind.COMPONENT,
        server=old.server,
        component=swapped.component,
        order_id=old.order_id,
        customer_id=old.customer_id,
        serial=swapped.component.serial,
        description=component_description(swapped.component),
        start_date=start,
        term_months=remaining_months(start, old.end_date),
        end_date=old.end_date,
        replaces=old,
    )
    old.replaced_at = now
    old.save(update_fields=["replaced_at"])
    locked.replacement_record = new
    _move(
        claim=locked,
        actor=actor,
        target=ClaimStatus.REPLACEMENT_SHIPPED,
        verb="ship_replacement",
        note=note,
        fields=("replacement_record",),
    )
    audit(
        actor=actor,
        verb="warranty.record_replace",
        obj=new,
        before={"serial": old.serial, "record": old.pk},
        after={"serial": new.serial, "end_date": new.end_date.isoformat(), "term_months": new.term_months},
        note=locked.number,
    )
    return locked


@transaction.atomic
def claim_close(*, claim: WarrantyClaim, actor: Actor, note: str = "") -> WarrantyClaim:
    """replacement_shipped → closed (a PM): the customer has the replacement."""
    locked = _lock(claim)
    return _move(
        claim=locked,
        actor=actor,
        target=ClaimStatus.CLOSED,
        verb="close",
        note=_text(note, field="note", required=False),
    )
