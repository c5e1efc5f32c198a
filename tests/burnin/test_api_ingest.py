"""The probe's upload, `POST /api/v1/burnin/servers/{asset_tag}/reports/`, and the runs it makes.

Seed 003's report goes in as the probe sends it (gzip, Idempotency-Key) and comes out as rows: the run, its
stages, six GPU results linked to the installed GPUs, every telemetry sample, the BMC events and the
analysis' findings. A repeat adds nothing; a bad report, a stranger, a customer, a server in the wrong
status or a mismatched key stores nothing.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
import json
import struct
import threading
import tracemalloc
import zlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.db import connection, connections

from builds.choices import ServerStatus
from builds.models import Server
from burnin import analysis
from burnin.models import BurnInRun, Finding, GpuResult, TelemetrySample
from burnin.services import ingest, samples
from probe.schema import load_schema
from probe.validate import Validator
from tests.burnin.rig import (
    Rig,
    counts,
    encode,
    make_rig,
    post_report,
    seed003_bytes,
    stored_files,
)
from tests.conftest import api_client
from werkbank.errors import InvalidInput
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def rig(tenants) -> Rig:
    return make_rig(tenants)


def _seed() -> dict[str, Any]:
    return json.loads(seed003_bytes())


def _ingest(rig: Rig, capture: Any, raw: bytes | None = None, user: Any = None, **kwargs: Any) -> Any:
    with capture(execute=True):  # the report's file is written after the commit
        return post_report(user or rig.t.user_p, rig.url(), raw or seed003_bytes(), **kwargs)


def expected_samples(report: dict[str, Any]) -> list[tuple]:
    """The telemetry as rows, computed from the report independently of the ingest: (GPU, time, values)."""
    telemetry = report["telemetry"]
    names = telemetry["gpu_columns"]
    t0 = datetime.strptime(telemetry["t0"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    mapping = ["temp_c", "tlimit_c", "power_w", "sm_mhz", "util_pct", "clocks_event_mask", "pcie_gen"]
    mapping.append("pcie_width")
    rows = []
    for key, series in telemetry["gpu_series"].items():
        for row in series:
            value = dict(zip(names, row, strict=True))
            at = t0 + timedelta(seconds=value["t_offset_s"])
            rows.append((int(key), at, *(value.get(name) for name in mapping)))
    return sorted(rows, key=lambda r: (r[0], r[1]))


def stored_samples(run: BurnInRun) -> list[tuple]:
    fields = ["gpu_index", "at", "temp_c", "margin_c", "power_w", "sm_mhz", "util_pct", "clock_event_mask"]
    fields += ["pcie_gen", "pcie_width"]
    return list(TelemetrySample.objects.filter(run=run).order_by("gpu_index", "at").values_list(*fields))


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


# --- Bad reports store nothing -------------------------------------------------------------------------


def _set(path: list[Any], value: Any) -> Any:
    def change(report: dict) -> None:
        node = report
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def _drop(key: str) -> Any:
    return lambda report: report.pop(key)


def _short_row(report: dict) -> None:
    report["telemetry"]["gpu_series"]["2"][4].pop()


def _twice(report: dict) -> None:
    report["gpus"][5]["index"] = 4


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            _set(["gpus", 0, "pcie", "idle", "width"], "x16"),
            "$.gpus[0].pcie.idle.width: expected integer or null, got string",
        ),
        (
            _set(["telemetry", "gpu_series", "3", 7, 1], "88"),
            "$.telemetry.gpu_series['3'][7][1]: expected number or null, got string",
        ),
        (
            _set(["telemetry", "gpu_series", "1", 2], 17),
            "$.telemetry.gpu_series['1'][2]: expected array, got integer",
        ),
        (_set(["stages", 3, "status"], "crashed"), "$.stages[3].status: 'crashed' is not one of"),
        (_drop("stages"), "$: required property 'stages' is missing"),
        (_short_row, "$.telemetry.gpu_series['2'][4]: has 14 values, expected 15"),
        (_twice, "$.gpus[5].index: GPU index 4 appears twice"),
        (
            _set(["telemetry", "gpu_series", "0", 5, 0], None),
            "$.telemetry.gpu_series['0'][5][0]: t_offset_s is null.",
        ),
        (
            _set(["probe", "ended_at"], "2026-08-14T05:59:59Z"),
            "$.probe.ended_at: is before $.probe.started_at.",
        ),
    ],
)
def test_a_malformed_report_answers_400_with_the_json_path_and_stores_nothing(
    rig, django_capture_on_commit_callbacks, change, message
):
    report = _seed()
    change(report)
    before = counts()

    response = _ingest(rig, django_capture_on_commit_callbacks, raw=encode(report))

    assert response.status_code == 400, response.content
    assert list(response.json()) == ["report"]
    assert response.json()["report"][0].startswith(message), response.json()
    assert counts() == before and stored_files() == []
    rig.server.refresh_from_db()
    assert rig.server.status == ServerStatus.ASSEMBLED


def test_schema_errors_read_as_the_probes_validator_words_them():
    """The server's first error is the probe's (`python -m probe validate`), telemetry rows included."""
    report = _seed()
    report["telemetry"]["gpu_series"]["0"][3][2] = True
    report["telemetry"]["gpu_series"]["4"][9] = "row"
    report["gpus"][1]["thermal"]["peak_gpu_c"] = "hot"
    probe_errors = Validator(load_schema()).errors(report)
    assert {str(e) for e in ingest.validation_errors(report)} == {str(e) for e in probe_errors}
    assert len(probe_errors) == 3
    assert ingest.validation_errors(_seed()) == []


def test_not_json_and_an_empty_body_are_400(rig):
    response = post_report(rig.t.user_p, rig.url(), b"\xff{not json", gzip_body=False)
    assert response.status_code == 400
    assert response.json()["report"][0].startswith("$: not valid JSON")
    deep = post_report(rig.t.user_p, rig.url(), b"[" * 200_000 + b"]" * 200_000, gzip_body=False)
    assert deep.status_code == 400 and deep.json()["report"][0].startswith("$: not valid JSON")
    empty = api_client(rig.t.user_p).post(rig.url(), b"", content_type="application/json")
    assert empty.status_code == 400 and "empty" in empty.json()["report"][0]
    assert BurnInRun.objects.count() == 0


def test_gzip_that_is_not_gzip_or_is_cut_short_is_400(rig):
    raw = seed003_bytes()
    headers = {"Content-Encoding": "gzip"}
    client = api_client(rig.t.user_p)
    response = client.post(rig.url(), raw, content_type="application/json", headers=headers)
    assert response.status_code == 400 and "Content-Encoding" in response.json()
    cut = gzip.compress(raw)[:-100]
    response = client.post(rig.url(), cut, content_type="application/json", headers=headers)
    assert response.status_code == 400 and "truncated" in response.json()["report"][0]
    response = client.post(
        rig.url(), raw, content_type="application/json", headers={"Content-Encoding": "br"}
    )
    assert response.status_code == 400 and "'br' is not accepted" in response.json()["Content-Encoding"][0]
    assert BurnInRun.objects.count() == 0


def test_a_report_over_the_limit_and_a_zip_bomb_answer_413_naming_the_limit(rig, settings):
    settings.WERKBANK_MAX_REPORT_BYTES = 100_000
    bomb = gzip.compress(b" " * 50_000_000)  # 50 MB of JSON whitespace in ~50 KB
    assert len(bomb) < 100_000
    for body in (bomb, b" " * 100_001 + b"{}"):
        response = api_client(rig.t.user_p).post(rig.url(), body, content_type="application/json")
        assert response.status_code == 413, response.content
        assert (
            "limit of 100,000 bytes uncompressed (WERKBANK_MAX_REPORT_BYTES)" in response.json()["report"][0]
        )
    assert BurnInRun.objects.count() == 0


def test_a_gzip_body_padded_with_empty_blocks_is_held_to_the_limit_too():
    # A gzip member by hand: 30,000 empty stored deflate blocks (5 bytes each) before the real data.
    deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    body = b"\x00\x00\x00\xff\xff" * 30_000 + deflate.compress(b"{}") + deflate.flush()
    trailer = struct.pack("<II", zlib.crc32(b"{}"), 2)
    padded = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + body + trailer
    assert len(padded) > 100_000 and gzip.decompress(padded) == b"{}"
    with pytest.raises(ingest.ReportTooLarge) as refused:
        ingest.read_report_body(io.BytesIO(padded), limit=100_000)
    assert refused.value.field_message.startswith("The gzip body is larger than the limit of 100,000 bytes")
    assert ingest.read_report_body(io.BytesIO(padded), limit=200_000).raw == b"{}"


def test_a_zip_bomb_is_never_inflated_past_the_limit():
    bomb = gzip.compress(b"0" * 200_000_000, compresslevel=1)
    tracemalloc.start()
    with pytest.raises(ingest.ReportTooLarge):
        ingest.read_report_body(io.BytesIO(bomb), limit=1_000_000)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 4 * len(bomb) + 4_000_000, peak  # the bomb and a few chunks, never 200 MB


def test_the_idempotency_key_must_be_the_reports_sha256(rig, django_capture_on_commit_callbacks):
    raw = seed003_bytes()
    response = _ingest(rig, django_capture_on_commit_callbacks, key="0" * 64)
    assert response.status_code == 400
    assert "must be the SHA-256 of the uncompressed report" in response.json()["Idempotency-Key"][0]
    assert BurnInRun.objects.count() == 0
    upper = _ingest(rig, django_capture_on_commit_callbacks, key=hashlib.sha256(raw).hexdigest().upper())
    assert upper.status_code == 201


# --- Who may post, and when ----------------------------------------------------------------------------


def test_partner_q_and_strangers_get_404_and_a_customer_is_told_no(rig, django_capture_on_commit_callbacks):
    before = counts()
    for user in (rig.t.user_q, rig.t.user_b, rig.t.outsider):
        response = _ingest(rig, django_capture_on_commit_callbacks, user=user)
        assert response.status_code == 404, (user.username, response.content)
    customer = _ingest(rig, django_capture_on_commit_callbacks, user=rig.t.user_a)
    assert customer.status_code == 403
    assert customer.json()["detail"].startswith("Customers cannot post burn-in reports")
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
    first.delete()
    assert not TelemetrySample.objects.filter(run_id=first.pk).exists()
    assert TelemetrySample.objects.filter(run=second).count() == 6 * 310
