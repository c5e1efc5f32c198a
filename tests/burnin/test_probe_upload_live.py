"""`python -m probe upload` against the live test server: the probe and Werkbank agree on the path, the
server's name, the gzip body and the Idempotency-Key. The first upload stores the report, the second adds
no rows."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest
from django.core.files.storage import default_storage

from burnin.models import BurnInRun
from tests.burnin.ingest_rig import counts, make_rig, seed003_bytes
from tests.factories import PASSWORD
from tests.probe.probe_rig import REPO_ROOT, run_probe

pytestmark = pytest.mark.django_db(transaction=True)  # the live server reads what the test committed


def _login(url: str, username: str) -> str:
    request = urllib.request.Request(
        f"{url}/api/v1/auth/login/",
        data=json.dumps({"username": username, "password": PASSWORD}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["token"]


def test_probe_upload_stores_a_report_end_to_end_and_a_second_upload_adds_no_rows(
    tenants, live_server, tmp_path: Path
):
    rig = make_rig(tenants)
    token = _login(live_server.url, rig.t.user_p.username)
    report_file = tmp_path / "burnin-gpu7u.json"
    report_file.write_bytes(seed003_bytes())
    env = {k: v for k, v in os.environ.items() if k != "WERKBANK_TOKEN"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    command = ["upload", str(report_file), "--url", live_server.url, "--server", rig.server.asset_tag]
    command += ["--token", token, "--max-attempts", "1"]

    first = run_probe(command, env=env, timeout=120)

    assert first.returncode == 0, first.stderr
    assert "(HTTP 201, attempt 1, Idempotency-Key" in first.stdout
    run = BurnInRun.objects.get()
    assert run.server == rig.server and run.uploaded_by == rig.t.user_p
    assert run.samples.count() == 6 * 310 and run.gpu_results.exclude(component=None).count() == 6
    assert default_storage.exists(run.report.name)  # written after the commit, before the answer
    stored = counts()

    second = run_probe(command, env=env, timeout=120)

    assert second.returncode == 0, second.stderr
    assert "(HTTP 200, attempt 1, Idempotency-Key" in second.stdout
    assert f'"id":{run.pk}' in second.stdout.replace(" ", "")
    assert counts() == stored

    # Partner Q's token gets the 404 for P's server, and the probe stops at once with it.
    token_q = _login(live_server.url, rig.t.user_q.username)
    stored = counts()  # Q's login leaves its own audit row (werkbank/auth_audit.py); the upload none
    refused = run_probe([*command[:-4], "--token", token_q, "--max-attempts", "3"], env=env, timeout=120)
    assert refused.returncode == 1 and "HTTP 404" in refused.stderr and "retrying" not in refused.stderr
    assert counts() == stored
