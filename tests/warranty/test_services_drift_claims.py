"""Claims drafted from drift (issue 25): a `fail` drift finding of a field check drafts one claim on the
card's warranty record and tells the PMs; a PM confirms or dismisses it with a reason; a claim whose
replacement is a GPU closes only after a passing post-repair run measured the new card."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.db import IntegrityError, transaction
from django.utils import timezone

from burnin.models import BurnInRun, Finding
from burnin.signals import drift_failed
from tests import factories
from tests.builds.bench_rig import DIMMS, GPUS_L1
from tests.factories import make_burnin_run_row
from tests.warranty.handover_rig import SPARE_GPU, recommission
from warranty.choices import ClaimStatus
from warranty.models import WarrantyClaim, WarrantyRecord
from warranty.services import (
    claim_approve,
    claim_close,
    claim_confirm,
    claim_dismiss,
    claim_draft_from_finding,
    claim_open,
    claim_ship_replacement,
)
from warranty.services.claims import post_repair_missing
from warranty.tasks import claim_draft_notify_task
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def field_run(server, *, days: int = 7, purpose: str = "field_check") -> BurnInRun:
    start = timezone.now() - timedelta(days=1) + timedelta(minutes=days)
    return make_burnin_run_row(
        server, started_at=start, ended_at=start + timedelta(minutes=15), result="fail", purpose=purpose
    )


def drift(run: BurnInRun, component, *, code: str = "drift_h2d", index: int = 0) -> Finding:
    """A `fail` drift finding on `component`'s card, shaped as burnin.analysis.drift words it."""
    return Finding.objects.create(
        run=run,
        code=code,
        severity="fail",
        subject=f"GPU {index}",
        gpu_index=index,
        message=f"H2D 13.9 GB/s, down 50 % from 27.7 GB/s at its baseline (serial {component.serial})",
        params={"serial": component.serial, "h2d_gbps": 13.9, "baseline_gbps": 27.7, "down_pct": 50},
        evidence={
            "serial": component.serial,
            "key": component.serial,
            "component_id": component.pk,
            "baseline_run": 41,
            "baseline": 27.7,
            "value": 13.9,
            "unit": "GB/s",
        },
        rule_version="drift-test",
    )


def send(run: BurnInRun, findings: list[Finding], capture) -> None:
    """The ingest's signal, in a transaction as the ingest sends it; the on-commit mails run."""
    with capture(execute=True), transaction.atomic():
        drift_failed.send(sender=BurnInRun, run=run, findings=findings, actor=None)


def record_of(world, serial: str) -> WarrantyRecord:
    return WarrantyRecord.objects.get(server=world.server, serial=serial)


def draft(handed, capture, serial: str = GPUS_L1[0]) -> WarrantyClaim:
    run = field_run(handed.server)
    send(run, [drift(run, handed.component(serial))], capture)
    return WarrantyClaim.objects.get(record=record_of(handed, serial))


def test_each_fail_drift_drafts_one_claim_on_its_cards_record_and_tells_the_pms(
    handed, django_capture_on_commit_callbacks
):
    pm_without_mail = factories.make_pm(email="")
    staff_not_pm = factories.UserFactory(is_staff=True)  # staff, not in the PM group: no PM
    run = field_run(handed.server)
    first = drift(run, handed.component(GPUS_L1[0]), index=0)
    second = drift(run, handed.component(GPUS_L1[1]), index=1)
    send(run, [first, second], django_capture_on_commit_callbacks)

    claims = {claim.record.serial: claim for claim in WarrantyClaim.objects.select_related("record")}
    assert set(claims) == {GPUS_L1[0], GPUS_L1[1]}
    claim = claims[GPUS_L1[0]]
    assert (claim.status, claim.finding, claim.opened_by) == (ClaimStatus.DRAFT, first, None)
    assert claims[GPUS_L1[1]].finding == second
    assert claim.customer == handed.t.customer_a
    # The description is the PM's English: the run, the card, the sentence, baseline against value.
    assert GPUS_L1[0] in claim.description and f"run {run.pk}" in claim.description
    assert "Baseline: 27.7 GB/s (run 41); now: 13.9 GB/s." in claim.description
    event = AuditEvent.objects.for_object(claim).get(verb="warranty.claim_draft")
    assert event.actor is None and event.after["finding"] == first.pk and event.after["status"] == "draft"
    # One mail per draft, to every PM with an address, on commit; the claim is marked as told.
    assert len(mail.outbox) == 2
    recipients = set(mail.outbox[0].to)
    assert handed.t.pm.email in recipients and "" not in recipients
    assert pm_without_mail.email == "" and staff_not_pm.email not in recipients
    assert handed.t.user_a.email not in recipients and handed.t.user_p.email not in recipients
    assert all(set(message.to) == recipients for message in mail.outbox)
    subjects = sorted(message.subject for message in mail.outbox)
    assert any(claim.number in subject and GPUS_L1[0] in subject for subject in subjects)
    assert "/admin/warranty/warrantyclaim/" in mail.outbox[0].body
    claim.refresh_from_db()
    assert claim.pm_notified_at is not None
    told = AuditEvent.objects.for_object(claim).filter(verb="warranty.claim_draft_notice")
    assert told.get().after == {"recipients": len(recipients)}
    # A re-delivered task tells nobody twice.
    assert claim_draft_notify_task(claim_id=claim.pk) is False
    assert len(mail.outbox) == 2 and told.count() == 1


def test_a_second_fail_on_the_same_card_drafts_nothing_more(handed, django_capture_on_commit_callbacks):
    run = field_run(handed.server)
    gpu = handed.component(GPUS_L1[0])
    link, h2d = drift(run, gpu, code="drift_link"), drift(run, gpu, code="drift_h2d")
    send(run, [link, h2d], django_capture_on_commit_callbacks)
    (claim,) = WarrantyClaim.objects.all()
    assert claim.finding == link and claim.status == ClaimStatus.DRAFT
    # A later field run while the draft waits for a PM: the same fault, still one claim.
    later = field_run(handed.server, days=14)
    send(later, [drift(later, gpu)], django_capture_on_commit_callbacks)
    assert WarrantyClaim.objects.count() == 1


def test_the_same_finding_sent_twice_adds_nothing(handed, django_capture_on_commit_callbacks):
    run = field_run(handed.server)
    finding = drift(run, handed.component(GPUS_L1[0]))
    send(run, [finding], django_capture_on_commit_callbacks)
    claim = WarrantyClaim.objects.get()
    # Even once the draft is dismissed (the record is free again), the finding never drafts a second.
    claim_dismiss(claim=claim, actor=handed.t.pm, note="Room at 35 °C that week; fixed.")
    counts = (WarrantyClaim.objects.count(), AuditEvent.objects.count(), len(mail.outbox))
    send(run, [finding], django_capture_on_commit_callbacks)
    assert (WarrantyClaim.objects.count(), AuditEvent.objects.count(), len(mail.outbox)) == counts
    assert claim_draft_from_finding(finding=finding, record=claim.record) is None
    # The database holds it too: one claim per finding.
    with pytest.raises(IntegrityError), transaction.atomic():
        WarrantyClaim.objects.create(
            number="RMA-X", record=claim.record, customer=claim.customer, description="x", finding=finding
        )


def test_no_claim_for_a_card_not_under_warranty(handed, django_capture_on_commit_callbacks):
    record = record_of(handed, GPUS_L1[0])
    WarrantyRecord.objects.filter(pk=record.pk).update(
        start_date=timezone.localdate() - timedelta(days=800),
        end_date=timezone.localdate() - timedelta(days=1),
    )
    run = field_run(handed.server)
    unknown = drift(run, handed.component(GPUS_L1[1]))
    unknown.evidence = {**unknown.evidence, "component_id": None}
    unknown.save(update_fields=["evidence"])
    send(run, [drift(run, handed.component(GPUS_L1[0])), unknown], django_capture_on_commit_callbacks)
    # The other customer A server was never handed over: no records, no warranty.
    other = make_burnin_run_row(
        handed.bench.other_server, started_at=timezone.now() - timedelta(hours=1), purpose="field_check"
    )
    send(other, [drift(other, handed.component(SPARE_GPU))], django_capture_on_commit_callbacks)
    assert not WarrantyClaim.objects.exists() and mail.outbox == []


def test_no_draft_while_a_claim_is_in_progress(handed, django_capture_on_commit_callbacks):
    record = record_of(handed, GPUS_L1[0])
    filed = claim_open(record=record, actor=handed.t.user_a, description="Xid 79 since Monday")
    run = field_run(handed.server)
    send(run, [drift(run, handed.component(GPUS_L1[0]))], django_capture_on_commit_callbacks)
    assert list(WarrantyClaim.objects.all()) == [filed] and mail.outbox == []
    # ...and a draft in progress refuses a claim the customer files (one at a time, drafts included).
    other = record_of(handed, GPUS_L1[1])
    send(run, [drift(run, handed.component(GPUS_L1[1]), index=1)], django_capture_on_commit_callbacks)
    with pytest.raises(RuleViolation, match="in progress"):
        claim_open(record=other, actor=handed.t.user_a, description="the same card")


def test_a_pm_confirms_a_draft_with_a_reason_and_it_goes_on_as_a_claim(
    handed, django_capture_on_commit_callbacks
):
    claim = draft(handed, django_capture_on_commit_callbacks)
    with pytest.raises(InvalidInput) as empty:
        claim_confirm(claim=claim, actor=handed.t.pm, note="  ")
    assert empty.value.field == "note"
    with pytest.raises(RuleViolation, match="Only project managers"):
        claim_confirm(claim=claim, actor=handed.t.user_a, note="mine")
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.DRAFT
    claim = claim_confirm(claim=claim, actor=handed.t.pm, note="x8 twice in a row: the riser")
    assert claim.status == ClaimStatus.OPEN and claim.decision_note == ""  # the reason is the PM's
    event = AuditEvent.objects.for_object(claim).get(verb="warranty.claim_confirm")
    assert (event.before, event.after["status"]) == ({"status": "draft"}, "open")
    assert event.note == "x8 twice in a row: the riser" and event.actor == handed.t.pm
    assert claim_approve(claim=claim, actor=handed.t.pm).status == ClaimStatus.APPROVED
    with pytest.raises(RuleViolation, match="draft"):
        claim_dismiss(claim=claim, actor=handed.t.pm, note="too late")


def test_a_pm_dismisses_a_draft_with_the_reason_the_customer_reads(
    handed, django_capture_on_commit_callbacks
):
    claim = draft(handed, django_capture_on_commit_callbacks)
    with pytest.raises(InvalidInput) as empty:
        claim_dismiss(claim=claim, actor=handed.t.pm, note="")
    assert empty.value.field == "note"
    with pytest.raises(RuleViolation, match="Only project managers"):
        claim_dismiss(claim=claim, actor=handed.t.user_a, note="no")
    claim = claim_dismiss(claim=claim, actor=handed.t.pm, note="The room ran at 35 °C; the card is fine.")
    assert claim.status == ClaimStatus.DISMISSED
    assert claim.decision_note == "The room ran at 35 °C; the card is fine."
    event = AuditEvent.objects.for_object(claim).get(verb="warranty.claim_dismiss")
    assert event.after["status"] == "dismissed" and event.actor == handed.t.pm
    # Dismissed is final, and frees the record for the customer's own claim.
    with pytest.raises(RuleViolation):
        claim_confirm(claim=claim, actor=handed.t.pm, note="changed my mind")
    assert claim_open(record=claim.record, actor=handed.t.user_a, description="still slow").status == "open"


def _shipped(handed, capture, serial: str, spare) -> WarrantyClaim:
    claim = draft(handed, capture, serial)
    claim_confirm(claim=claim, actor=handed.t.pm, note="confirmed")
    claim_approve(claim=claim, actor=handed.t.pm)
    return claim_ship_replacement(claim=claim, actor=handed.t.pm, component=spare)


def test_a_gpu_claim_closes_only_after_a_passing_post_repair_run_on_the_new_card(
    handed, django_capture_on_commit_callbacks
):
    spare = handed.component(SPARE_GPU)
    claim = _shipped(handed, django_capture_on_commit_callbacks, GPUS_L1[0], spare)
    with pytest.raises(RuleViolation) as refused:
        claim_close(claim=claim, actor=handed.t.pm)
    assert refused.value.code == "post_repair_missing"
    assert SPARE_GPU in refused.value.message and "none was uploaded" in refused.value.message
    assert "python -m probe burnin --purpose post_repair --duration 2h" in refused.value.message
    # A failing post-repair run, and a passing one that did not measure the new card, are not enough.
    failed = recommission(handed.server, spare, result="fail")
    with pytest.raises(
        RuleViolation, match=rf"the run uploaded {failed.created_at:%Y-%m-%d %H:%M} UTC is fail"
    ):
        claim_close(claim=claim, actor=handed.t.pm)
    other = recommission(handed.server, handed.component(GPUS_L1[1]))
    uploaded = f"{other.created_at:%Y-%m-%d %H:%M}"
    with pytest.raises(RuleViolation, match=rf"the run uploaded {uploaded} UTC did not measure {SPARE_GPU}"):
        claim_close(claim=claim, actor=handed.t.pm)
    # A passing one from before the replacement went in does not count either.
    early = recommission(handed.server, spare)
    BurnInRun.objects.filter(pk=early.pk).update(
        created_at=claim.replacement_record.created_at - timedelta(1)
    )
    assert post_repair_missing(claim=claim)
    # A field check is no re-commissioning.
    field = recommission(handed.server, spare)
    BurnInRun.objects.filter(pk=field.pk).update(purpose="field_check")
    assert post_repair_missing(claim=claim)
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.REPLACEMENT_SHIPPED
    recommission(handed.server, spare)
    assert post_repair_missing(claim=claim) == []
    assert claim_close(claim=claim, actor=handed.t.pm).status == ClaimStatus.CLOSED


def test_a_claim_on_another_part_closes_as_before(handed, django_capture_on_commit_callbacks):
    factories.receive_stock(
        part=handed.bench.dimm, deliver_to=handed.t.partner_p, lots={"L-DIMM-2": ["DIMM-SPARE"]}
    )
    record = record_of(handed, DIMMS[0])
    claim = claim_open(record=record, actor=handed.t.user_a, description="correctable ECC storm")
    claim_approve(claim=claim, actor=handed.t.pm)
    claim = claim_ship_replacement(claim=claim, actor=handed.t.pm, component=handed.component("DIMM-SPARE"))
    assert post_repair_missing(claim=claim) == []
    assert claim_close(claim=claim, actor=handed.t.pm).status == ClaimStatus.CLOSED
