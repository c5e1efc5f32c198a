"""Field checks through the probe's upload: who may post one, when, and what it is compared with.

Issue 25's acceptance: a field report of a handed-over server posted with a customer member's token is
stored and compared with its burn-in; another partner's token gets a 404; a burn-in report for a
handed-over server a 409. Healthy: no `fail`. GPU 3 at x8: a drift `fail` on that GPU naming the baseline
and the new figure; the same report again adds nothing and signals nothing.
"""

from __future__ import annotations

import pytest

from builds.choices import ServerStatus
from builds.models import Server
from burnin.choices import ReportPurpose, RunResult, Severity
from burnin.models import BurnInRun, Finding, GpuResult
from burnin.signals import drift_failed
from tests.burnin.field_rig import field_report, handed_over_rig
from tests.burnin.ingest_rig import counts, encode, post_report

pytestmark = pytest.mark.django_db


@pytest.fixture
def rig(tenants, django_capture_on_commit_callbacks):
    return handed_over_rig(tenants, django_capture_on_commit_callbacks)


@pytest.fixture
def signals():
    sent = []

    def receiver(sender, run, findings, actor, **kwargs):
        sent.append((run.pk, [finding.code for finding in findings]))

    drift_failed.connect(receiver, dispatch_uid="test_api_field_check")
    yield sent
    drift_failed.disconnect(dispatch_uid="test_api_field_check")


def _post(rig, capture, report, user=None):
    with capture(execute=True):
        return post_report(user or rig.t.user_a, rig.url(), encode(report))


def test_a_customer_posts_a_healthy_field_check_compared_with_its_burn_in(
    rig, django_capture_on_commit_callbacks, signals
):
    baseline = BurnInRun.objects.get(server=rig.server)
    response = _post(rig, django_capture_on_commit_callbacks, field_report(rig.server))
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["purpose"] == "field_check" and body["result"] == "pass"
    run = BurnInRun.objects.get(pk=body["id"])
    assert run.purpose == ReportPurpose.FIELD_CHECK and run.uploaded_by == rig.t.user_a
    assert run.accepted_at is None and run.target_s is None  # no promised duration for a field check
    assert not run.findings.filter(severity=Severity.FAIL).exists()
    assert not run.findings.filter(code__startswith="drift_", severity__in=["warn", "fail"]).exists()
    # Each GPU compared with its own burn-in result, by serial.
    results = list(run.gpu_results.select_related("baseline").order_by("index"))
    assert len(results) == 6
    assert all(row.baseline.run_id == baseline.pk and row.baseline.serial == row.serial for row in results)
    rig.server.refresh_from_db()
    assert rig.server.status == ServerStatus.HANDED_OVER  # a field check moves nothing
    assert signals == []


def test_gpu_3_at_x8_fails_with_a_drift_naming_baseline_and_value_once(
    rig, django_capture_on_commit_callbacks, signals
):
    report = field_report(rig.server, gpus={3: {"h2d": 13.9, "width": 8}})
    response = _post(rig, django_capture_on_commit_callbacks, report)
    assert response.status_code == 201, response.content
    run = BurnInRun.objects.get(pk=response.json()["id"])
    assert run.result == RunResult.FAIL
    serial = report["gpus"][3]["serial"]
    drifts = list(run.findings.filter(code__startswith="drift_", severity=Severity.FAIL))
    assert {(f.code, f.gpu_index) for f in drifts} == {("drift_h2d", 3), ("drift_link", 3)}
    h2d = next(f for f in drifts if f.code == "drift_h2d")
    assert h2d.evidence["serial"] == serial and h2d.evidence["value"] == pytest.approx(13.9)
    assert h2d.evidence["baseline"] == pytest.approx(27.7, abs=0.2)
    assert h2d.evidence["component_id"] == GpuResult.objects.get(run=run, index=3).component_id is not None
    assert "13.9" in h2d.message and "27.7" in h2d.message and serial in h2d.message
    assert signals == [(run.pk, [f.code for f in drifts])]
    # The same report again: its run, nothing added, nothing signalled.
    before = counts()
    again = _post(rig, django_capture_on_commit_callbacks, report)
    assert again.status_code == 200 and again.json()["id"] == run.pk
    assert counts() == before and len(signals) == 1


def test_a_missing_gpu_is_a_drift_not_a_mismatch(rig, django_capture_on_commit_callbacks):
    report = field_report(rig.server)
    lost = report["gpus"].pop(5)
    report["telemetry"]["gpu_series"].pop(str(lost["index"]))
    response = _post(rig, django_capture_on_commit_callbacks, report)
    assert response.status_code == 201, response.content
    (missing,) = Finding.objects.filter(run_id=response.json()["id"], code="drift_gpu_missing")
    assert missing.severity == Severity.FAIL and missing.evidence["serial"] == lost["serial"]


def test_another_partners_token_gets_404_and_a_burn_in_report_409(rig, django_capture_on_commit_callbacks):
    before = counts()
    for user in (rig.t.user_q, rig.t.user_b, rig.t.outsider):
        response = _post(rig, django_capture_on_commit_callbacks, field_report(rig.server), user=user)
        assert response.status_code == 404, (user.username, response.content)
    burn_in = field_report(rig.server, days=1, purpose="burn_in")  # another report than the stored one
    for user in (rig.t.user_p, rig.t.pm):
        response = _post(rig, django_capture_on_commit_callbacks, burn_in, user=user)
        assert response.status_code == 409, response.content
        assert response.json()["code"] == "server_status"
        assert "python -m probe field-check" in response.json()["detail"]
    assert counts() == before


def test_customers_post_field_checks_only_and_only_once_handed_over(rig, django_capture_on_commit_callbacks):
    before = counts()
    repair = field_report(rig.server, purpose="post_repair")
    response = _post(rig, django_capture_on_commit_callbacks, repair)
    assert response.status_code == 403
    assert "field checks only" in response.json()["detail"]
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.DEPLOYED)
    response = _post(rig, django_capture_on_commit_callbacks, field_report(rig.server))
    assert response.status_code == 403
    assert counts() == before
    # The partner may, for a deployed server: before the handover the PM checks it in the rack.
    response = _post(rig, django_capture_on_commit_callbacks, field_report(rig.server), user=rig.t.user_p)
    assert response.status_code == 201, response.content


def test_a_field_check_before_the_gate_is_refused(tenants, django_capture_on_commit_callbacks):
    from tests.burnin.ingest_rig import make_rig

    rig = make_rig(tenants, status=ServerStatus.BURN_IN)
    response = _post(rig, django_capture_on_commit_callbacks, field_report(rig.server), user=rig.t.user_p)
    assert response.status_code == 409
    assert (
        "field check report is taken only once the server is deployed or handed over"
        in (response.json()["detail"])
    )


def test_a_passing_post_repair_run_is_accepted_and_a_failing_one_is_not(
    rig, django_capture_on_commit_callbacks
):
    failing = field_report(rig.server, days=3, purpose="post_repair", gpus={1: {}})
    response = _post(rig, django_capture_on_commit_callbacks, failing, user=rig.t.user_p)
    assert response.status_code == 201, response.content
    assert BurnInRun.objects.get(pk=response.json()["id"]).accepted_at is None
    passing = field_report(rig.server, days=4, purpose="post_repair")
    response = _post(rig, django_capture_on_commit_callbacks, passing, user=rig.t.pm)
    assert response.status_code == 201, response.content
    run = BurnInRun.objects.get(pk=response.json()["id"])
    assert run.result == RunResult.PASS and run.accepted_at is not None


def test_the_gate_and_the_portal_never_judge_a_field_check(rig, django_capture_on_commit_callbacks):
    from burnin.gates import judged_run

    baseline = BurnInRun.objects.get(server=rig.server)
    assert _post(rig, django_capture_on_commit_callbacks, field_report(rig.server)).status_code == 201
    assert judged_run(rig.server) == baseline
