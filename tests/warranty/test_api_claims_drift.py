"""Claims drafted from drift through the API, the admin and the portal, and the whole path from a field
check's upload to a re-commissioned repair (issue 25: "the claim cannot close before a passing post-repair
run on the new serial; afterwards the new GPU's baseline is that run")."""

from __future__ import annotations

import pytest
from django.core import mail

from builds.models import Installation
from burnin.baselines import baselines
from burnin.hardware import gpu_key
from burnin.models import BurnInRun, Finding, GpuResult
from tests import factories
from tests.builds.bench_rig import GPUS_L1
from tests.burnin.field_rig import field_report, handed_over_rig
from tests.burnin.ingest_rig import encode, post_report
from tests.tenants_rig import api_client
from tests.warranty.test_services_drift_claims import draft, drift, field_run, send
from warranty.choices import ClaimStatus
from warranty.models import WarrantyClaim, WarrantyRecord
from warranty.services import claim_dismiss, warranty_records_create
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def url(claim: WarrantyClaim, action: str = "") -> str:
    return f"/api/v1/warranty/claims/{claim.pk}/" + (f"{action}/" if action else "")


def test_a_pm_confirms_a_draft_through_the_api_and_the_customer_may_not(
    handed, django_capture_on_commit_callbacks
):
    claim = draft(handed, django_capture_on_commit_callbacks)
    customer, pm = api_client(handed.t.user_a), api_client(handed.t.pm)
    shown = customer.get(url(claim)).json()
    assert (shown["status"], shown["finding"]) == ("draft", claim.finding_id)
    events = AuditEvent.objects.count()
    for action in ("confirm", "dismiss"):
        # The customer sees the claim: told why (403); whoever does not see it: not found.
        assert customer.post(url(claim, action), {"note": "mine"}, format="json").status_code == 403
        for stranger in (handed.t.user_b, handed.t.user_p, handed.t.outsider):
            response = api_client(stranger).post(url(claim, action), {"note": "x"}, format="json")
            assert response.status_code == 404
        empty = pm.post(url(claim, action), {"note": ""}, format="json")
        assert empty.status_code == 400 and "note" in empty.json()
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.DRAFT and AuditEvent.objects.count() == events
    confirmed = pm.post(url(claim, "confirm"), {"note": "x8 at two field checks"}, format="json")
    assert confirmed.status_code == 200, confirmed.json()
    assert confirmed.json()["status"] == "open"
    assert AuditEvent.objects.for_object(claim).filter(verb="warranty.claim_confirm").count() == 1
    again = pm.post(url(claim, "dismiss"), {"note": "no"}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "invalid_transition"


def test_a_pm_dismisses_a_draft_through_the_api(handed, django_capture_on_commit_callbacks):
    claim = draft(handed, django_capture_on_commit_callbacks)
    response = api_client(handed.t.pm).post(
        url(claim, "dismiss"), {"note": "The rack's inlet ran at 35 °C."}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["status"], body["decision_note"]) == ("dismissed", "The rack's inlet ran at 35 °C.")
    assert AuditEvent.objects.for_object(claim).filter(verb="warranty.claim_dismiss").exists()


def test_the_schema_declares_the_decisions_own_input(client):
    schema = client.get("/api/schema/", {"format": "json"}).json()
    for action in ("confirm", "dismiss"):
        operation = schema["paths"][f"/api/v1/warranty/claims/{{id}}/{action}/"]["post"]
        body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert body == "#/components/schemas/ClaimDraftDecisionRequest"
    decision = schema["components"]["schemas"]["ClaimDraftDecisionRequest"]
    assert set(decision["properties"]) == {"note"} and decision["required"] == ["note"]


def login(client, user):
    assert client.login(username=user.username, password=factories.PASSWORD)
    return client


def test_the_portal_shows_a_drift_draft_and_a_dismissal_in_german(
    client, handed, django_capture_on_commit_callbacks
):
    claim = draft(handed, django_capture_on_commit_callbacks)
    login(client, handed.t.user_a)
    client.cookies["django_language"] = "de"
    page = client.get(f"/portal/warranty/records/{claim.record_id}/")
    assert page.status_code == 200
    body = page.content.decode()
    assert claim.number in body and "Entwurf" in body
    # The finding's sentence in German, with the figures in German numbers.
    german = "H2D 13,9 GB/s, 50 % weniger als die 27,7 GB/s beim Referenzlauf"
    assert german in body, body[body.find(claim.number) : body.find(claim.number) + 1500]
    assert "Beim Referenzlauf: 27,7 GB/s" in body and "Jetzt: 13,9 GB/s" in body
    assert "verglichen mit dem Referenzlauf der Karte" in body
    assert claim.description not in body  # the PM's English is not the customer's page
    assert "Garantiefall melden" not in body  # a claim is in progress: no second one

    claim_dismiss(claim=claim, actor=handed.t.pm, note="Die Raumtemperatur lag bei 35 °C.")
    body = client.get(f"/portal/warranty/records/{claim.record_id}/").content.decode()
    assert "Verworfen" in body and "Die Raumtemperatur lag bei 35 °C." in body
    assert "Garantiefall melden" in body  # dismissed: the record is free again


def test_the_admin_confirms_drafts_with_a_written_reason(client, handed, django_capture_on_commit_callbacks):
    claim = draft(handed, django_capture_on_commit_callbacks)
    login(client, handed.t.pm)
    changelist = "/admin/warranty/warrantyclaim/"
    asked = client.post(changelist, {"action": "confirm", "_selected_action": [claim.pk]})
    assert asked.status_code == 200 and 'name="decision_reason"' in asked.content.decode()
    missing = client.post(
        changelist,
        {"action": "confirm", "_selected_action": [claim.pk], "apply": "1", "decision_reason": " "},
    )
    assert "A written reason is required." in missing.content.decode()
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.DRAFT
    done = client.post(
        changelist,
        {"action": "confirm", "_selected_action": [claim.pk], "apply": "1", "decision_reason": "riser"},
    )
    assert done.status_code == 302
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.OPEN
    assert AuditEvent.objects.for_object(claim).get(verb="warranty.claim_confirm").note == "riser"
    # The change page offers the dismissal of a draft, and only what the map allows.
    other = draft(handed, django_capture_on_commit_callbacks, GPUS_L1[1])
    page = client.get(f"/admin/warranty/warrantyclaim/{other.pk}/change/").content.decode()
    assert 'value="dismiss"' in page and 'value="confirm"' in page and 'value="approve"' not in page
    client.post(
        f"/admin/warranty/warrantyclaim/{other.pk}/change/",
        {"decision": "dismiss", "note": "the room", "replacement_serial": ""},
    )
    other.refresh_from_db()
    assert (other.status, other.decision_note) == (ClaimStatus.DISMISSED, "the room")


def test_a_finding_of_a_served_run_is_evidence_the_customer_sees(handed, django_capture_on_commit_callbacks):
    """The claim's finding is on the customer's own server's run: the API gives its id to the customer,
    and nobody else sees the claim."""
    run = field_run(handed.server)
    finding = drift(run, handed.component(GPUS_L1[0]))
    send(run, [finding], django_capture_on_commit_callbacks)
    rows = api_client(handed.t.user_a).get("/api/v1/warranty/claims/").json()["results"]
    assert [(row["finding"], row["status"]) for row in rows] == [(finding.pk, "draft")]
    assert api_client(handed.t.user_b).get("/api/v1/warranty/claims/").json()["results"] == []


# --- the whole path through the probe's upload ---------------------------------------------------------


def _post(capture, user, rig, report):
    with capture(execute=True):
        return post_report(user, rig.url(), encode(report))


def test_from_a_field_checks_drift_to_a_re_commissioned_repair(tenants, django_capture_on_commit_callbacks):
    capture = django_capture_on_commit_callbacks
    rig = handed_over_rig(tenants, capture)
    with capture(execute=True):
        warranty_records_create(server=rig.server, actor=None)
    mail.outbox.clear()

    # A healthy field check: no claim.
    assert _post(capture, tenants.user_a, rig, field_report(rig.server)).status_code == 201
    assert not WarrantyClaim.objects.exists()

    # GPU 3 at x8: two drift fails on that card (link and H2D), one draft claim on its record.
    report = field_report(rig.server, days=14, gpus={3: {"h2d": 13.9, "width": 8}})
    response = _post(capture, tenants.user_a, rig, report)
    assert response.status_code == 201, response.content
    serial = report["gpus"][3]["serial"]
    (claim,) = WarrantyClaim.objects.select_related("record", "finding")
    assert claim.status == ClaimStatus.DRAFT and claim.record.serial == serial
    assert claim.finding.run_id == response.json()["id"] and claim.finding.code.startswith("drift_")
    assert claim.record == WarrantyRecord.objects.get(server=rig.server, serial=serial)
    assert len(mail.outbox) == 1 and claim.number in mail.outbox[0].subject
    # The same report again: nothing new.
    counts = (WarrantyClaim.objects.count(), AuditEvent.objects.count(), len(mail.outbox))
    assert _post(capture, tenants.user_a, rig, report).status_code == 200
    assert (WarrantyClaim.objects.count(), AuditEvent.objects.count(), len(mail.outbox)) == counts

    # The PM confirms and approves it, and ships a new card of the same part.
    pm = api_client(tenants.pm)
    assert pm.post(url(claim, "confirm"), {"note": "x8 at the field check"}, format="json").status_code == 200
    assert (
        pm.post(url(claim, "approve"), {"note": "A new card is on its way."}, format="json").status_code
        == 200
    )
    part = claim.record.component.part
    factories.receive_stock(part=part, deliver_to=tenants.partner_p, lots={"L-RMA": ["1652024099001"]})
    spare = part.components.get(serial="1652024099001")
    shipped = pm.post(url(claim, "ship-replacement"), {"component": spare.pk}, format="json")
    assert shipped.status_code == 200, shipped.json()

    # No re-commissioning yet: the close is refused, saying what to run.
    refused = pm.post(url(claim, "close"), {}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "post_repair_missing"
    assert spare.serial in refused.json()["detail"] and "--purpose post_repair" in refused.json()["detail"]

    # The partner runs the post-repair burn-in on the new hardware; it passes and becomes the new card's
    # baseline; then the claim closes.
    repair = field_report(rig.server, days=21, purpose="post_repair")
    repair["gpus"][3]["serial"] = spare.serial
    response = _post(capture, tenants.user_p, rig, repair)
    assert response.status_code == 201, response.content
    run = BurnInRun.objects.get(pk=response.json()["id"])
    assert run.result == "pass" and run.accepted_at is not None
    assert not Finding.objects.filter(run=run, severity="fail").exists()
    closed = pm.post(url(claim, "close"), {}, format="json")
    assert closed.status_code == 200, closed.json()
    assert closed.json()["status"] == "closed"
    new_card = GpuResult.objects.get(run=run, component=spare)
    assert baselines(rig.server)[gpu_key(new_card.serial, new_card.uuid)].run_id == run.pk
    assert Installation.objects.active().filter(server=rig.server, component=spare).exists()
