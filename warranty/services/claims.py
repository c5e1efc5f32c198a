"""Warranty claims (RMA): open → approved or rejected → replacement_shipped → closed, with the replacement
installed through the builds assembly services and its record's lineage kept both ways.

A drift finding of a field check (burnin.signals.drift_failed, received in warranty/receivers.py) drafts a
claim on the affected card's record (`claim_draft_from_finding`), which a PM confirms (draft → open) or
dismisses with the reason the customer reads. A claim whose replacement was a GPU closes only once a
passing post-repair run measured the new card (`post_repair_missing`): the repair is re-commissioned."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from builds.models import Installation
from builds.services import server_swap_component
from burnin.choices import ReportPurpose, RunResult
from burnin.models import BurnInRun, Finding
from deployment.minimum_selectors import reverify_warnings
from inventory.choices import PartCategory
from inventory.models import Component
from warranty.choices import CLAIM_OPEN, CLAIM_TRANSITIONS, ClaimStatus, RecordKind
from warranty.models import WarrantyClaim, WarrantyRecord
from warranty.selectors import component_description
from warranty.services.attachments import (
    CheckedAttachment,
    Upload,
    attachment_check,
    attachment_store,
    clean_name,
)
from warranty.services.attribution import attribute_claim
from warranty.services.records import remaining_months
from werkbank.access import is_pm, pm_users
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.services import next_reference
from werkbank.tasks import enqueue_on_commit
from werkbank.transitions import record_transition, require_transition
from werkbank.types import Actor

logger = logging.getLogger("warranty.claims")

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
def claim_open(
    *, record: WarrantyRecord, actor: Actor, description: str, attachments: Sequence[Upload] = ()
) -> WarrantyClaim:
    """File a claim against a record the actor may see (the record's customer, or a PM), with the logs and
    photos it comes with (`attachments`, each checked before anything is saved: a bad one is a 400 naming
    the file, and no claim is filed; the same bytes twice are attached once).

    Refused (409) for the server's own record (claims name the failing component), a record already
    replaced (claim on its replacement), a record whose warranty has ended, and a record with a claim in
    progress (one at a time; the partial unique constraint backs it).
    """
    description = _text(description, field="description", required=True)
    checked = _checked_attachments(attachments)
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
    attribute_claim(claim=claim, actor=actor)  # a claim a person filed is a failure of its component
    for upload, check in checked:
        attachment_store(
            claim=claim, actor=actor, name=upload.name, checked=check, uploaded_bytes=len(upload.data)
        )
    return claim


def _checked_attachments(attachments: Sequence[Upload]) -> list[tuple[Upload, CheckedAttachment]]:
    """The files a claim is filed with, each checked by its content (a 400 naming the file), once each."""
    limit = settings.WERKBANK_MAX_CLAIM_ATTACHMENTS
    if len(attachments) > limit:
        rule = _("%(count)s files; a claim takes at most %(limit)s.")
        raise InvalidInput("attachments", rule % {"count": len(attachments), "limit": limit})
    checked: list[tuple[Upload, CheckedAttachment]] = []
    seen: set[str] = set()
    for upload in attachments:
        check = attachment_check(upload.data, field="attachments", which=f"{clean_name(upload.name)}: ")
        digest = hashlib.sha256(check.data).hexdigest()
        if digest not in seen:
            seen.add(digest)
            checked.append((upload, check))
    return checked


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
    # A listed machine whose components change is re-verified by its platform (Vast.ai deverifies it):
    # the PM is told (API `warnings`, admin message: `reverify_warnings`), and the warning is kept here.
    for warning in reverify_warnings(server=old.server):
        audit(
            actor=actor,
            verb="warranty.reverify_warning",
            obj=old.server,
            after={"claim": locked.number, "serial": new.serial},
            note=warning,
        )
    return locked


#: What a PM runs on the server to re-commission it after a GPU swap (probe/README.md): two hours of the
#: ordinary burn-in under load, compared with the baseline of the GPUs that stayed.
POST_REPAIR_COMMAND = (
    "python -m probe burnin --purpose post_repair --duration 2h --out post-repair.json && "
    "python -m probe upload post-repair.json --url <werkbank> --server {asset_tag}"
)


def post_repair_missing(*, claim: WarrantyClaim) -> list[str]:
    """What a claim whose replacement is a GPU still lacks before it may close: a post-repair run of the
    server, uploaded after the replacement went in, that passed (the ordinary rules and no drift against
    the GPUs that stayed) and measured the replacement card. Empty: nothing is missing (or the replaced
    part is no GPU, which closes as before)."""
    new = claim.replacement_record
    if new is None or new.component_id is None:
        return []
    component = Component.objects.select_related("part").get(pk=new.component_id)
    if component.part.category != PartCategory.GPU:
        return []
    since = new.created_at
    runs = BurnInRun.objects.filter(
        server_id=new.server_id, purpose=ReportPurpose.POST_REPAIR, created_at__gte=since
    )
    if runs.filter(result=RunResult.PASS, gpu_results__component_id=new.component_id).exists():
        return []
    # Say what the nearest attempt lacked: none uploaded, or the newest one failed or missed the card.
    latest = runs.order_by("-created_at", "-pk").first()
    wanted = (
        f"a passing post-repair run of {new.server.asset_tag} uploaded after {since:%Y-%m-%d %H:%M} UTC that "
        f"measured the replacement GPU {new.serial}"
    )
    if latest is None:
        found = "none was uploaded since"
    else:
        run = f"the run uploaded {latest.created_at:%Y-%m-%d %H:%M} UTC"
        found = (
            f"{run} is {latest.get_result_display().lower()}"
            if latest.result != RunResult.PASS
            else f"{run} did not measure {new.serial}"
        )
    return [f"{wanted} ({found})"]


@transaction.atomic
def claim_close(*, claim: WarrantyClaim, actor: Actor, note: str = "") -> WarrantyClaim:
    """replacement_shipped → closed (a PM): the customer has the replacement. After a GPU swap only once the
    repair is re-commissioned (`post_repair_missing`): the new card's passing post-repair run is also its
    baseline for the field checks to come (burnin.baselines)."""
    locked = _lock(claim)
    if locked.status == ClaimStatus.REPLACEMENT_SHIPPED:
        missing = post_repair_missing(claim=locked)
        if missing:
            asset_tag = locked.record.server.asset_tag
            raise RuleViolation(
                f"Claim {locked.number} cannot close: the replacement GPU is not re-commissioned; "
                f"{' '.join(missing)}. Run on {locked.record.server.hostname}: "
                f"`{POST_REPAIR_COMMAND.format(asset_tag=asset_tag)}`.",
                missing=missing,
                code="post_repair_missing",
            )
    return _move(
        claim=locked,
        actor=actor,
        target=ClaimStatus.CLOSED,
        verb="close",
        note=_text(note, field="note", required=False),
    )


# --- claims drafted from drift ------------------------------------------------------------------------------


def _figure(value: Any, unit: str | None) -> str | None:
    """A drift finding's baseline or value as words: a number with its unit, a link ("Gen4 x16"), a list
    of the findings' codes; None for what has no short form (a missing card's whole baseline)."""
    if isinstance(value, bool) or value is None or isinstance(value, dict):
        return None
    if isinstance(value, int | float):
        return f"{value:g} {unit}" if unit else f"{value:g}"
    if isinstance(value, list | tuple):
        return ", ".join(str(item) for item in value) or "none"
    return str(value)


def drift_description(finding: Finding) -> str:
    """The draft claim's description, in English (the PM's working language; the portal words the finding
    in the customer's language from its code and params): the run, the card, the finding's sentence, and
    the figure at the baseline against the new one."""
    run = finding.run
    evidence = finding.evidence or {}
    serial = evidence.get("serial") or evidence.get("key") or "?"
    sentence = finding.message.removeprefix(f"{finding.subject}: ")
    text = (
        f"Drift found by the {run.get_purpose_display().lower()} of {run.server.hostname} on "
        f"{run.started_at:%Y-%m-%d} (run {run.pk}): {finding.subject}, serial {serial}: {sentence}."
    )
    baseline = _figure(evidence.get("baseline"), evidence.get("unit"))
    value = _figure(evidence.get("value"), evidence.get("unit"))
    if baseline is not None or value is not None:
        text += (
            f" Baseline: {baseline or '—'} (run {evidence.get('baseline_run') or '?'}); now: {value or '—'}."
        )
    return text


@transaction.atomic
def claim_draft_from_finding(*, finding: Finding, record: WarrantyRecord) -> WarrantyClaim | None:
    """Draft a claim on `record` from a `fail` drift finding, once per finding: opened by nobody (the
    system), audited (`warranty.claim_draft`), and the PMs told by e-mail after the commit.

    Nothing is drafted (None, with a log line saying why) when the finding already has its claim (the
    one-to-one backs it: a signal delivered twice), when the record is no longer in force, or when the
    record has a claim in progress (one at a time: the second drift of the same card, in the same run or a
    later one, is the same fault until a PM has decided). The record's row lock makes two runs ingested at
    once wait for each other rather than collide on the constraint.
    """
    locked = WarrantyRecord.objects.select_for_update(of=("self",)).filter(pk=record.pk).first()
    if locked is None:
        raise UnknownObject("record", "no warranty record with this id.")
    existing = WarrantyClaim.objects.filter(finding=finding).values_list("number", flat=True).first()
    if existing is not None:
        logger.info("Finding %s already drafted claim %s; nothing new.", finding.pk, existing)
        return None
    if (
        locked.kind != RecordKind.COMPONENT
        or locked.replaced_at is not None
        or locked.end_date < timezone.localdate()
    ):
        logger.info(
            "Finding %s: record %s of %s is not in force; no claim.", finding.pk, locked.pk, locked.serial
        )
        return None
    in_progress = WarrantyClaim.objects.filter(record=locked, status__in=CLAIM_OPEN).first()
    if in_progress is not None:
        logger.info(
            "Finding %s (%s) on %s: claim %s is already in progress on this serial; no new claim.",
            finding.pk,
            finding.code,
            locked.serial,
            in_progress.number,
        )
        return None
    claim = WarrantyClaim.objects.create(
        number=next_reference(CLAIM_PREFIX, digits=CLAIM_DIGITS),
        record=locked,
        customer_id=locked.customer_id,
        status=ClaimStatus.DRAFT,
        description=drift_description(finding)[:5000],
        finding=finding,
        opened_by=None,
    )
    audit(
        actor=None,
        verb="warranty.claim_draft",
        obj=claim,
        after={
            "status": claim.status,
            "serial": locked.serial,
            "number": claim.number,
            "finding": finding.pk,
            "code": finding.code,
            "run": finding.run_id,
        },
        note=claim.description,
    )
    enqueue_on_commit("warranty.tasks.claim_draft_notify_task", claim_id=claim.pk)
    return claim


@transaction.atomic
def claim_draft_notice_send(*, claim_id: int) -> list[str] | None:
    """Tell the PMs (every PM user with an e-mail address) of a drafted claim, once; returns the recipients,
    or None when they were told already.

    As the expiry notices: the claim's row is locked, marked, and the mail sent in one transaction, so a
    failed send rolls the mark back for the task's retry, and a second delivery finds it marked."""
    claim = (
        WarrantyClaim.objects.select_for_update(of=("self",))
        .select_related("record__server", "customer", "finding__run")
        .get(pk=claim_id)
    )
    if claim.pm_notified_at is not None:
        return None
    recipients = sorted({email for email in pm_users().values_list("email", flat=True) if email})
    claim.pm_notified_at = timezone.now()
    claim.save(update_fields=["pm_notified_at"])
    audit(
        actor=None,
        verb="warranty.claim_draft_notice",
        obj=claim,
        after={"recipients": len(recipients)},
        note=", ".join(recipients),
    )
    if recipients:
        base = settings.WERKBANK_PUBLIC_URL.rstrip("/")
        context = {
            "claim": claim,
            "record": claim.record,
            "admin_url": base + reverse("admin:warranty_warrantyclaim_change", args=[claim.pk]),
        }
        with translation.override("en"):  # the PMs' working language
            subject = render_to_string("emails/claim_draft_subject.en.txt", context).strip()
            body = render_to_string("emails/claim_draft.en.txt", context)
        send_mail(subject, body, None, recipients)
    return recipients


def _require_pm(actor: Actor, verb: str) -> None:
    if not is_pm(actor):
        raise RuleViolation(
            f"Only project managers {verb} drafted claims.",
            missing=["a project manager's decision"],
            code="pm_only",
        )


@transaction.atomic
def claim_confirm(*, claim: WarrantyClaim, actor: Actor, note: str) -> WarrantyClaim:
    """draft → open (a PM): the drift is a fault of the card; the claim goes on as one the customer filed.
    The reason is the PM's (kept in the audit row); the customer reads the decision on approval."""
    _require_pm(actor, "confirm")
    reason = _text(note, field="note", required=True)
    return _move(claim=_lock(claim), actor=actor, target=ClaimStatus.OPEN, verb="confirm", note=reason)


@transaction.atomic
def claim_dismiss(*, claim: WarrantyClaim, actor: Actor, note: str) -> WarrantyClaim:
    """draft → dismissed (a PM), with the reason the customer reads (the decision note): the drift is no
    fault of the card (the room, the workload, a known cause)."""
    _require_pm(actor, "dismiss")
    return _decide(
        claim=claim, actor=actor, note=note, target=ClaimStatus.DISMISSED, verb="dismiss", required=True
    )
