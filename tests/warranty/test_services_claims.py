"""Claims (RMA): the full path with a replacement, and the refusals."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from builds.models import Installation
from inventory.choices import ComponentStatus
from tests.builds.bench_rig import GPUS_L1
from tests.warranty.handover_rig import SPARE_GPU, recommission
from warranty.choices import ClaimStatus, RecordKind
from warranty.models import WarrantyClaim, WarrantyRecord, WarrantyRegistration
from warranty.services import (
    claim_approve,
    claim_close,
    claim_open,
    claim_reject,
    claim_ship_replacement,
)
from warranty.services.records import remaining_months, warranty_end
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def gpu_record(world, serial=GPUS_L1[0]):
    return WarrantyRecord.objects.get(server=world.server, serial=serial)


def test_full_claim_path_with_replacement_keeps_lineage_both_ways(handed):
    record = gpu_record(handed)
    # Half-way through the term: the replacement gets the rest, not a new full term.
    start = timezone.localdate() - timedelta(days=400)
    WarrantyRecord.objects.filter(pk=record.pk).update(start_date=start, end_date=warranty_end(start, 36))
    record.refresh_from_db()

    claim = claim_open(record=record, actor=handed.t.user_a, description="GPU drops off the bus under load")
    assert claim.number.startswith(f"RMA-{timezone.now().year}-") and len(claim.number) == 14
    assert claim.status == ClaimStatus.OPEN and claim.customer == handed.t.customer_a
    claim = claim_approve(claim=claim, actor=handed.t.pm, note="Confirmed by the BMC log")
    assert claim.status == ClaimStatus.APPROVED
    spare = handed.component(SPARE_GPU)
    claim = claim_ship_replacement(claim=claim, actor=handed.t.pm, component=spare, note="DHL 1234")
    assert claim.status == ClaimStatus.REPLACEMENT_SHIPPED
    recommission(handed.server, spare)  # a GPU: the claim closes once the new card passed post-repair
    claim = claim_close(claim=claim, actor=handed.t.pm)
    assert claim.status == ClaimStatus.CLOSED

    record.refresh_from_db()
    new = claim.replacement_record
    assert new.replaces == record and record.replaced_by == new  # both ways
    assert record.replaced_at is not None
    assert new.serial == SPARE_GPU and new.end_date == record.end_date
    assert new.start_date == timezone.localdate()
    assert new.term_months == remaining_months(new.start_date, record.end_date) < record.term_months
    # The swap went through the assembly services: same connector, the old one out and failed.
    current = Installation.objects.get(
        server=handed.server, connector__name="PCIe-1", removed_at__isnull=True
    )
    assert current.component == spare
    old_install = Installation.objects.get(component=record.component)
    assert old_install.removed_at is not None and claim.number in old_install.removal_reason
    record.component.refresh_from_db()
    spare.refresh_from_db()
    assert record.component.status == ComponentStatus.FAILED and spare.status == ComponentStatus.INSTALLED
    assert WarrantyRegistration.objects.filter(component=spare, customer=handed.t.customer_a).exists()
    server_verbs = set(AuditEvent.objects.for_object(handed.server).values_list("verb", flat=True))
    assert "server.swap_component" in server_verbs
    claim_verbs = list(AuditEvent.objects.for_object(claim).order_by("pk").values_list("verb", flat=True))
    assert claim_verbs == [
        "warranty.claim_open",
        "warranty.claim_approve",
        "warranty.claim_ship_replacement",
        "warranty.claim_close",
    ]
    assert AuditEvent.objects.for_object(new).filter(verb="warranty.record_replace").exists()


def test_one_claim_in_progress_per_record(handed):
    record = gpu_record(handed)
    first = claim_open(record=record, actor=handed.t.user_a, description="fan noise")
    with pytest.raises(RuleViolation) as refused:
        claim_open(record=record, actor=handed.t.pm, description="again")
    assert first.number in refused.value.message
    claim_reject(claim=first, actor=handed.t.pm, note="Within specification")
    event = AuditEvent.objects.for_object(first).get(verb="warranty.claim_reject")
    assert event.note == "Within specification" and event.after["status"] == "rejected"
    assert claim_open(record=record, actor=handed.t.user_a, description="now it fails").status == "open"


def test_a_record_past_its_end_cannot_be_claimed(handed):
    record = gpu_record(handed)
    yesterday = timezone.localdate() - timedelta(days=1)
    WarrantyRecord.objects.filter(pk=record.pk).update(
        start_date=yesterday - timedelta(days=1100), end_date=yesterday
    )
    with pytest.raises(RuleViolation) as refused:
        claim_open(record=record, actor=handed.t.user_a, description="broken")
    assert refused.value.code == "claim_refused" and "ended on" in refused.value.missing[0]


def test_another_customer_or_a_partner_cannot_claim(handed):
    record = gpu_record(handed)
    for user in (handed.t.user_b, handed.t.user_p):
        with pytest.raises(UnknownObject):
            claim_open(record=record, actor=user, description="not mine")
    assert not WarrantyClaim.objects.exists()


def test_reject_needs_a_note_and_transitions_follow_the_map(handed):
    claim = claim_open(record=gpu_record(handed), actor=handed.t.user_a, description="dead")
    with pytest.raises(InvalidInput):
        claim_reject(claim=claim, actor=handed.t.pm, note=" ")
    with pytest.raises(RuleViolation):
        claim_close(claim=claim, actor=handed.t.pm)
    with pytest.raises(RuleViolation):
        claim_ship_replacement(claim=claim, actor=handed.t.pm, component=handed.component(SPARE_GPU))


def test_replacement_must_be_the_same_part_in_stock(handed):
    claim = claim_approve(
        claim=claim_open(record=gpu_record(handed), actor=handed.t.user_a, description="dead"),
        actor=handed.t.pm,
    )
    with pytest.raises(RuleViolation) as refused:
        claim_ship_replacement(claim=claim, actor=handed.t.pm, component=handed.component(GPUS_L1[1]))
    assert refused.value.code == "not_like_for_like" or refused.value.code == "component_unavailable"
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.APPROVED


def test_the_database_backs_one_claim_in_progress_per_record(handed):
    record = gpu_record(handed)
    claim_open(record=record, actor=handed.t.user_a, description="first")
    with pytest.raises(IntegrityError), transaction.atomic():
        WarrantyClaim.objects.create(
            number="RMA-2026-99999", record=record, customer=record.customer, description="behind the service"
        )


def test_claims_name_a_component_not_the_server_record(handed):
    own = WarrantyRecord.objects.get(server=handed.server, kind=RecordKind.SERVER)
    with pytest.raises(RuleViolation) as refused:
        claim_open(record=own, actor=handed.t.user_a, description="the machine is broken")
    assert "failing component" in refused.value.missing[0]
