"""`/api/v1/warranty/attributions/` (issue #29, item 1): seed 003's narrow links listed with their source,
card and connector; a PM confirms or corrects (audited; a correction needs a note); partners and customers
see nothing."""

from __future__ import annotations

import pytest

from builds.models import Connector
from tests.burnin.ingest_rig import seed003_bytes
from tests.tenants_rig import api_client
from tests.warranty.attribution_rig import FREE, NARROW, healthy_report, post, rework, seed003_rig
from warranty.models import Attribution
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

URL = "/api/v1/warranty/attributions/"


@pytest.fixture
def rig(tenants, django_capture_on_commit_callbacks):
    rig = seed003_rig(tenants)
    rig.first = post(rig, django_capture_on_commit_callbacks, seed003_bytes())
    return rig


def _row(rig, index: int) -> Attribution:
    return Attribution.objects.get(finding__run=rig.first, finding__gpu_index=index)


def test_the_pm_lists_the_narrow_links_with_their_evidence(rig, django_assert_max_num_queries):
    with django_assert_max_num_queries(8):
        answer = api_client(rig.t.pm).get(URL)
    assert answer.status_code == 200
    body = answer.json()
    assert body["count"] == 2
    by_connector = {row["connector_name"]: row for row in body["results"]}
    assert set(by_connector) == set(NARROW.values())
    row = by_connector["PCIe-3"]
    assert row["cause"] == row["proposed_cause"] == "connector" and row["confirmed"] is False
    assert row["stage"] == "burn_in" and row["server_hostname"] == rig.server.hostname
    assert row["source"] == {
        "kind": "finding",
        "finding": _row(rig, 2).finding_id,
        "code": "pcie_link_downtrained",
        "subject": "GPU 2",
        "run": rig.first.pk,
    }
    assert row["component_serial"] == rig.serials[2] and row["lot_code"] == "L-7U"
    assert "no move yet to tell" in row["proposed_reason"]

    detail = api_client(rig.t.pm).get(f"{URL}{row['id']}/")
    assert detail.status_code == 200 and detail.json() == row


def test_the_filters(rig, django_capture_on_commit_callbacks):
    pm = api_client(rig.t.pm)
    assert pm.get(URL, {"cause": "connector"}).json()["count"] == 2
    assert pm.get(URL, {"cause": "component"}).json()["count"] == 0
    assert pm.get(URL, {"stage": "burn_in", "server": rig.server.pk}).json()["count"] == 2
    assert pm.get(URL, {"stage": "claim"}).json()["count"] == 0
    assert pm.get(URL, {"confirmed": "false"}).json()["count"] == 2
    row = _row(rig, 4)
    assert pm.post(f"{URL}{row.pk}/attribute/", {"cause": "connector"}, format="json").status_code == 200
    assert [r["id"] for r in pm.get(URL, {"confirmed": "true"}).json()["results"]] == [row.pk]
    assert pm.get(URL, {"server": rig.server_q.pk}).json()["count"] == 0


def test_seed003_moved_cards_then_a_pm_corrects_one(rig, django_capture_on_commit_callbacks):
    rework(rig, dict(zip(NARROW, FREE, strict=True)))
    post(rig, django_capture_on_commit_callbacks, healthy_report())
    pm = api_client(rig.t.pm)
    rows = pm.get(URL, {"cause": "connector"}).json()["results"]
    assert sorted(r["connector_name"] for r in rows) == ["PCIe-3", "PCIe-5"]
    assert all("trained at full width in connector PCIe-" in r["proposed_reason"] for r in rows)

    row = _row(rig, 2)
    url = f"{URL}{row.pk}/attribute/"
    refused = pm.post(url, {"cause": "component"}, format="json")
    assert refused.status_code == 400 and "note" in refused.json()
    assert not AuditEvent.objects.for_object(row).filter(verb="attribution.correct").exists()

    answer = pm.post(url, {"cause": "component", "note": "Bent pin on the card's edge."}, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["cause"] == "component" and body["proposed_cause"] == "connector"
    assert body["confirmed"] is True and body["confirmed_by"] == rig.t.pm.username
    assert body["note"] == "Bent pin on the card's edge."
    event = AuditEvent.objects.for_object(row).get(verb="attribution.correct")
    assert event.actor == rig.t.pm and event.before["cause"] == "connector"
    assert event.after == {
        "cause": "component",
        "proposed_cause": "connector",
        "component": rig.serials[2],
        "connector": "PCIe-3",
    }
    assert pm.get(URL, {"cause": "connector"}).json()["count"] == 1


def test_a_connector_of_another_server_is_refused(rig):
    foreign = Connector.objects.create(server=rig.server_q, name="PCIe-1", kind="pcie_slot", position=1)
    row = _row(rig, 2)
    answer = api_client(rig.t.pm).post(
        f"{URL}{row.pk}/attribute/",
        {"cause": "connector", "connector": foreign.pk, "note": "x"},
        format="json",
    )
    assert answer.status_code == 400 and "connector" in answer.json()
    answer = api_client(rig.t.pm).post(f"{URL}{row.pk}/attribute/", {"cause": "blame"}, format="json")
    assert answer.status_code == 400 and "cause" in answer.json()


def test_partners_and_customers_get_nothing(rig):
    row = _row(rig, 2)
    events = AuditEvent.objects.count()
    for user in (rig.t.user_p, rig.t.user_a, rig.t.user_b, rig.t.user_q, rig.t.outsider):
        client = api_client(user)
        listed = client.get(URL)
        assert listed.status_code == 200 and listed.json()["count"] == 0, user.username
        assert client.get(f"{URL}{row.pk}/").status_code == 404, user.username
        answer = client.post(f"{URL}{row.pk}/attribute/", {"cause": "connector"}, format="json")
        assert answer.status_code == 404, user.username
    row.refresh_from_db()
    assert row.confirmed_at is None and AuditEvent.objects.count() == events
