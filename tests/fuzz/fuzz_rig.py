"""The world the API fuzzer runs in: every kind of object the API serves, for two customers and two
partners, so that a fuzzed id names a real object some of the time (see test_schemathesis.py); the checks
every answer must pass, and how a path id finds the real objects it may name.

tests/fuzz/conftest.py registers `fuzz_world`, `keep_the_test_connection` and the builds bench they stand
on."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.db.models import Model
from django.urls import Resolver404, resolve
from schemathesis.checks import CheckFunction, not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from builds.models import Server
from builds.services import server_install
from deployment.services import prefix_create
from inventory.models import Component
from tests import factories
from tests.deployment.rack_rig import make_rack_world
from tests.tenants_rig import Tenants
from warranty.services import claim_open, warranty_records_create
from werkbank.wsgi import application

CHECKS: list[CheckFunction] = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
CONFIG = schemathesis.config.SchemathesisConfig.from_dict(
    {"phases": {"coverage": {"enabled": False}, "stateful": {"enabled": False}}}
)


def api_operations() -> list[Any]:
    """Every operation of `/api/schema/`, loaded through the WSGI application (the test's database)."""
    schema = schemathesis.openapi.from_wsgi("/api/schema/", application, config=CONFIG)
    return [result.ok() for result in schema.get_all_operations() if isinstance(result, Ok)]


@cache
def _id_source(path: str, parameter: str) -> tuple[Any, str] | None:
    """The model and field a path parameter looks up, from the view its URL resolves to."""
    try:
        match = resolve(re.sub(r"\{[^}]+\}", "1", path))
    except Resolver404:
        return None
    view = getattr(match.func, "cls", None)
    queryset = getattr(view, "queryset", None)
    if queryset is None:
        return None
    lookup_field = getattr(view, "lookup_field", "pk")
    if parameter not in {"id", lookup_field, getattr(view, "lookup_url_kwarg", None)}:
        return None
    return queryset.model, lookup_field


def real_ids(path: str, parameter: str) -> list[Any]:
    """Up to 20 values of `parameter` in `path` (an OpenAPI path) that name a real object."""
    source = _id_source(path, parameter)
    if source is None:
        return []
    model, field = source
    return list(model._default_manager.order_by(field).values_list(field, flat=True)[:20])


@pytest.fixture
def keep_the_test_connection() -> Iterator[None]:
    """The WSGI handler closes the database connection around each request, and with it the test's
    transaction; Django's own test client holds these signals off the same way."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@dataclass
class FuzzWorld:
    t: Tenants
    objects: list[Model]


@pytest.fixture
def fuzz_world(built: Any, tenants: Tenants) -> FuzzWorld:
    """Partner P's bench (installed GPU, allocation, blacklisted slot, step, photo), a rack with two placed
    servers, a network record and a management prefix, an order waiting for approval with its ROI, and a
    burn-in run with a warning and a failure; a handed-over server with its warranty record and a claim."""
    rack = make_rack_world(tenants)
    prefix_create(site=rack.rack.site, prefix="10.200.0.0/24", role="management", vlan=200, actor=tenants.pm)
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
