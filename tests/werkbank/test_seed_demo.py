"""`manage.py seed_demo` loads the seeds' fleets, and a second run changes nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.apps import apps
from django.core.management import call_command
from django.db.models import Count

from inventory.models import BatchLot, Component, PurchaseOrder
from orders.models import Order
from orders.selectors import approval_checks
from werkbank.demo_context import DEMO_PASSWORD
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def test_seed_demo_is_idempotent_and_loads_the_fleets(client, capsys):
    call_command("seed_demo")
    first = _counts()
    out = capsys.readouterr().out
    call_command("seed_demo")
    assert _counts() == first

    assert "pm " in out and DEMO_PASSWORD in out
    orders = {order.customer.name: order for order in Order.objects.select_related("configuration")}
    fleet = orders["Vastfleet Rentals GmbH"]
    assert (fleet.server_count, fleet.status) == (8, "assembly")
    # Seed 000's 5458 W of TDP fit 5× 1600 W N+1 × 0.9 = 5760 W: approved without an override.
    assert fleet.approval_override_reason == ""
    assert not AuditEvent.objects.filter(verb="order.approve_override").exists()
    fleet_checks = {check.name: check for check in approval_checks(order=fleet)}
    assert all(check.ok for check in fleet_checks.values())
    assert fleet_checks["psu"].numbers["psu_margin_w"] == 302
    # Seed 001's NEOXIS server stays in ROI review on its PSU check alone: 5730 W against 4320 W.
    neoxis_failed = [check for check in approval_checks(order=orders["NEOXIS AD"]) if not check.ok]
    assert [(check.name, check.numbers["psu_margin_w"]) for check in neoxis_failed] == [("psu", -1410)]
    # Procured with 5 % spares, sent to EU suppliers, received by lot: the GPUs of each server share a lot.
    gpu_lots = (
        BatchLot.objects.filter(part__mpn="RTX5090-32G-SRV")
        .annotate(count=Count("components"))
        .order_by("lot_code")
        .values_list("count", flat=True)
    )
    # ...and the first lot holds the replacement its supplier sent for a failed card (warranty.demo_quality).
    assert list(gpu_lots) == [9] + [8] * 7 + [4]
    assert all(link.purchase_order.status == "received" for link in fleet.purchase_order_links.all())
    assert all(po.supplier.is_eu for po in PurchaseOrder.objects.all())
    # Fleet: BOM × 8 servers + 5 % spares, rounded up per part (263); the 7U machine without spares (30).
    # The two failed cards went back to their supplier and its replacement arrived at our own warehouse: those
    # three have no partner holding them.
    at_kentino = Component.objects.filter(holder__name="Kentino Werkstatt").count()
    assert (at_kentino, Component.objects.count()) == (291, 294)
    assert Component.objects.filter(holder__isnull=True).count() == 3
    assert orders["NEOXIS AD"].status == "roi_review"
    assert orders["Inferenzlabor GmbH"].status == "burn_in"
    bom = {line.part.mpn: line.quantity for line in fleet.configuration.lines.select_related("part")}
    assert bom["RTX5090-32G-SRV"] == 8
    assert bom["TURIN2D24G-2L+"] == 1
    assert bom["AD-6U-8GPU"] == 1
    assert fleet.configuration.usable_psu_w == 6400  # 5× 1600 W, N+1
    assert orders["NEOXIS AD"].configuration.lines.get(part__category="gpu").quantity == 8
    maxq = orders["Inferenzlabor GmbH"].configuration
    assert maxq.lines.get(part__category="gpu").part.tdp_w == 300
    assert maxq.lines.get(part__category="chassis").part.u_height == 7

    assert client.login(username="pm", password=DEMO_PASSWORD)
    assert client.get("/admin/").status_code == 200


def test_seed_demo_loads_the_burn_in_runs(settings, tmp_path, django_capture_on_commit_callbacks):
    """The 7U machine's run shows seed 003's figures with its own six serials, and waits for a PM on its
    interrupted stage and its ~20 h of mixed load, short of the 72 h promised; the fleet's first server
    passed a 72 h run, its GeForce cards bound by UUID (and the deployment demo deployed it)."""
    from burnin.models import BurnInRun

    settings.MEDIA_ROOT = tmp_path
    with django_capture_on_commit_callbacks(execute=True):
        call_command("seed_demo")
    burn_ins = (
        BurnInRun.objects.filter(purpose="burn_in").select_related("server__order").order_by("started_at")
    )
    runs = {run.server.order.customer.name: run for run in burn_ins}  # each server's latest burn-in

    seven_u = runs["Inferenzlabor GmbH"]
    assert (seven_u.server.status, seven_u.result) == ("burn_in", "fail")
    tflops = sorted(seven_u.gpu_results.values_list("tflops", flat=True))
    assert (tflops[0], tflops[-1]) == (291.0, 302.0)
    assert all(1469 <= gpu.vram_gbps <= 1473 for gpu in seven_u.gpu_results.all())
    assert max(seven_u.gpu_results.values_list("peak_temp_c", flat=True)) == 88
    assert set(seven_u.gpu_results.values_list("load_gen", "load_width")) == {(4, 16)}  # after the move
    installed = set(
        seven_u.server.installations.filter(
            removed_at__isnull=True, component__part__category="gpu"
        ).values_list("component__serial", flat=True)
    )
    assert set(seven_u.gpu_results.values_list("serial", flat=True)) == installed and len(installed) == 6
    assert (seven_u.binding, seven_u.full_load_s, seven_u.target_s) == ("serial", 20 * 3600, 72 * 3600)
    assert set(seven_u.findings.exclude(severity="info").values_list("code", "severity", "subject")) == {
        ("stage_incomplete", "fail", "stage burn"),
        ("burnin_too_short", "fail", "burn-in"),
        ("thermal_margin_low", "warn", "GPU 1"),
        ("ecc_correlated_periodic", "warn", "DIMMs A1, B1"),
        ("host_dimm_correctable", "warn", "DIMM A1"),
        ("host_dimm_correctable", "warn", "DIMM B1"),
    }
    assert seven_u.report.storage.exists(seven_u.report.name)

    fleet = runs["Vastfleet Rentals GmbH"]
    assert (fleet.server.status, fleet.result) == (
        "handed_over",
        "pass",
    )  # passed, then deployed (deployment.demo) and handed over (warranty.demo)
    assert fleet.server.burnin_gpu_power_w == 8 * 561  # the figure its rack's feeds count
    assert fleet.gpu_results.count() == 8
    assert (fleet.binding, fleet.full_load_s, fleet.target_s) == ("uuid", 72 * 3600, 72 * 3600)
    assert not fleet.findings.exclude(severity="info").exists()
    # Its first run, five days earlier, failed by two cards, which the rework took out as faulty.
    [first] = burn_ins.filter(server=fleet.server).exclude(pk=fleet.pk)
    assert (first.result, first.accepted_at, fleet.started_at - first.started_at) == (
        "fail",
        None,
        timedelta(days=5),
    )
    assert set(first.findings.filter(severity="fail").values_list("code", "gpu_index")) == {
        ("gpu_ecc_uncorrectable", 2),
        ("compute_errors", 5),
    }
    failed = {result.component for result in first.gpu_results.filter(index__in=(2, 5))}
    # Both went back to their supplier: the first came back as a replacement, the second is still there.
    assert {component.status for component in failed} == {"scrapped", "rma"}
    assert len({component.lot_id for component in failed}) == 1
    assert not ({result.component for result in fleet.gpu_results.all()} & failed)
