"""The rich order of the export tests, on the builds tests' bench: ROI and workload, servers built on the
bench (installation, allocation, blacklist, step, photo), a burn-in run with stages, findings, a GPU result
and a BMC event, a placement on two feeds, a network record with encrypted BMC credentials, a platform
listing, warranty records with a claim and an expiry notice, and the audit trail of all of it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.apps import apps
from django.db import models

from builds.models import Server
from burnin.models import BmcEvent, GpuResult
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
from warranty.models import ExpiryNotice
from warranty.services import claim_open, warranty_records_create

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


def rich_order(bench_built: Any) -> Order:
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


#: The project's apps, bottom to top: the export tests walk every model of each.
PROJECT_APPS = [
    "werkbank",
    "inventory",
    "orders",
    "builds",
    "burnin",
    "deployment",
    "warranty",
    "portal",
    "pm",
    "ops",
]


def project_models() -> list[type[models.Model]]:
    """Every model of every app of the project, from the app registry."""
    return [model for label in PROJECT_APPS for model in apps.get_app_config(label).get_models()]
