"""Failure attribution (issue #29, item 1) through the real ingest, builds and warranty services: seed
003's two narrow links are the connectors' once the cards trained x16 elsewhere; a PM's correction is
audited; the bench and a person's claim make their own rows; the backfill is idempotent."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from builds.models import Connector, ConnectorBlacklist
from builds.services import connector_blacklist
from burnin.models import Finding
from inventory.models import Component
from tests import factories
from tests.builds.bench_rig import GPUS_L1
from tests.burnin.ingest_rig import encode, seed003_bytes
from tests.warranty.attribution_rig import (
    FREE,
    NARROW,
    fail_burnin,
    healthy_report,
    post,
    rework,
    seed003_rig,
)
from warranty.choices import FailureCause, FailureStage
from warranty.models import Attribution, WarrantyRecord
from warranty.services import (
    attribute_claim,
    attribute_run,
    attribution_confirm,
    claim_draft_from_finding,
    claim_open,
)
from werkbank.errors import InvalidInput, UnknownObject
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

SERIALS = [gpu["serial"] for gpu in json.loads(seed003_bytes())["gpus"]]


@pytest.fixture
def rig(tenants):
    return seed003_rig(tenants)


def _link_rows(run) -> list[Attribution]:
    return list(
        Attribution.objects.filter(finding__run=run).select_related("finding", "component", "connector")
    )


def _verbs(obj) -> list[str]:
    return list(AuditEvent.objects.for_object(obj).order_by("pk").values_list("verb", flat=True))


def test_the_first_run_blames_the_connectors_with_no_move_yet(rig, django_capture_on_commit_callbacks):
    run = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    rows = _link_rows(run)
    # One row per narrow card (its h2d outlier is the same failure); the run's process findings
    # (too short, the interrupted stage) and the warnings (the correlated ECC pattern) get none.
    assert sorted((r.finding.code, r.finding.gpu_index) for r in rows) == [
        ("pcie_link_downtrained", 2),
        ("pcie_link_downtrained", 4),
    ]
    for row in rows:
        index = row.finding.gpu_index
        assert row.stage == FailureStage.BURN_IN and row.server == rig.server
        assert row.cause == row.proposed_cause == FailureCause.CONNECTOR
        assert row.component.serial == SERIALS[index] and row.connector.name == NARROW[index]
        assert "no move yet to tell" in row.proposed_reason and NARROW[index] in row.proposed_reason
        assert row.confirmed_at is None and row.occurred_at == run.started_at
        assert _verbs(row) == []  # the ingest's own row (burnin.ingest) covers its making
    assert not Attribution.objects.filter(finding__code__in=["burnin_too_short", "stage_incomplete"]).exists()


def test_a_move_that_trains_x16_keeps_it_on_the_connector(rig, django_capture_on_commit_callbacks):
    first = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    rework(rig, dict(zip(NARROW, FREE, strict=True)))
    second = post(rig, django_capture_on_commit_callbacks, healthy_report())
    assert not Finding.objects.filter(run=second, code="pcie_link_downtrained").exists()
    assert _link_rows(second) == []

    for row in _link_rows(first):
        index = row.finding.gpu_index
        assert row.cause == FailureCause.CONNECTOR and row.connector.name == NARROW[index]  # not the card
        to = FREE[list(NARROW).index(index)]
        assert f"trained at full width in connector {to}" in row.proposed_reason
        assert _verbs(row) == ["attribution.repropose"]
    # Against the connector positions of the chassis layout, not the GPUs' lot.
    assert not Attribution.objects.filter(cause=FailureCause.COMPONENT).exists()


def test_the_same_card_narrow_in_another_connector_is_the_card(rig, django_capture_on_commit_callbacks):
    first = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    rework(rig, {2: "PCIe-7"})
    # The card of GPU 2 trains x8 in its new bay too (the same narrow report, posted again as another).
    narrow_again = json.loads(seed003_bytes())
    narrow_again["probe"]["argv"].append("--again")
    second = post(rig, django_capture_on_commit_callbacks, encode(narrow_again))
    (new,) = [r for r in _link_rows(second) if r.finding.gpu_index == 2]
    assert new.connector.name == "PCIe-7" and new.cause == FailureCause.COMPONENT
    assert "failed its link in connector PCIe-3 too" in new.proposed_reason
    (old,) = [r for r in _link_rows(first) if r.finding.gpu_index == 2]
    assert old.cause == FailureCause.COMPONENT and _verbs(old)[-1] == "attribution.repropose"
    # GPU 4 never moved: still the connector's with no evidence either way.
    (other,) = [r for r in _link_rows(first) if r.finding.gpu_index == 4]
    assert other.cause == FailureCause.CONNECTOR


def test_a_confirmed_row_is_not_proposed_again(rig, django_capture_on_commit_callbacks):
    first = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    row = next(r for r in _link_rows(first) if r.finding.gpu_index == 2)
    attribution_confirm(attribution=row, actor=rig.t.pm, cause=FailureCause.CONNECTOR)
    rework(rig, {2: "PCIe-7"})
    post(rig, django_capture_on_commit_callbacks, healthy_report())
    row.refresh_from_db()
    assert "no move yet" in row.proposed_reason and row.confirmed_by == rig.t.pm
    assert _verbs(row) == ["attribution.confirm"]


def test_a_pm_corrects_with_a_note_and_the_counts_move(rig, django_capture_on_commit_callbacks):
    run = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    row = next(r for r in _link_rows(run) if r.finding.gpu_index == 2)
    with pytest.raises(InvalidInput) as refused:
        attribution_confirm(attribution=row, actor=rig.t.pm, cause=FailureCause.COMPONENT)
    assert refused.value.field == "note"
    row.refresh_from_db()
    assert row.cause == FailureCause.CONNECTOR and row.confirmed_at is None

    corrected = attribution_confirm(
        attribution=row, actor=rig.t.pm, cause=FailureCause.COMPONENT, note="Card fails on the test rig too."
    )
    assert corrected.cause == FailureCause.COMPONENT and corrected.proposed_cause == FailureCause.CONNECTOR
    assert corrected.confirmed_by == rig.t.pm and corrected.note == "Card fails on the test rig too."
    event = AuditEvent.objects.for_object(row).get(verb="attribution.correct")
    assert event.before["cause"] == "connector" and event.after["cause"] == "component"
    assert event.note == "Card fails on the test rig too."
    assert Attribution.objects.filter(cause=FailureCause.COMPONENT, component__serial=SERIALS[2]).count() == 1


def test_what_a_correction_names_must_belong_to_the_server(rig, django_capture_on_commit_callbacks):
    run = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    row = next(r for r in _link_rows(run) if r.finding.gpu_index == 2)
    foreign = Connector.objects.create(server=rig.server_q, name="PCIe-1", kind="pcie_slot", position=1)
    with pytest.raises(InvalidInput) as refused:
        attribution_confirm(attribution=row, actor=rig.t.pm, cause="connector", connector=foreign, note="x")
    assert refused.value.field == "connector"
    part = Component.objects.get(serial=SERIALS[0]).part
    factories.receive_stock(part=part, deliver_to=rig.t.partner_p, lots={"L-X": ["NEVER-IN-IT"]})
    stranger = Component.objects.get(serial="NEVER-IN-IT")
    with pytest.raises(InvalidInput) as refused:
        attribution_confirm(attribution=row, actor=rig.t.pm, cause="component", component=stranger, note="x")
    assert refused.value.field == "component"
    with pytest.raises(InvalidInput) as refused:
        attribution_confirm(attribution=row, actor=rig.t.pm, cause="blame", note="x")
    assert refused.value.field == "cause"


def test_only_pms_confirm(rig, django_capture_on_commit_callbacks):
    run = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    row = _link_rows(run)[0]
    for user in (rig.t.user_p, rig.t.user_a):
        with pytest.raises(UnknownObject):
            attribution_confirm(attribution=row, actor=user, cause=row.cause)
    row.refresh_from_db()
    assert row.confirmed_at is None


def test_blacklisting_a_connector_on_the_bench(rig, django_capture_on_commit_callbacks):
    post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    fail_burnin(rig)
    connector = Connector.objects.get(server=rig.server, name="PCIe-3")
    blacklist = connector_blacklist(
        connector=connector,
        actor=rig.t.user_p,
        reason="x8 on every card",
        target_connector_name="PCIe-7",
    )
    row = Attribution.objects.get(blacklist=blacklist)
    assert row.stage == FailureStage.BENCH and row.cause == FailureCause.CONNECTOR
    assert row.connector == connector and row.component.serial == SERIALS[2]
    assert "PCIe-3 blacklisted on the bench: x8 on every card" in row.proposed_reason
    assert _verbs(row) == []  # server.blacklist_connector is the event's row


def test_the_backfill_is_idempotent(rig, django_capture_on_commit_callbacks):
    run = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    fail_burnin(rig)
    connector = Connector.objects.get(server=rig.server, name="PCIe-8")
    blacklist = connector_blacklist(connector=connector, actor=rig.t.pm, reason="bent pin")
    before = set(Attribution.objects.values_list("pk", flat=True))
    Attribution.objects.all().delete()
    out = StringIO()
    call_command("attribute_failures", stdout=out)
    assert "2 from runs" in out.getvalue() and "1 from blacklistings" in out.getvalue()
    assert Attribution.objects.count() == len(before) == 3
    assert Attribution.objects.get(blacklist=blacklist).cause == FailureCause.CONNECTOR
    connectors = sorted(
        Attribution.objects.filter(finding__run=run).values_list("connector__name", flat=True)
    )
    assert connectors == ["PCIe-3", "PCIe-5"]  # the installations at the time the run was stored
    again = StringIO()
    call_command("attribute_failures", stdout=again)
    assert "0 from runs, 0 from claims, 0 from blacklistings" in again.getvalue()
    assert Attribution.objects.count() == 3
    # The service itself made nothing new either.
    assert attribute_run(run=run, findings=list(run.findings.all()), actor=None, live=False) == []
    assert ConnectorBlacklist.objects.count() == 1


def test_a_claim_a_person_filed_is_its_components(handed):
    record = WarrantyRecord.objects.get(server=handed.server, serial=GPUS_L1[0])
    claim = claim_open(record=record, actor=handed.t.user_a, description="drops off the bus")
    row = Attribution.objects.get(claim=claim)
    assert row.stage == FailureStage.CLAIM and row.cause == row.proposed_cause == FailureCause.COMPONENT
    assert row.component.serial == GPUS_L1[0] and row.connector.name == "PCIe-1"
    assert row.server == handed.server and row.occurred_at == claim.created_at
    assert claim.number in row.proposed_reason
    assert not AuditEvent.objects.for_object(row).exists()  # warranty.claim_open is the event's row
    assert attribute_claim(claim=claim, actor=handed.t.pm) == row  # once


def test_a_drafted_claim_is_its_findings_failure_not_a_second_one(handed):
    now = timezone.now()
    run = factories.make_burnin_run_row(
        handed.server, started_at=now - timedelta(hours=1), ended_at=now, result="fail", purpose="field_check"
    )
    finding = Finding.objects.create(
        run=run,
        code="drift_link",
        severity="fail",
        subject="GPU 0",
        gpu_index=0,
        message="x8",
        rule_version="1",
    )
    record = WarrantyRecord.objects.get(server=handed.server, serial=GPUS_L1[0])
    draft = claim_draft_from_finding(finding=finding, record=record)
    assert draft is not None and attribute_claim(claim=draft, actor=handed.t.pm) is None
    assert not Attribution.objects.filter(claim=draft).exists()


def test_the_admin_confirms_and_corrects_through_the_service(client, rig, django_capture_on_commit_callbacks):
    run = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    row = next(r for r in _link_rows(run) if r.finding.gpu_index == 2)
    other = next(r for r in _link_rows(run) if r.finding.gpu_index == 4)
    assert client.login(username="pm", password=factories.PASSWORD)
    listing = client.get("/admin/warranty/attribution/?cause=connector&stage=burn_in")
    assert listing.status_code == 200 and "pcie_link_downtrained" in listing.content.decode()
    url = f"/admin/warranty/attribution/{row.pk}/change/"
    page = client.get(url).content.decode()
    assert 'name="decided_cause"' in page and row.proposed_reason in page

    # Another cause without a note: a message, nothing written.
    assert client.post(url, {"decided_cause": "component"}).status_code == 302
    row.refresh_from_db()
    assert row.cause == FailureCause.CONNECTOR and row.confirmed_at is None
    component = Component.objects.get(serial=SERIALS[2])
    answer = client.post(
        url, {"decided_cause": "component", "blamed_component": component.pk, "decision_note": "Card is bad."}
    )
    assert answer.status_code == 302
    row.refresh_from_db()
    assert row.cause == FailureCause.COMPONENT and row.component == component and row.note == "Card is bad."
    assert _verbs(row) == ["attribution.correct"]

    url = f"/admin/warranty/attribution/{other.pk}/change/"
    assert client.post(url, {"decided_cause": "connector"}).status_code == 302
    other.refresh_from_db()
    assert other.confirmed_by == rig.t.pm and _verbs(other) == ["attribution.confirm"]
    assert client.get("/admin/warranty/attribution/add/").status_code == 403
