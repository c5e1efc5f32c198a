"""Backup and restore of one order: export-order → empty database → import-order → export-order again.

The rich order (tests/ops/export_rig.py): ROI and workload, servers built on the bench (installation,
allocation, blacklist, step, photo), a burn-in run with stages, findings, a GPU result and a BMC event, a
placement on two feeds, a network record with encrypted BMC credentials, a platform listing, and the audit
trail of all of it.
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

from deployment.models import ServerNetwork
from orders.models import Order
from tests import factories
from tests.builds.bench_rig import bench, built  # noqa: F401  (the bench fixture and its builder)
from tests.ops.export_rig import rich_order
from werkbank.models import AuditEvent
from werkbank.secrets import decrypt

pytestmark = pytest.mark.django_db(transaction=True)


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
    order = rich_order(built)
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
    order = rich_order(built)
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

    from ops.backup import _ExactEncoder

    moment = datetime(2026, 12, 1, 17, 0, 0, 500, tzinfo=UTC)
    text = json.loads(json.dumps(moment, cls=_ExactEncoder))
    assert text == "2026-12-01T17:00:00.000500Z"
    assert parse_datetime(text) == moment
