"""`python -m probe field-check` on the fixtures' fake backend, uploaded with `python -m probe upload` and a
customer member's portal API token against the live test server: the report ingests (201) as a field check
of the handed-over server, compared GPU by GPU with its accepted burn-in.

The fake backend is the captured H200 (tests/fixtures/gpu/h200: one GPU, serial 1653924121787, measured on
this machine's host name), so the server here is built with exactly that GPU installed: the report binds
to the hardware as a real one would. Its baseline is a burn-in the same probe wrote, uploaded by the
partner and accepted as the gate accepts it (`accepted_at`), before the server was handed over.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from builds.choices import ConnectorKind, ServerStatus
from builds.models import ChassisLayout, LayoutConnector, Server
from builds.services import find_component, server_assign_partner, server_install, servers_create_for_order
from burnin.choices import ReportPurpose
from burnin.models import BurnInRun
from tests import factories
from tests.probe import probe_rig
from werkbank.services import api_token_create

pytestmark = pytest.mark.django_db(transaction=True)  # the live server reads what the test committed

H200_DIR = probe_rig.FIXTURES_DIR / "gpu" / "h200"
SERIAL = "1653924121787"  # the serial in nvidia-smi-q-idle.xml, which the fake nvidia-smi replays


def _h200_server(tenants: Any) -> Server:
    """Customer A's one-GPU server, built by partner P, with the fixture's H200 in its only slot; assembled
    and named like the machine the probe runs on (the report's host name is checked)."""
    gpu = factories.PartFactory(name="NVIDIA H200", vram_gb=141, tdp_w=700)
    chassis = factories.ChassisFactory(name="2U GPU chassis")
    configuration = factories.ConfigurationFactory(lines=[(gpu, 1), (chassis, 1)])
    layout = ChassisLayout.objects.create(chassis=chassis, columns=1)
    LayoutConnector.objects.create(
        layout=layout, name="PCIe-1", kind=ConnectorKind.PCIE_SLOT, position=1, numa_node=0, pcie_gen=5
    )
    order = factories.OrderFactory(customer=tenants.customer_a, configuration=configuration, server_count=1)
    (server,) = servers_create_for_order(order=order, actor=tenants.pm)
    server_assign_partner(server=server, actor=tenants.pm, partner=tenants.partner_p)
    factories.receive_stock(part=gpu, deliver_to=tenants.partner_p, lots={"L-H200": [SERIAL]})
    component = find_component(serial=SERIAL, user=tenants.user_p)
    server_install(server=server, actor=tenants.user_p, component=component, connector_name="PCIe-1")
    Server.objects.filter(pk=server.pk).update(status=ServerStatus.ASSEMBLED, hostname=socket.gethostname())
    return Server.objects.get(pk=server.pk)


def _upload(url: str, server: Server, report: Path, token: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "WERKBANK_TOKEN"}
    env["PYTHONPATH"] = str(probe_rig.REPO_ROOT)
    command = ["upload", str(report), "--url", url, "--server", server.asset_tag, "--token", token]
    return probe_rig.run_probe([*command, "--max-attempts", "1"], env=env, timeout=120)


def test_field_check_on_the_fake_backend_uploads_with_a_customer_token_and_is_compared(
    tenants: Any, live_server: Any, tmp_path: Path
) -> None:
    server = _h200_server(tenants)
    env = probe_rig.make_fake_env(tmp_path, H200_DIR)
    sysfs = probe_rig.build_sysfs(
        tmp_path / "sys", probe_rig.parse_sysfs_capture((H200_DIR / "sysfs-pci.txt").read_text())
    )
    common = ["--interval", "1s", "--sysfs-root", str(sysfs)]

    # The commissioning burn-in, uploaded by the partner and accepted; then the server is handed over.
    burnin_file = tmp_path / "burnin.json"
    wrote = probe_rig.run_probe(["burnin", "--duration", "2s", "--out", str(burnin_file), *common], env=env)
    assert wrote.returncode == 0, wrote.stderr
    _row, partner_token = api_token_create(user=tenants.user_p, actor=tenants.user_p)
    stored = _upload(live_server.url, server, burnin_file, partner_token)
    assert stored.returncode == 0 and "(HTTP 201," in stored.stdout, stored.stderr
    baseline = BurnInRun.objects.get(server=server)
    assert baseline.purpose == ReportPurpose.BURN_IN
    BurnInRun.objects.filter(pk=baseline.pk).update(accepted_at=timezone.now())
    Server.objects.filter(pk=server.pk).update(status=ServerStatus.HANDED_OVER)

    # A week later, at the customer's: the field check, with the token from the portal's token page.
    field_file, state = tmp_path / "field-check.json", tmp_path / "state"
    state.mkdir()
    checked = probe_rig.run_probe(
        ["field-check", "--duration", "3s", "--out", str(field_file), "--state-dir", str(state), *common],
        env=env,
    )
    assert checked.returncode == 0, checked.stderr
    assert json.loads(field_file.read_text())["purpose"] == "field_check"
    _row, customer_token = api_token_create(user=tenants.user_a, actor=tenants.user_a)

    uploaded = _upload(live_server.url, server, field_file, customer_token)

    assert uploaded.returncode == 0, uploaded.stderr
    assert "(HTTP 201, attempt 1, Idempotency-Key" in uploaded.stdout
    run = BurnInRun.objects.exclude(pk=baseline.pk).get(server=server)
    assert run.purpose == ReportPurpose.FIELD_CHECK and run.uploaded_by == tenants.user_a
    assert run.accepted_at is None  # a field check is compared with the baseline, never one itself
    (result,) = run.gpu_results.select_related("component", "baseline")
    assert result.component is not None and result.component.serial == SERIAL
    assert result.baseline is not None and result.baseline.run_id == baseline.pk

    # The customer's token does not post a burn-in for the handed-over server (403), and nothing is stored.
    again = tmp_path / "burnin-again.json"
    wrote = probe_rig.run_probe(["burnin", "--duration", "1s", "--out", str(again), *common], env=env)
    assert wrote.returncode == 0, wrote.stderr
    refused = _upload(live_server.url, server, again, customer_token)
    assert refused.returncode == 1 and "HTTP 403" in refused.stderr
    assert BurnInRun.objects.filter(server=server).count() == 2
