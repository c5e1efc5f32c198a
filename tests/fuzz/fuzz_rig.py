"""The world the API fuzzer runs in: every kind of object the API serves, for two customers and two
partners, so that a fuzzed id names a real object some of the time (see test_schemathesis.py).

tests/fuzz/conftest.py registers `fuzz_world` and the builds bench it stands on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.db.models import Model

from builds.models import Server
from builds.services import server_install
from inventory.models import Component
from tests import factories
from tests.deployment.rack_rig import make_rack_world
from tests.tenants_rig import Tenants
from warranty.services import claim_open, warranty_records_create


@dataclass
class FuzzWorld:
    t: Tenants
    objects: list[Model]


@pytest.fixture
def fuzz_world(built: Any, tenants: Tenants) -> FuzzWorld:
    """Partner P's bench (installed GPU, allocation, blacklisted slot, step, photo), a rack with two placed
    servers and a network record, an order waiting for approval with its ROI, and a burn-in run with a
    warning and a failure; a handed-over server with its warranty record and a claim."""
    rack = make_rack_world(tenants)
    draft = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a, server_count=1))
    passed = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [burned] = factories.make_servers(passed, status="burn_in_failed")
    Server.objects.filter(pk=burned.pk).update(partner=tenants.partner_p)
    run = factories.make_burnin_run(
        burned,
        stages=[{"name": "gpu-stress", "status": "ok"}, {"name": "nccl", "status": "failed"}],
        findings=[
            {"code": "GPU_TEMP_HIGH", "severity": "warn"},
            {"code": "NCCL_BANDWIDTH_LOW", "severity": "fail"},
        ],
    )
    # Warranty: customer A's second bench server, with a GPU, handed over: its records and a claim.
    handed = built[0].other_server
    gpu = Component.objects.get(serial="GPU-L1-2")
    server_install(server=handed, actor=tenants.pm, component=gpu, connector_name="PCIe-1")
    Server.objects.filter(pk=handed.pk).update(status="handed_over")
    records = warranty_records_create(server=handed, actor=tenants.pm)
    [record] = [record for record in records if record.component_id == gpu.pk]
    claim = claim_open(record=record, actor=tenants.user_a, description="It stopped")
    return FuzzWorld(t=tenants, objects=[draft, rack.rack, run, claim])
