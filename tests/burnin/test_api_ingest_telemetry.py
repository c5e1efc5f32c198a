"""The probe's upload stores its telemetry: COPY and bulk_create write the same rows, two uploads of one
report at once store it once, and a run takes its samples along when it goes (the upload itself:
test_api_ingest.py)."""

from __future__ import annotations

import copy
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, connections

from builds.choices import ServerStatus
from builds.models import Server
from burnin.models import BurnInRun, TelemetrySample
from burnin.services import ingest, samples
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
    stored_samples,
)
from warranty.models import Attribution
from werkbank.errors import InvalidInput
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def rig(tenants) -> Rig:
    return make_rig(tenants)


# --- Telemetry: COPY and bulk_create store the same rows -----------------------------------------------


def _small_report() -> dict[str, Any]:
    """Seed 003 cut to 12 samples per GPU, without the T.Limit column, a few temperatures unread (mixed
    NULLs) on GPU 1, and link values written as 4.0 (the schema's integers may be integral floats)."""
    report = _seed()
    telemetry = report["telemetry"]
    drop = telemetry["gpu_columns"].index("tlimit_c")
    telemetry["gpu_columns"].pop(drop)
    gen = telemetry["gpu_columns"].index("pcie_gen")
    temp = telemetry["gpu_columns"].index("temp_c")
    for key, rows in telemetry["gpu_series"].items():
        rows[:] = [row[:drop] + row[drop + 1 :] for row in rows[:12]]
        for row in rows:
            row[gen] = float(row[gen])
        if key == "1":
            rows[3][temp] = rows[7][temp] = None
    return report


def _run(rig: Rig, report_id: str) -> BurnInRun:
    return BurnInRun.objects.create(
        server=rig.server,
        report_id=report_id,
        probe_version="0.1.0",
        schema_version="1.0.0",
        started_at=datetime(2026, 8, 14, 6, tzinfo=UTC),
        result="pass",
        rules_version="test",
        report="burnin/test.json.gz",
    )


def test_copy_and_bulk_create_store_the_same_rows(rig):
    report = _small_report()
    expected = expected_samples(report)
    assert expected[0][3] is None  # tlimit_c absent: margin NULL
    assert sum(1 for row in expected if row[2] is None) == 2
    methods = ["bulk", "copy"] if connection.vendor == "postgresql" else ["bulk"]
    stored = {}
    for method in methods:
        run = _run(rig, report_id=method)
        assert samples.store_samples(run, report, method=method) == 6 * 12
        stored[method] = stored_samples(run)
        assert stored[method] == expected, method
    assert all(isinstance(row[8], int) for row in stored["bulk"])
    if connection.vendor == "postgresql":
        assert stored["copy"] == stored["bulk"]


def test_a_sample_value_out_of_its_columns_range_is_a_400(rig):
    report = _small_report()
    width = report["telemetry"]["gpu_columns"].index("pcie_width")
    report["telemetry"]["gpu_series"]["5"][2][width] = 70_000
    with pytest.raises(InvalidInput) as refused:
        samples.store_samples(_run(rig, "range"), report)
    assert refused.value.field_message == (
        f"$.telemetry.gpu_series['5'][2][{width}]: 70000 is out of range for pcie_width."
    )


# --- Two uploads of one report at once -----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_uploads_of_one_report_store_it_once(tenants):
    if connection.vendor != "postgresql":
        pytest.skip("row locks are exercised on PostgreSQL")
    rig = make_rig(tenants)
    raw = seed003_bytes()
    barrier = threading.Barrier(2)
    results: list[Any] = [None, None]

    def upload(index: int) -> None:
        try:
            barrier.wait(timeout=10)
            response = post_report(rig.t.user_p, rig.url(), raw)
            results[index] = (response.status_code, response.json()["id"])
        except Exception as exc:  # surfaces in the assertion instead of dying silently in the thread
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(status for status, _id in results) == [200, 201], results
    assert results[0][1] == results[1][1]
    run = BurnInRun.objects.get()
    assert run.samples.count() == 6 * 310 and run.gpu_results.count() == 6
    assert AuditEvent.objects.filter(verb="burnin.ingest").count() == 1


def test_copy_helpers_keep_the_reports_data_untouched(rig):
    report = _small_report()
    snapshot = copy.deepcopy(report)
    samples.store_samples(_run(rig, "untouched"), report)
    assert report == snapshot


def test_without_t0_the_samples_are_timed_from_the_probes_start(rig):
    report = _small_report()
    report["telemetry"]["t0"] = None
    run = _run(rig, "no-t0")
    samples.store_samples(run, report)
    first = TelemetrySample.objects.filter(run=run, gpu_index=0).order_by("at").first()
    offset = report["telemetry"]["gpu_series"]["0"][0][0]
    assert first.at == datetime(2026, 8, 14, 6, tzinfo=UTC) + timedelta(seconds=offset)


def test_a_gpu_whose_serial_is_not_installed_refuses_the_report(rig, django_capture_on_commit_callbacks):
    """Evidence is bound to the hardware it measured: one foreign card, and nothing of the report is kept
    (it used to be stored with that card unlinked)."""
    report = _seed()
    report["gpus"][3]["serial"] = "NOT-IN-THIS-SERVER"
    before = counts()
    response = _ingest(rig, django_capture_on_commit_callbacks, raw=encode(report))
    assert response.status_code == 409, response.content
    assert response.json()["missing"] == [
        "GPU serial NOT-IN-THIS-SERVER is installed in no server.",
        "1793024000003 is installed here and missing from the report.",
    ]
    assert counts() == before


def test_a_unique_report_id_conflict_at_insert_answers_with_the_stored_run(
    rig, django_capture_on_commit_callbacks, monkeypatch
):
    """The backstop behind the row lock: should two inserts of one report race past every check (posts
    to two servers, say), the unique report id refuses the second, which then answers like a repeat."""
    first = _ingest(rig, django_capture_on_commit_callbacks)
    assert first.status_code == 201
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.BURN_IN)
    real, calls = ingest._existing, []

    def blind_twice(report_id: str, server: Server) -> BurnInRun | None:
        calls.append(report_id)
        return None if len(calls) <= 2 else real(report_id, server)

    monkeypatch.setattr(ingest, "_existing", blind_twice)
    before = counts()
    again = _ingest(rig, django_capture_on_commit_callbacks)
    assert len(calls) == 3  # before parsing, under the lock, and after the refused insert
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    assert counts() == before


def test_deleting_a_run_deletes_its_samples(rig, django_capture_on_commit_callbacks):
    """The samples' run key has no database constraint (the ingest's speed, migration 0003): Django's
    cascade removes them with their run, and nothing else's samples."""
    report = _seed()
    assert _ingest(rig, django_capture_on_commit_callbacks).status_code == 201
    report["probe"]["argv"] = ["another", "run"]
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.BURN_IN)
    assert _ingest(rig, django_capture_on_commit_callbacks, raw=encode(report)).status_code == 201
    first, second = BurnInRun.objects.order_by("pk")
    # The attributions of its fail findings protect them (warranty: the evidence of a failure rate).
    Attribution.objects.filter(finding__run=first).delete()
    first.delete()
    assert not TelemetrySample.objects.filter(run_id=first.pk).exists()
    assert TelemetrySample.objects.filter(run=second).count() == 6 * 310
