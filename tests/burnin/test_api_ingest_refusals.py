"""The probe's upload refuses a bad report and stores nothing: a malformed or oversized report, a body that
is not JSON or not gzip, a zip bomb, a wrong idempotency key (the upload itself: test_api_ingest.py)."""

from __future__ import annotations

import gzip
import hashlib
import io
import struct
import tracemalloc
import zlib
from typing import Any

import pytest

from builds.choices import ServerStatus
from burnin.models import BurnInRun
from burnin.services import ingest
from probe.schema import load_schema
from probe.validate import Validator
from tests.burnin.ingest_rig import (
    Rig,
    _ingest,
    _seed,
    counts,
    encode,
    make_rig,
    post_report,
    seed003_bytes,
    stored_files,
)
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def rig(tenants) -> Rig:
    return make_rig(tenants)


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
