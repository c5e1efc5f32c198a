"""Burn-in evidence bound to the hardware it measured, through the API and the pages.

A report whose GPUs are not the installed GPUs is refused whole (409 `hardware_mismatch`, every difference
named, no row written); a run uploaded before a GPU change is stale and never judged; a full load shorter
than the order's promise is a `burnin_too_short` failure that only a PM's waiver lets pass.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.utils import timezone

from builds.choices import ServerStatus
from builds.models import Installation, Server
from builds.services import find_component, server_install, server_remove
from burnin.models import BurnInRun, Finding, GpuResult
from inventory.models import Component
from tests import factories
from tests.burnin.ingest_rig import counts, encode, make_rig, post_report, seed003_bytes, stored_files
from tests.tenants_rig import api_client
from tests.warranty.packs_rig import pdf_text
from warranty.documents import pack_pdf
from warranty.selectors import pack_data

pytestmark = pytest.mark.django_db

SEED003_SERIALS = "1793024000000–5"


@pytest.fixture
def rig(tenants):
    return make_rig(tenants)


def seed003() -> dict[str, Any]:
    return json.loads(seed003_bytes())


def healthy(hours: float = 24, *, serials: list[str] | None = None) -> dict[str, Any]:
    """Seed 003's report with its faults mended (every card at x16, no ECC events, no interrupted stage)
    and a full load of `hours`: a report whose only failure can be its length."""
    report = seed003()
    good = report["gpus"][0]
    for index in (2, 4):
        mended = copy.deepcopy(good)
        for key in ("index", "uuid", "serial", "pci_bus_id", "numa_node", "cpu_affinity"):
            mended[key] = report["gpus"][index][key]
        report["gpus"][index] = mended
        report["telemetry"]["gpu_series"][str(index)] = copy.deepcopy(report["telemetry"]["gpu_series"]["0"])
    for item in report["dmesg"]["link_limited"]:
        item["limited_width"] = 16
    report["host_memory"]["sel_events"] = []
    burn = next(stage for stage in report["stages"] if stage["name"] == "burn")
    start = datetime.fromisoformat(burn["started_at"].replace("Z", "+00:00"))
    end = start + timedelta(hours=hours)
    burn["ended_at"] = end.strftime("%Y-%m-%dT%H:%M:%SZ")
    finalize = next(stage for stage in report["stages"] if stage["name"] == "finalize")
    finalize["started_at"] = burn["ended_at"]
    finalize["ended_at"] = (end + timedelta(seconds=70)).strftime("%Y-%m-%dT%H:%M:%SZ")
    report["probe"]["ended_at"] = finalize["ended_at"]
    for stage in report["stages"]:
        stage["status"], stage["reason"] = "ok", None
    report["outcome"] = {"status": "ok", "exit_code": 0, "reasons": []}
    if serials is not None:
        for gpu, serial in zip(report["gpus"], serials, strict=True):
            gpu["serial"] = serial
    return report


def client(user: Any) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def upload(rig, report: dict[str, Any], user: Any = None) -> Any:
    return post_report(user or rig.t.user_p, rig.url(), encode(report))


def gate(user: Any, server: Server, action: str = "") -> Any:
    url = f"/api/v1/burnin/server-gate/{server.asset_tag}/" + (f"{action}/" if action else "")
    client = api_client(user)
    return client.post(url, {"note": "checked"}, format="json") if action else client.get(url)


# --- A report belongs to the hardware it measured --------------------------------------------------------


def test_the_h200_report_is_refused_on_a_six_gpu_server_and_nothing_is_stored(rig, h200_report):
    before, files = counts(), stored_files()
    response = upload(rig, h200_report)
    assert response.status_code == 409, response.content
    body = response.json()
    assert body["code"] == "hardware_mismatch"
    h200_serial = h200_report["gpus"][0]["serial"]
    assert body["missing"] == [
        "1 GPU reported, 6 installed.",
        f"GPU serial {h200_serial} is installed in no server.",
        f"{SEED003_SERIALS} are installed here and missing from the report.",
        "1 GPU is an NVIDIA H200; the configuration's GPU is "
        "RTX PRO 6000 Blackwell Max-Q Workstation Edition.",
        f"The report was measured on host h200-vm; this server is {rig.server.hostname}.",
    ]
    assert counts() == before and stored_files() == files
    assert Server.objects.get(pk=rig.server.pk).status == ServerStatus.ASSEMBLED


def test_a_serial_installed_nowhere_is_named_with_the_installed_one_it_replaces(rig):
    report = seed003()
    report["gpus"][5]["serial"] = "zz-404"
    refused = upload(rig, report)
    assert refused.status_code == 409
    assert refused.json()["missing"] == [
        "GPU serial zz-404 is installed in no server.",
        "1793024000005 is installed here and missing from the report.",
    ]


def test_a_report_with_the_installed_serials_binds_by_serial_and_says_so(rig, tenants):
    response = upload(rig, seed003())
    assert response.status_code == 201, response.content
    run = BurnInRun.objects.get(pk=response.json()["id"])
    assert run.binding == "serial"
    assert set(GpuResult.objects.filter(run=run).values_list("component__serial", flat=True)) == set(
        rig.serials
    )
    page = client(tenants.pm).get(f"/burnin/servers/{rig.server.pk}/").content.decode()
    assert "the installed GPUs by serial" in page


def test_cards_without_a_serial_bind_by_uuid_from_the_first_counting_run(rig, tenants):
    first = seed003()
    for gpu in first["gpus"]:
        gpu["serial"] = "N/A"  # as a GeForce card reports it
    response = upload(rig, first)
    assert response.status_code == 201, response.content
    assert BurnInRun.objects.get(pk=response.json()["id"]).binding == "uuid"
    page = client(tenants.pm).get(f"/burnin/servers/{rig.server.pk}/").content.decode()
    assert "by UUID" in page

    # The same cards, one of them now at another PCI address, and one card that was never here.
    later = copy.deepcopy(first)
    later["probe"]["version"] = "0.1.1"
    later["gpus"][0]["pci_bus_id"], later["gpus"][1]["pci_bus_id"] = "00000000:21:00.0", "00000000:01:00.0"
    later["gpus"][5]["uuid"] = "GPU-ffffffff-0000-0000-0000-000000000000"
    before = counts()
    refused = upload(rig, later)
    assert refused.status_code == 409 and refused.json()["code"] == "hardware_mismatch"
    missing = refused.json()["missing"]
    assert missing[0] == (
        "GPU GPU-3c0a7b52-0000-4f1e-9d2a-6b8e0c5f0000 is at 00000000:21:00.0; it was recorded at "
        "00000000:01:00.0."
    )
    assert any("GPU-ffffffff" in sentence and "not one of the GPUs" in sentence for sentence in missing)
    assert missing[-1].startswith("GPU GPU-3c0a7b52-0005-4f1e-9d2a-6b8e0c5f0005 recorded at")
    assert counts() == before

    again = copy.deepcopy(first)
    again["probe"]["version"] = "0.1.2"
    assert upload(rig, again).status_code == 201


# --- Only a run on today's hardware counts ------------------------------------------------------------


def _swap_gpu(rig, tenants, *, serial: str = "1793024000003", new: str = "1793024009999") -> None:
    """The partner swaps one GPU (the server back on the bench for it, as a rework would put it)."""
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.ASSEMBLING)
    installation = Installation.objects.get(
        server=rig.server, component__serial=serial, removed_at__isnull=True
    )
    server_remove(installation=installation, actor=tenants.user_p, reason="fan noise, swapped")
    part = Component.objects.get(serial=serial).part
    factories.receive_stock(part=part, deliver_to=tenants.partner_p, lots={"L-7U": [new]})
    server_install(
        server=rig.server,
        actor=tenants.user_p,
        component=find_component(serial=new, user=tenants.user_p),
        connector_name=installation.connector.name,
    )
    Server.objects.filter(pk=rig.server.pk).update(status=ServerStatus.BURN_IN)


def test_a_run_before_a_gpu_swap_is_stale_and_the_gate_refuses(rig, tenants):
    report = healthy(80)
    assert upload(rig, report).status_code == 201
    run = BurnInRun.objects.get()
    _swap_gpu(rig, tenants)

    refused = gate(tenants.pm, rig.server, "pass")
    assert refused.status_code == 409, refused.content
    assert refused.json()["code"] == "burnin_stale"
    (sentence,) = refused.json()["missing"]
    assert "no burn-in run on its current hardware" in sentence
    assert "GPU 1793024009999 was installed in PCIe-4" in sentence
    assert gate(tenants.pm, rig.server).json()["missing"] == [sentence]

    # The portal shows no stale run as the machine's result; the burn-in page shows it as stale.
    portal = client(tenants.user_a).get(f"/portal/servers/{rig.server.pk}/").content.decode()
    assert 'id="burnin-stale"' in portal and "GPU 1793024009999 was installed in PCIe-4" in portal
    assert 'data-status="stale"' in portal and 'data-status="pass"' not in portal
    page = client(tenants.pm).get(f"/burnin/servers/{rig.server.pk}/").content.decode()
    assert 'id="stale"' in page and "GPU 1793024009999 was installed in PCIe-4" in page
    assert f'data-run="{run.pk}" data-standing="stale"' in page

    # The old report still names the swapped-out serial: refused. A report of today's cards counts.
    serials = [*rig.serials]
    serials[3] = "1793024009999"
    stale_cards = upload(rig, healthy(81))
    assert stale_cards.status_code == 409 and stale_cards.json()["code"] == "hardware_mismatch"
    assert "GPU serial 1793024000003 is installed in no server." in stale_cards.json()["missing"]
    # The same bytes as the stale run: that stored run, unchanged.
    assert upload(rig, report).json()["id"] == run.pk
    renewed = healthy(82, serials=serials)
    created = upload(rig, renewed)
    assert created.status_code == 201, created.content
    assert gate(tenants.pm, rig.server, "pass").status_code == 200


def test_the_gate_judges_the_newest_run_by_upload_not_by_its_start(rig, tenants):
    """A report whose clock says later, uploaded first, does not outrank the retest uploaded after it."""
    early_upload = healthy(80)
    early_upload["probe"]["argv"] = ["burnin", "--duration", "80h"]
    assert upload(rig, early_upload).status_code == 201
    retest = seed003()  # started 2026-08-14, uploaded second: two x8 links, an interrupted stage
    assert upload(rig, retest).status_code == 201
    refused = gate(tenants.pm, rig.server, "pass")
    assert refused.status_code == 409
    assert refused.json()["code"] == "burnin_unwaived_failures"
    judged = BurnInRun.objects.order_by("-id").first()
    assert gate(tenants.pm, rig.server).json()["run"]["id"] == judged.pk


# --- A minimum duration -------------------------------------------------------------------------------


def test_a_24_hour_run_fails_too_short_until_a_pm_waives_it(rig, tenants):
    response = upload(rig, healthy(24))
    assert response.status_code == 201, response.content
    run = BurnInRun.objects.get(pk=response.json()["id"])
    assert run.result == "fail" and round(run.full_load_s) == 24 * 3600 and run.target_s == 72 * 3600
    fails = list(Finding.objects.filter(run=run, severity="fail"))
    assert [finding.code for finding in fails] == ["burnin_too_short"]
    (short,) = fails
    assert short.params == {"measured_h": 24.0, "target_h": 72.0}
    assert "24 h" in short.text and "72 h" in short.text

    refused = gate(tenants.pm, rig.server, "pass")
    assert refused.status_code == 409 and refused.json()["missing"] == [f"burn-in: {short.text}"]

    waived = api_client(tenants.pm).post(
        f"/api/v1/burnin/findings/{short.pk}/waive/",
        {"reason": "Customer accepted 24 h for an early start"},
        format="json",
    )
    assert waived.status_code == 200, waived.content
    assert gate(tenants.pm, rig.server, "pass").status_code == 200
    server = Server.objects.get(pk=rig.server.pk)
    assert server.status == ServerStatus.BURN_IN_PASSED

    # The pack prints the judged run's durations, the gate's decision and the waiver with its reason.
    for language, words in (
        ("en", ["Full load under all GPUs 24.0 h", "Burn-in promised 72 h", "Passed, with findings waived"]),
        ("de", ["24,0 h", "72 h", "Customer accepted 24 h for an early start"]),
    ):
        data = pack_data(server=server)
        assert data.run == run
        pdf = pack_pdf(data, revision=1, language=language, generated_at=timezone.now())
        _, text = pdf_text(pdf)
        flat = " ".join(text.split())
        for word in [*words, "Customer accepted 24 h for an early start"]:
            assert word in flat, (language, word)

    # The portal tells the same story: the judged run, passed on a waiver, with both durations.
    portal = client(tenants.user_a).get(f"/portal/servers/{rig.server.pk}/").content.decode()
    assert 'data-status="waived"' in portal and "24.0 h of full load" in portal and "72 h promised" in portal


def test_an_order_may_promise_more_and_an_interrupted_stage_counts_its_measured_part(rig, tenants):
    order = rig.server.order
    order.burnin_hours = 96
    order.save(update_fields=["burnin_hours"])
    response = upload(rig, healthy(80))
    assert response.status_code == 201
    run = BurnInRun.objects.get(pk=response.json()["id"])
    assert run.target_s == 96 * 3600
    assert Finding.objects.get(run=run, code="burnin_too_short").params == {
        "measured_h": 80.0,
        "target_h": 96.0,
    }

    # Seed 003: the burn stage was interrupted after 10 h; 10 h is what counts.
    BurnInRun.objects.all().delete()
    seed = upload(rig, seed003())
    run = BurnInRun.objects.get(pk=seed.json()["id"])
    assert round(run.full_load_s) == 10 * 3600


def test_a_promise_under_72_hours_is_refused_by_the_database_and_the_api(rig, tenants):
    refused = api_client(tenants.pm).patch(
        f"/api/v1/orders/{rig.server.order.pk}/", {"burnin_hours": 24}, format="json"
    )
    assert refused.status_code == 400 and "burnin_hours" in refused.json()
    order = rig.server.order
    order.burnin_hours = 24
    with pytest.raises(IntegrityError), transaction.atomic():
        order.save(update_fields=["burnin_hours"])
