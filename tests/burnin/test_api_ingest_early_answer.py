"""A refused upload's answer reaches the client: the view reads the rest of the body (up to
WERKBANK_MAX_REPORT_BYTES) before it answers (issue #26). gunicorn, which serves production, closes the
connection after its answer; with megabytes of the body still unread that is a reset, and a client still
sending never reads the 400. The probe's urllib then raised a BrokenPipeError; python-requests reads the
answer after the reset (urllib3 swallows it on Linux), so it is asserted too, as the audit's client."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import requests

from burnin.models import BurnInRun
from tests.burnin.ingest_rig import _seed, encode, make_rig
from tests.burnin.served_rig import gunicorn
from werkbank.services import api_token_create

pytestmark = pytest.mark.django_db(transaction=True)  # the served app reads what the test committed

MESSAGE = {"Content-Encoding": ["says gzip, but the body is not gzip data."]}


def _urllib_post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    """POST as the probe does (probe/upload.py: urllib.request); a connection error propagates."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_a_mislabelled_gzip_upload_is_answered_400_not_reset(tenants, tmp_path: Path):
    rig = make_rig(tenants)
    report = _seed()
    report["probe"]["argv"] = ["x" * 1000] * 16_000  # 16 MB: far more than the socket buffers hold
    body = encode(report)
    _row, token = api_token_create(user=rig.t.user_p, actor=rig.t.user_p)
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    headers["Content-Encoding"] = "gzip"  # but the body is plain JSON: refused after its first megabyte

    with gunicorn(tmp_path) as url:
        status, answer = _urllib_post(f"{url}{rig.url()}", body, headers)
        assert (status, json.loads(answer)) == (400, MESSAGE)

        response = requests.post(f"{url}{rig.url()}", data=body, headers=headers, timeout=60)
        assert (response.status_code, response.json()) == (400, MESSAGE)

        # A stranger's upload is refused (404) before a byte of it is read: it is read to its end too.
        other = f"{url}{rig.url(rig.server_q)}"
        status, answer = _urllib_post(other, body, headers)
        assert status == 404, answer
    assert BurnInRun.objects.count() == 0
