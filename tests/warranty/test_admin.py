"""The warranty admin: records and registrations read only, claims decided through the services."""

from __future__ import annotations

import pytest

from tests import factories
from tests.builds.bench_rig import GPUS_L1
from tests.warranty.handover_rig import SPARE_GPU
from warranty.models import WarrantyClaim, WarrantyRecord
from warranty.services import claim_open
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def pm_browser(client, handed):
    assert client.login(username="pm", password=factories.PASSWORD)
    return client


def _claim(handed):
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    return claim_open(record=record, actor=handed.t.user_a, description="no picture")


def test_a_claim_is_decided_and_shipped_through_the_admin(pm_browser, handed):
    claim = _claim(handed)
    url = f"/admin/warranty/warrantyclaim/{claim.pk}/change/"
    page = pm_browser.get(url).content.decode()
    assert 'value="approve"' in page and 'value="close"' not in page  # only what the map allows
    response = pm_browser.post(url, {"decision": "approve", "note": "Confirmed", "replacement_serial": ""})
    assert response.status_code == 302, response.content.decode()[:2000]
    claim.refresh_from_db()
    assert (claim.status, claim.decision_note) == ("approved", "Confirmed")
    pm_browser.post(
        url, {"decision": "ship_replacement", "note": "", "replacement_serial": SPARE_GPU.lower()}
    )
    claim.refresh_from_db()
    assert claim.status == "replacement_shipped" and claim.replacement_record.serial == SPARE_GPU
    verbs = set(AuditEvent.objects.for_object(claim).values_list("verb", flat=True))
    assert {"warranty.claim_approve", "warranty.claim_ship_replacement"} <= verbs


def test_a_refused_decision_writes_nothing(pm_browser, handed):
    claim = _claim(handed)
    url = f"/admin/warranty/warrantyclaim/{claim.pk}/change/"
    events = AuditEvent.objects.count()
    response = pm_browser.post(url, {"decision": "reject", "note": "", "replacement_serial": ""})
    assert response.status_code == 302
    claim.refresh_from_db()
    assert claim.status == "open" and AuditEvent.objects.count() == events


def test_list_actions_and_read_only_records(pm_browser, handed):
    claim = _claim(handed)
    response = pm_browser.post(
        "/admin/warranty/warrantyclaim/", {"action": "approve", "_selected_action": [claim.pk]}
    )
    assert response.status_code == 302
    assert WarrantyClaim.objects.get(pk=claim.pk).status == "approved"
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    assert pm_browser.get(f"/admin/warranty/warrantyrecord/{record.pk}/change/").status_code == 200
    assert (
        pm_browser.post(f"/admin/warranty/warrantyrecord/{record.pk}/change/", {"serial": "X"}).status_code
        == 403
    )
    assert pm_browser.get("/admin/warranty/warrantyregistration/").status_code == 200
    assert pm_browser.get("/admin/warranty/warrantyrecord/").status_code == 200
