"""The probe's upload, `POST /api/v1/burnin/servers/{asset_tag}/reports/`, and the runs it makes.

Seed 003's report goes in as the probe sends it (gzip, Idempotency-Key) and comes out as rows: the run, its
stages, six GPU results linked to the installed GPUs, every telemetry sample, the BMC events and the
analysis' findings. A repeat adds nothing; a bad report, a stranger, a customer, a server in the wrong
status or a mismatched key stores nothing.

Bad reports: test_api_ingest_refusals.py; the telemetry rows: test_api_ingest_telemetry.py.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from datetime import UTC, datetime

import pytest
from django.core.files.storage import default_storage

from builds.choices import ServerStatus
from builds.models import Server
from burnin import analysis
from burnin.models import BurnInRun, Finding, GpuResult
from tests.burnin.ingest_rig import (
    Rig,
    _ingest,
    _seed,
    counts,
    encode,
    expected_samples,
    make_rig,
    post_report,
    seed003_bytes,
    stored_files,
    stored_samples,
)
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def rig(tenants) -> Rig:
    return make_rig(tenants)


# --- Seed 003 end to end -------------------------------------------------------------------------------


def test_seed003_report_ingests_as_rows(rig, django_capture_on_commit_callbacks):
    raw, report = seed003_bytes(), _seed()
    before = counts()

    response = _ingest(rig, django_capture_on_commit_callbacks)

    assert response.status_code == 201, response.content
    run = BurnInRun.objects.get()
    body = response.json()
    assert (body["id"], body["asset_tag"], body["report_id"]) == (
        run.pk,
        rig.server.asset_tag,
        hashlib.sha256(raw).hexdigest(),
    )
    sample_count = sum(len(rows) for rows in report["telemetry"]["gpu_series"].values())
    after = counts()
    assert {name: after[name] - before[name] for name in after} == {
        "BurnInRun": 1,
        "BurnInStage": 5,
        "GpuResult": 6,
        "TelemetrySample": sample_count,
        "TelemetryRollup": sample_count,  # samples 120 s apart, rollup buckets of 18.6 s: one each
        "BmcEvent": len(report["host_memory"]["sel_events"]),
        "Finding": len(body["findings"]),
        "AuditEvent": 2,  # server.start_burn_in and burnin.ingest
    }
    assert sample_count == 6 * 310

    # The run, as the probe reported it, with the analysis' verdict.
    assert (run.probe_version, run.schema_version, run.rules_version) == (
        "0.1.0",
        "1.0.0",
        analysis.RULES_VERSION,
    )
    assert run.started_at == datetime(2026, 8, 14, 6, 0, tzinfo=UTC)
    assert run.ended_at == datetime(2026, 8, 14, 16, 21, 10, tzinfo=UTC)
    assert run.result == "fail" and run.uploaded_by == rig.t.user_p
    burn = run.stages.get(name="burn")
    assert (burn.status, burn.reason) == ("interrupted", "workshop power distribution failure")

    # GPU results: linked to the installed GPUs by serial; two cards at x8 where the slot gives x16.
    results = {gpu.index: gpu for gpu in GpuResult.objects.filter(run=run).select_related("component")}
    assert [results[i].component.serial for i in range(6)] == rig.serials
    assert {i: (r.expected_gen, r.expected_width, r.load_gen, r.load_width) for i, r in results.items()} == {
        0: (4, 16, 4, 16),
        1: (4, 16, 4, 16),
        2: (4, 16, 4, 8),
        3: (4, 16, 4, 16),
        4: (4, 16, 4, 8),
        5: (4, 16, 4, 16),
    }
    assert (round(results[2].h2d_gbps, 1), round(results[0].h2d_gbps, 1)) == (13.9, 27.7)
    assert 291 <= min(r.tflops for r in results.values()) <= max(r.tflops for r in results.values()) <= 302
    assert results[1].peak_temp_c == 88

    # Findings: exactly what the analysis finds with the server's slots (Gen4 x16), stored faithfully.
    slots = {serial: (4, 16) for serial in rig.serials}
    expected = analysis.analyze(
        report, expectations=analysis.Expectations(platform_max_gen=4, slot_links=slots, target_s=72 * 3600)
    )
    stored = list(Finding.objects.filter(run=run).order_by("pk"))
    assert [(f.code, f.severity, f.gpu_index, f.message, f.evidence) for f in stored] == [
        (f.code, f.severity, f.subject if isinstance(f.subject, int) else None, f.message, f.evidence)
        for f in expected
    ]
    fails = {(f.code, f.subject) for f in stored if f.severity == "fail"}
    assert {("pcie_link_downtrained", "GPU 2"), ("pcie_link_downtrained", "GPU 4")} <= fails
    assert not {subject for _code, subject in fails} & {"GPU 0", "GPU 1", "GPU 3", "GPU 5"}
    assert all(f.rule_version == analysis.RULES_VERSION for f in stored)

    # Every sample, timed from t0, columns mapped by name.
    assert stored_samples(run) == expected_samples(report)
    assert run.bmc_events.filter(dimm__isnull=False).exclude(dimm="").count() >= 6

    # The server is in burn-in now, through the builds service; the ingest is audited on the server.
    rig.server.refresh_from_db()
    assert rig.server.status == ServerStatus.BURN_IN
    verbs = list(AuditEvent.objects.for_object(rig.server).values_list("verb", flat=True))
    assert "server.start_burn_in" in verbs and "burnin.ingest" in verbs
    ingested = AuditEvent.objects.for_object(rig.server).get(verb="burnin.ingest")
    assert ingested.after["run"] == run.pk and ingested.after["samples"] == sample_count

    # The raw report is kept, gzip-compressed, byte for byte.
    assert stored_files() == [run.report.name]
    with default_storage.open(run.report.name) as stored_file:
        assert gzip.decompress(stored_file.read()) == raw


def test_the_same_report_again_returns_the_stored_run_and_adds_nothing(
    rig, django_capture_on_commit_callbacks
):
    first = _ingest(rig, django_capture_on_commit_callbacks)
    assert first.status_code == 201
    before, files = counts(), stored_files()

    # Again as the probe sends it, then as plain JSON without a key, then after the server moved on.
    again = _ingest(rig, django_capture_on_commit_callbacks)
    plain = _ingest(rig, django_capture_on_commit_callbacks, gzip_body=False, key=None)
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.BURN_IN_PASSED)
    later = _ingest(rig, django_capture_on_commit_callbacks, user=rig.t.pm)

    for response in (again, plain, later):
        assert response.status_code == 200, response.content
        assert response.json() == first.json()
    assert counts() == before
    assert stored_files() == files


def test_a_gzip_body_is_recognised_by_its_magic_bytes_and_plain_json_works(
    rig, django_capture_on_commit_callbacks
):
    report = _seed()
    gz = _ingest(rig, django_capture_on_commit_callbacks, encoding_header=False)
    assert gz.status_code == 201, gz.content

    report["probe"]["argv"].append("--again")  # another report: another id
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.BURN_IN)
    plain = _ingest(rig, django_capture_on_commit_callbacks, raw=encode(report), gzip_body=False)
    assert plain.status_code == 201, plain.content
    assert BurnInRun.objects.count() == 2
    run = BurnInRun.objects.get(pk=plain.json()["id"])
    with default_storage.open(run.report.name) as stored_file:
        assert json.loads(gzip.decompress(stored_file.read())) == report


def test_a_pm_may_post_and_a_server_in_burn_in_stays_there(rig, django_capture_on_commit_callbacks):
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.BURN_IN)
    response = _ingest(rig, django_capture_on_commit_callbacks, user=rig.t.pm)
    assert response.status_code == 201, response.content
    rig.server.refresh_from_db()
    assert rig.server.status == ServerStatus.BURN_IN
    assert not AuditEvent.objects.for_object(rig.server).filter(verb="server.start_burn_in").exists()


# --- Who may post, and when ----------------------------------------------------------------------------


def test_partner_q_and_strangers_get_404_and_a_customer_is_told_no(rig, django_capture_on_commit_callbacks):
    before = counts()
    for user in (rig.t.user_q, rig.t.user_b, rig.t.outsider):
        response = _ingest(rig, django_capture_on_commit_callbacks, user=user)
        assert response.status_code == 404, (user.username, response.content)
    customer = _ingest(rig, django_capture_on_commit_callbacks, user=rig.t.user_a)
    assert customer.status_code == 403
    assert customer.json()["detail"].startswith("Customers post only field checks")
    anonymous = post_report(None, rig.url(), seed003_bytes())
    assert anonymous.status_code in {401, 403}
    unknown = post_report(rig.t.pm, "/api/v1/burnin/servers/WB-0000-0000-99/reports/", seed003_bytes())
    assert unknown.status_code == 404
    assert counts() == before and stored_files() == []


@pytest.mark.parametrize(
    "status", [ServerStatus.PLANNED, ServerStatus.ASSEMBLING, ServerStatus.BURN_IN_PASSED]
)
def test_a_server_that_is_not_assembled_or_in_burn_in_answers_409(
    rig, django_capture_on_commit_callbacks, status
):
    Server.objects.filter(pk=rig.server.pk).update(status=status)
    before = counts()
    response = _ingest(rig, django_capture_on_commit_callbacks)
    assert response.status_code == 409
    label = dict(ServerStatus.choices)[status].lower()
    assert response.json()["code"] == "server_status"
    assert f"is {label}: a burn-in report is taken only while" in response.json()["detail"]
    assert counts() == before and stored_files() == []


def test_a_report_stored_for_one_server_is_refused_for_another(rig, django_capture_on_commit_callbacks):
    assert _ingest(rig, django_capture_on_commit_callbacks).status_code == 201
    before = counts()
    with django_capture_on_commit_callbacks(execute=True):
        response = post_report(rig.t.pm, rig.url(rig.server_q), seed003_bytes())
    assert response.status_code == 409 and response.json()["code"] == "report_elsewhere"
    assert rig.server_q.asset_tag in response.json()["detail"]
    assert counts() == before


# --- Reading the runs ----------------------------------------------------------------------------------


def test_runs_list_and_detail_for_those_who_see_the_server(
    rig, django_capture_on_commit_callbacks, django_assert_max_num_queries
):
    run_id = _ingest(rig, django_capture_on_commit_callbacks).json()["id"]
    for user in (rig.t.pm, rig.t.user_p, rig.t.user_a):
        listed = api_client(user).get("/api/v1/burnin/runs/", {"server": rig.server.pk})
        assert listed.status_code == 200
        (row,) = listed.json()["results"]
        assert row["id"] == run_id and row["result"] == "fail" and row["asset_tag"] == rig.server.asset_tag
        assert row["findings_fail"] == Finding.objects.filter(severity="fail").count() >= 5
        detail = api_client(user).get(f"/api/v1/burnin/runs/{run_id}/").json()
        assert [s["name"] for s in detail["stages"]] == [
            "inventory",
            "telemetry",
            "bench",
            "burn",
            "finalize",
        ]
        assert [g["index"] for g in detail["gpu_results"]] == list(range(6))
        assert len(detail["findings"]) == Finding.objects.count()
    for user in (rig.t.user_q, rig.t.user_b, rig.t.outsider):
        assert api_client(user).get("/api/v1/burnin/runs/").json()["results"] == []
        assert api_client(user).get(f"/api/v1/burnin/runs/{run_id}/").status_code == 404
    assert api_client(rig.t.user_q).get("/api/v1/burnin/runs/", {"server": rig.server.pk}).status_code == 400


def test_the_runs_list_takes_a_constant_number_of_queries(
    rig, django_capture_on_commit_callbacks, django_assert_max_num_queries
):
    report = _seed()
    for n in range(3):
        report["probe"]["argv"] = ["run", str(n)]
        Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.BURN_IN)
        assert _ingest(rig, django_capture_on_commit_callbacks, raw=encode(report)).status_code == 201
    client = api_client(rig.t.user_p)
    client.get("/api/v1/burnin/runs/")  # the user's PM check and the content types are cached after this
    with django_assert_max_num_queries(4):  # and the caller's organization kinds (werkbank/audiences.py)
        response = client.get("/api/v1/burnin/runs/")
    assert len(response.json()["results"]) == 3
    with django_assert_max_num_queries(7):
        assert client.get(f"/api/v1/burnin/runs/{response.json()['results'][0]['id']}/").status_code == 200
