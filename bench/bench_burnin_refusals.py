"""Burn-in upload refusals: a costly report is refused by its cheap structural checks, not after parsing
and validating all of it (issue #26).

The report is the audit's: the seed-003 test report (tests/fixtures/burnin/seed003-report.json) with its
first GPU repeated 10,000 times, about 61 MB of JSON and 0.5 MB gzipped, posted as the probe posts it
(gzip, Idempotency-Key). The schema allows 16 GPUs (`maxItems`), and `burnin.services.upload` counts them
while it parses the `gpus` array, before the rest of it is parsed and before the validation: the upload
answers 400 naming `$.gpus` and the bound. Target: ≤ 1 s end to end (it took 39.8 s before).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import time

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client

from bench.bench_burnin import TEMPLATE, _server
from bench.report import record
from burnin.models import BurnInRun

COPIES = 10_000
TRIES = 3


def _report() -> tuple[bytes, bytes]:
    report = json.loads(TEMPLATE.read_text())
    report["gpus"] = [report["gpus"][0]] * COPIES
    raw = json.dumps(report, separators=(",", ":"), allow_nan=False).encode() + b"\n"
    return raw, gzip.compress(raw, compresslevel=6, mtime=0)


def run() -> None:
    pm = get_user_model().objects.create_user("bench-refusals-pm", password="x", is_staff=True)
    pm.groups.add(Group.objects.get_or_create(name="project-managers")[0])
    client = Client()
    client.force_login(pm)
    server = _server()
    raw, body = _report()
    print(
        f"report: one GPU × {COPIES:,} = {len(raw) / 1e6:.1f} MB JSON, {len(body) / 1e6:.2f} MB gzip "
        "(the probe's upload: gzip, Idempotency-Key)"
    )
    url = f"/api/v1/burnin/servers/{server.asset_tag}/reports/"
    headers = {"Content-Encoding": "gzip", "Idempotency-Key": hashlib.sha256(raw).hexdigest()}
    client.post(url, b"{}", content_type="application/json")  # loads the URL configuration, not timed
    timings = []
    for _ in range(TRIES):
        started = time.perf_counter()
        response = client.post(url, body, content_type="application/json", headers=headers)
        timings.append(time.perf_counter() - started)
        assert response.status_code == 400, response.content[:500]
        message = response.json()["report"][0]
        assert message.startswith("$.gpus: expected at most 16 items"), message
    assert not BurnInRun.objects.exists()
    best = min(timings)
    record(f"burn-in upload of {COPIES:,} GPUs refused (best of {TRIES})", best * 1000, "ms", target=1000)
    print(
        f"  refused with 400 in {best * 1000:.0f} ms (best of "
        f"{', '.join(f'{t * 1000:.0f}' for t in timings)} ms; target ≤ 1,000 ms): {message}"
    )
    assert best <= 1.0, f"the refusal took {best:.2f} s, more than 1 s"
