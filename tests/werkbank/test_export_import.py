"""Backup and restore of one order: export-order → empty database → import-order → export-order again.

The rich order: ROI and workload, servers built on the bench (installation, allocation, blacklist, step,
photo), a burn-in run with stages, findings, a GPU result and a BMC event, a placement on two feeds, a
network record with encrypted BMC credentials, a platform listing, and the audit trail of all of it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from builds.models import Server
from burnin.models import BmcEvent, GpuResult
from deployment.models import ServerNetwork
from deployment.services import (
    feed_create,
    listing_record,
    network_set,
    placement_create,
    rack_create,
    site_create,
)
from inventory.models import Component
from orders.models import Order
from orders.services import roi_assess, workload_set
from tests import factories
from tests.builds.conftest import bench, built  # noqa: F401  (the bench fixture and its builder)
from warranty.models import ExpiryNotice
from warranty.services import claim_open, warranty_records_create
from werkbank.models import AuditEvent
from werkbank.secrets import decrypt

pytestmark = pytest.mark.django_db(transaction=True)

ROI = {
    "capex": Decimal("100000.00"),
    "gpu_count": 8,
    "price_per_gpu_hour": Decimal("1.0000"),
    "utilization": Decimal("0.6000"),
    "power_active_kw": Decimal("6.300"),
    "power_idle_kw": Decimal("1.200"),
    "energy_price_kwh": Decimal("0.1500"),
    "pue": Decimal("1.30"),
    "colo_month": Decimal("600.00"),
    "horizon_months": 60,
}


def _rich_order(bench_built: Any) -> Order:
    rig, _step, _photo = bench_built
    t, order, server = rig.t, rig.order, rig.server
    roi_assess(order=order, actor=t.pm, note="first", **ROI)
    workload_set(order=order, actor=t.pm, preset="llama-3.1-8b", context_tokens=8192, concurrency=4)
    run = factories.make_burnin_run(
        server,
        stages=[{"name": "gpu_burn", "status": "pass"}, {"name": "memtest", "status": "pass"}],
        findings=[{"code": "thermal_margin", "severity": "warn"}],
    )
    gpu = Component.objects.get(serial="GPU-L1-1")
    GpuResult.objects.create(
        run=run, index=0, serial=gpu.serial, component=gpu, tflops=209.5, peak_temp_c=81.0
    )
    BmcEvent.objects.create(run=run, sel_id="0x01", sensor="PSU1", event="Presence detected", record={"a": 1})
    site = site_create(
        actor=t.pm, name="Sofia Colo 1", kind="colocation", operator="Telepoint", customer=None,
        address="Business Park Sofia", country="BG",
    )  # fmt: skip
    rack = rack_create(site=site, actor=t.pm, name="R07", height_u=42)
    feeds = [
        feed_create(rack=rack, actor=t.pm, name=name, leg=leg, voltage_v=230, current_a=16, phases=1)
        for name, leg in (("A1", "A"), ("B1", "B"))
    ]
    Server.objects.filter(pk=server.pk).update(status="burn_in_passed")
    placement_create(server=server, rack=rack, lowest_u=1, feeds=feeds, actor=t.pm, measured_wall_w=2900)
    network_set(
        server=server, actor=t.pm, management_ip="10.20.0.11", bmc_ip="10.21.0.11",
        bmc_mac="3c:ec:ef:12:34:56", bmc_username="bmc-operator", bmc_password="Zebra-Quokka-secret",
    )  # fmt: skip
    Server.objects.filter(pk=server.pk).update(status="deployed")
    listing_record(server=server, actor=t.pm, platform="vast_ai", machine_id="m-1")
    # Handed over: its warranty records, a claim on one of them, and an expiry notice sent.
    Server.objects.filter(pk=server.pk).update(status="handed_over")
    records = warranty_records_create(server=server, actor=t.pm)
    claim_open(record=records[-1], actor=t.pm, description="Fan bearing noise")
    ExpiryNotice.objects.create(record=records[0], threshold_days=90)
    return order


def _export(reference: str, path: Any) -> dict[str, Any]:
    call_command("export-order", reference, "--output", str(path), stderr=StringIO())
    return json.loads(path.read_text())


def _comparable(bundle: dict[str, Any]) -> list[Any]:
    """The bundle's rows without ids (and without the export time): what must survive the round trip."""
    return sorted(
        json.dumps({"model": item["model"], "fields": item["fields"]}, sort_keys=True)
        for item in bundle["objects"]
    )


def test_an_order_survives_export_flush_and_import(built, tmp_path):  # noqa: F811
    order = _rich_order(built)
    other = factories.OrderFactory(customer=built[0].t.customer_b)  # not part of the bundle
    first = _export(order.reference, tmp_path / "first.json")

    assert (first["format"], first["version"], first["order"]) == ("werkbank-order", 1, order.reference)
    models = {item["model"] for item in first["objects"]}
    for expected in (
        "orders.order", "orders.roiassessment", "orders.workload", "orders.serverconfiguration",
        "orders.configurationline", "builds.server", "builds.connector", "builds.connectorblacklist",
        "builds.allocation", "builds.installation", "builds.buildstep", "builds.buildphoto",
        "builds.chassislayout", "builds.layoutconnector", "inventory.component", "inventory.batchlot",
        "inventory.purchaseorder", "inventory.purchaseorderline", "inventory.part", "inventory.supplier",
        "burnin.burninrun", "burnin.burninstage", "burnin.gpuresult", "burnin.finding", "burnin.bmcevent",
        "deployment.site", "deployment.rack", "deployment.powerfeed", "deployment.rackplacement",
        "deployment.servernetwork", "deployment.platformlisting", "warranty.warrantyregistration",
        "warranty.warrantyrecord", "warranty.warrantyclaim", "warranty.expirynotice", "werkbank.auditevent",
        "werkbank.organization", "werkbank.membership",
    ):  # fmt: skip
        assert expected in models, expected
    references = [item["fields"]["reference"] for item in first["objects"] if item["model"] == "orders.order"]
    assert references == [order.reference]  # the other order stays out
    verbs = {item["fields"]["verb"] for item in first["objects"] if item["model"] == "werkbank.auditevent"}
    assert {"order.roi_assess", "order.workload_set"} <= verbs
    assert any(verb.startswith("server.") for verb in verbs), verbs
    text = json.dumps(first)
    assert "Zebra-Quokka-secret" not in text and "bmc-operator" not in text  # the token stays encrypted
    assert all(item["fields"]["password"] == "!" for item in first["objects"] if item["model"] == "auth.user")
    assert other.reference not in text

    call_command("flush", interactive=False, verbosity=0)
    assert not Order.objects.exists() and not get_user_model().objects.exists()
    out = StringIO()
    call_command("import-order", str(tmp_path / "first.json"), stdout=out)
    assert "Restored" in out.getvalue()

    restored = Order.objects.get(reference=order.reference)
    assert restored.servers.count() == 2
    assert restored.roi_assessments.get().net_month == Decimal("2297.59")
    network = ServerNetwork.objects.get(server__order=restored)
    assert json.loads(decrypt(network.bmc_credentials))["password"] == "Zebra-Quokka-secret"
    assert AuditEvent.objects.filter(verb="order.roi_assess").exists()
    # New rows get fresh ids and numbers after the restored ones.
    assert factories.OrderFactory().pk > restored.pk

    second = _export(order.reference, tmp_path / "second.json")
    assert _comparable(second) == _comparable(first)


def test_import_refuses_a_database_that_holds_data(built, tmp_path):  # noqa: F811
    order = _rich_order(built)
    path = tmp_path / "bundle.json"
    _export(order.reference, path)
    with pytest.raises(CommandError, match="only into an empty database"):
        call_command("import-order", str(path))


def test_bundles_of_another_format_or_version_are_refused(tmp_path):
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps({"format": "werkbank-order", "version": 2, "objects": []}))
    with pytest.raises(CommandError, match="version 2 is not supported"):
        call_command("import-order", str(path))
    path.write_text(json.dumps({"format": "something-else", "version": 1, "objects": []}))
    with pytest.raises(CommandError, match="Not a Werkbank order bundle"):
        call_command("import-order", str(path))


def test_export_of_an_unknown_order_is_an_error(tmp_path):
    with pytest.raises(CommandError, match="No order 'WB-2026-0404'"):
        call_command("export-order", "WB-2026-0404", "--output", str(tmp_path / "x.json"))


def test_exported_at_is_the_export_time(bench, tmp_path):  # noqa: F811
    bundle = _export(bench.order.reference, tmp_path / "b.json")
    assert datetime.fromisoformat(bundle["exported_at"]).tzinfo is not None
    assert datetime.fromisoformat(bundle["exported_at"]) <= datetime.now(UTC)


def test_times_keep_their_microseconds_in_the_bundle():
    # Django's encoder cuts to milliseconds: a time at .000500 came back as .000 and the round trip differed.
    from django.utils.dateparse import parse_datetime

    from werkbank.backup import _ExactEncoder

    moment = datetime(2026, 12, 1, 17, 0, 0, 500, tzinfo=UTC)
    text = json.loads(json.dumps(moment, cls=_ExactEncoder))
    assert text == "2026-12-01T17:00:00.000500Z"
    assert parse_datetime(text) == moment
