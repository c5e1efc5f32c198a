"""Scanning serials into connectors through the API: install, remove, move and allocate, all or nothing."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from builds.models import Allocation, Installation
from inventory.choices import ComponentStatus
from inventory.models import Component
from tests import factories
from tests.builds.bench_rig import (
    DIMMS,
    GPU_L2,
    GPUS_L1,
    blacklist,
    connector_map,
    get,
    install,
    post,
    snapshot,
)
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_install_puts_the_component_into_the_connector_and_on_the_map(bench):
    response = install(bench, "GPU-L1-1", "PCIe-1")

    body = response.json()
    assert (body["serial"], body["connector_name"], body["active"], body["installed_by"]) == (
        "GPU-L1-1",
        "PCIe-1",
        True,
        "petr",
    )
    component = Component.objects.get(serial="GPU-L1-1")
    assert component.status == ComponentStatus.INSTALLED
    assert component.location == f"{bench.server.hostname} PCIe-1"
    # Scanned straight from stock: allocated on the way, with the warranty in the customer's name (the
    # warranty app's registration, written on builds' components_allocated signal).
    allocation = Allocation.objects.get(component=component)
    assert allocation.warranty_registration.customer == bench.t.customer_a

    entries = connector_map(bench)
    assert list(entries) == ["PCIe-1", "PCIe-2", "Riser-1", "DIMM-A1", "DIMM-A2", "Chassis"]
    assert entries["PCIe-1"]["state"] == "occupied"
    assert (entries["PCIe-1"]["serial"], entries["PCIe-1"]["part_mpn"]) == ("GPU-L1-1", bench.gpu.mpn)
    assert {entries[name]["state"] for name in entries if name != "PCIe-1"} == {"free"}
    assert get(bench.t.user_p, bench.url("connector-map/")).json()["columns"] == 3

    server = get(bench.t.pm, bench.url()).json()
    assert (server["connector_count"], server["installed_count"], server["blacklisted_count"]) == (6, 1, 0)


def test_an_unknown_serial_is_a_404_that_names_it(bench):
    before = snapshot()

    response = post(bench.t.user_p, bench.url("install/"), {"serial": "NOPE-4711", "connector": "PCIe-1"})

    assert response.status_code == 404
    assert "NOPE-4711" in response.json()["serial"][0]
    assert "NOPE-4711" in response.json()["detail"]
    assert snapshot() == before


def test_a_component_allocated_to_another_server_is_a_409_naming_that_server(bench):
    response = post(bench.t.pm, bench.url("allocate/", bench.other_server), {"serials": ["GPU-L1-1"]})
    assert response.status_code == 201, response.json()
    before = snapshot()

    response = post(bench.t.user_p, bench.url("install/"), {"serial": "GPU-L1-1", "connector": "PCIe-1"})

    assert response.status_code == 409
    assert bench.other_server.hostname in response.json()["detail"]
    assert response.json()["code"] == "component_taken"
    assert snapshot() == before
    assert Component.objects.get(serial="GPU-L1-1").status == ComponentStatus.ALLOCATED


def test_a_blacklisted_connector_is_a_409_quoting_the_reason(bench):
    assert blacklist(bench, "PCIe-1", "intermittent link training at x8").status_code == 201
    before = snapshot()

    response = post(bench.t.user_p, bench.url("install/"), {"serial": "GPU-L1-1", "connector": "PCIe-1"})

    assert response.status_code == 409
    assert '"intermittent link training at x8"' in response.json()["detail"]
    assert response.json()["code"] == "connector_blacklisted"
    assert snapshot() == before
    assert Component.objects.get(serial="GPU-L1-1").status == ComponentStatus.IN_STOCK


def test_a_dimm_in_a_pcie_slot_is_a_400_naming_the_connector(bench):
    before = snapshot()

    response = post(bench.t.user_p, bench.url("install/"), {"serial": DIMMS[0], "connector": "PCIe-1"})

    assert response.status_code == 400
    assert "DIMM slot" in response.json()["connector"][0]
    assert snapshot() == before


def test_an_unknown_connector_is_a_400(bench):
    before = snapshot()
    response = post(bench.t.user_p, bench.url("install/"), {"serial": "GPU-L1-1", "connector": "PCIe-9"})
    assert response.status_code == 400
    assert "PCIe-9" in response.json()["connector"][0]
    assert snapshot() == before


def test_an_occupied_connector_is_a_409_naming_its_occupant(bench):
    install(bench, "GPU-L1-1", "PCIe-1")
    before = snapshot()

    response = post(bench.t.user_p, bench.url("install/"), {"serial": "GPU-L1-2", "connector": "pcie-1"})

    assert response.status_code == 409
    assert "GPU-L1-1" in response.json()["detail"]
    assert response.json()["code"] == "connector_occupied"
    assert snapshot() == before
    assert Component.objects.get(serial="GPU-L1-2").status == ComponentStatus.IN_STOCK


def test_a_removal_needs_a_reason(bench):
    install(bench, "GPU-L1-1", "PCIe-1")
    before = snapshot()

    for body in (
        {"serial": "GPU-L1-1"},
        {"serial": "GPU-L1-1", "reason": ""},
        {"serial": "GPU-L1-1", "reason": " "},
    ):
        response = post(bench.t.user_p, bench.url("remove/"), body)
        assert response.status_code == 400, body
        assert "reason" in response.json()
    assert snapshot() == before

    response = post(bench.t.user_p, bench.url("remove/"), {"serial": "GPU-L1-1", "reason": "bent bracket"})

    assert response.status_code == 200, response.json()
    assert (response.json()["active"], response.json()["removal_reason"]) == (False, "bent bracket")
    assert Component.objects.get(serial="GPU-L1-1").status == ComponentStatus.ALLOCATED
    assert connector_map(bench)["PCIe-1"]["state"] == "free"


def test_a_faulty_component_leaves_the_server_failed_for_its_supplier_return(bench):
    install(bench, "GPU-L1-1", "PCIe-1")

    response = post(
        bench.t.user_p,
        bench.url("remove/"),
        {"serial": "GPU-L1-1", "reason": "uncorrectable ECC in burn-in", "failed": True},
    )

    assert response.status_code == 200, response.json()
    component = Component.objects.get(serial="GPU-L1-1")
    assert component.status == ComponentStatus.FAILED
    assert not component.allocations.filter(released_at__isnull=True).exists()
    assert component.movements.order_by("created_at", "id").last().reason.startswith("Removed as failed from")
    assert connector_map(bench)["PCIe-1"]["state"] == "free"


def test_removing_what_is_not_installed_is_a_409_and_an_unknown_serial_a_404(bench):
    assert post(bench.t.user_p, bench.url("allocate/"), {"serials": ["GPU-L1-1"]}).status_code == 201
    before = snapshot()

    not_installed = post(bench.t.user_p, bench.url("remove/"), {"serial": "GPU-L1-1", "reason": "x"})
    unknown = post(bench.t.user_p, bench.url("remove/"), {"serial": "NOPE-1", "reason": "x"})

    assert not_installed.status_code == 409
    assert not_installed.json()["code"] == "not_installed"
    assert unknown.status_code == 404
    assert "NOPE-1" in unknown.json()["detail"]
    assert snapshot() == before


def test_move_keeps_the_history(bench):
    install(bench, "GPU-L1-1", "PCIe-1")

    response = post(
        bench.t.user_p,
        bench.url("move/"),
        {"serial": "GPU-L1-1", "to_connector": "Riser-1", "reason": "airflow: keep PCIe-1 free"},
    )

    assert response.status_code == 200, response.json()
    assert (response.json()["connector_name"], response.json()["active"]) == ("Riser-1", True)
    entries = connector_map(bench)
    assert (entries["PCIe-1"]["state"], entries["Riser-1"]["serial"]) == ("free", "GPU-L1-1")
    history = get(
        bench.t.user_p, "/api/v1/builds/installations/", server=bench.server.pk, serial="GPU-L1-1"
    ).json()["results"]
    assert [(row["connector_name"], row["active"], row["removal_reason"]) for row in history] == [
        ("PCIe-1", False, "airflow: keep PCIe-1 free"),
        ("Riser-1", True, ""),
    ]
    active = get(bench.t.user_p, "/api/v1/builds/installations/", serial="GPU-L1-1", active="true")
    assert [row["connector_name"] for row in active.json()["results"]] == ["Riser-1"]


def test_a_refused_move_changes_nothing(bench):
    install(bench, "GPU-L1-1", "PCIe-1")
    install(bench, "GPU-L1-2", "PCIe-2")
    before = snapshot()

    wrong_kind = post(
        bench.t.user_p, bench.url("move/"), {"serial": "GPU-L1-1", "to_connector": "DIMM-A1", "reason": "x"}
    )
    occupied = post(
        bench.t.user_p, bench.url("move/"), {"serial": "GPU-L1-1", "to_connector": "PCIe-2", "reason": "x"}
    )
    no_reason = post(
        bench.t.user_p, bench.url("move/"), {"serial": "GPU-L1-1", "to_connector": "Riser-1", "reason": ""}
    )

    assert (wrong_kind.status_code, occupied.status_code, no_reason.status_code) == (400, 409, 400)
    assert snapshot() == before
    assert connector_map(bench)["PCIe-1"]["serial"] == "GPU-L1-1"


def test_allocation_registers_the_warranty_to_the_customer(bench):
    response = post(bench.t.user_p, bench.url("allocate/"), {"serials": [*GPUS_L1, *DIMMS]})

    assert response.status_code == 201, response.json()
    rows = response.json()
    assert sorted(row["serial"] for row in rows) == sorted([*GPUS_L1, *DIMMS])
    assert {row["lot_code"] for row in rows if row["part_mpn"] == bench.gpu.mpn} == {"L1"}
    allocations = Allocation.objects.filter(server=bench.server)
    assert {allocation.warranty_registration.customer for allocation in allocations} == {bench.t.customer_a}
    assert set(Component.objects.filter(serial__in=GPUS_L1).values_list("status", flat=True)) == {
        ComponentStatus.ALLOCATED
    }
    event = AuditEvent.objects.filter(verb="server.allocate").get()
    assert event.after["customer"] == bench.t.customer_a.name
    registered = AuditEvent.objects.filter(verb="warranty.register").get()
    assert registered.after["customer"] == bench.t.customer_a.name
    assert sorted(registered.after["serials"]) == sorted([*GPUS_L1, *DIMMS])


def test_one_unknown_serial_allocates_nothing(bench):
    before = snapshot()
    response = post(bench.t.user_p, bench.url("allocate/"), {"serials": ["GPU-L1-1", "NOPE-2"]})
    assert response.status_code == 404
    assert "NOPE-2" in response.json()["detail"]
    assert snapshot() == before


def test_an_empty_allocation_is_a_400(bench):
    response = post(bench.t.user_p, bench.url("allocate/"), {"serials": []})
    assert response.status_code == 400
    assert "serials" in response.json()


def test_mixed_gpu_lots_need_a_pm_override(bench):
    assert post(bench.t.user_p, bench.url("allocate/"), {"serials": GPUS_L1[:2]}).status_code == 201
    before = snapshot()

    refused = post(bench.t.user_p, bench.url("allocate/"), {"serials": [GPU_L2]})
    partner_override = post(
        bench.t.user_p, bench.url("allocate/"), {"serials": [GPU_L2], "override_reason": "L1 ran out"}
    )
    pm_without_reason = post(bench.t.pm, bench.url("allocate/"), {"serials": [GPU_L2]})
    scanned_in = post(bench.t.user_p, bench.url("install/"), {"serial": GPU_L2, "connector": "PCIe-1"})

    for response in (refused, partner_override, pm_without_reason, scanned_in):
        assert response.status_code == 409, response.json()
        assert response.json()["code"] == "mixed_lot"
    assert "L1, L2" in refused.json()["detail"]
    assert "project manager" in partner_override.json()["detail"]
    assert snapshot() == before

    allowed = post(
        bench.t.pm,
        bench.url("allocate/"),
        {"serials": [GPU_L2], "override_reason": "L1 short by one card; customer agreed by mail"},
    )

    assert allowed.status_code == 201, allowed.json()
    assert allowed.json()[0]["lot_override_reason"] == "L1 short by one card; customer agreed by mail"
    assert AuditEvent.objects.filter(verb="server.allocate").latest("pk").note.startswith("L1 short")
    # Once allocated with the override, the partner scans it in like any other card.
    install(bench, GPU_L2, "PCIe-1")
    assert Installation.objects.filter(component__serial=GPU_L2, removed_at__isnull=True).count() == 1


def test_a_part_off_the_bill_of_materials_is_refused(bench):
    """Only parts of the order's configuration go into its servers."""
    stray = factories.PartFactory(mpn="STRAY-GPU")
    factories.receive_stock(deliver_to=bench.t.partner_p, part=stray, lots={"L-STRAY": ["STRAY-1"]})
    before = snapshot()

    response = post(bench.t.user_p, bench.url("install/"), {"serial": "STRAY-1", "connector": "PCIe-1"})

    assert response.status_code == 409
    assert response.json()["code"] == "not_on_bom"
    assert "STRAY-GPU STRAY-1 is not on the bill of materials" in response.json()["detail"]
    assert snapshot() == before


def test_stock_at_another_partners_workshop_is_refused(bench):
    """A component held by partner Q's workshop cannot go into a server that partner P builds."""
    factories.receive_stock(deliver_to=bench.t.partner_q, part=bench.gpu, lots={"L-Q": ["AT-Q-1"]})
    before = snapshot()

    response = post(bench.t.pm, bench.url("install/"), {"serial": "AT-Q-1", "connector": "PCIe-1"})

    assert response.status_code == 409
    assert response.json()["code"] == "component_elsewhere"
    assert f"Workshop {bench.t.partner_q.name}" in response.json()["detail"]
    assert snapshot() == before


def _json_schema(node: Any, components: dict[str, Any]) -> Any:
    """An OpenAPI 3.0 schema as JSON Schema: `$ref` resolved, `nullable: true` as "or null"."""
    if isinstance(node, list):
        return [_json_schema(item, components) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _json_schema(components[node["$ref"].rsplit("/", 1)[1]], components)
    converted = {key: _json_schema(value, components) for key, value in node.items() if key != "nullable"}
    return {"anyOf": [converted, {"type": "null"}]} if node.get("nullable") else converted


def test_installations_answer_what_the_schema_allows(bench):
    """Issue 16: `removed_by: null` (an active installation) broke the OpenAPI schema's promise."""
    from drf_spectacular.generators import SchemaGenerator

    install(bench, "GPU-L1-1", "PCIe-1")
    post(bench.t.user_p, bench.url("remove/"), {"serial": "GPU-L1-1", "reason": "reseat"})
    install(bench, "GPU-L1-1", "PCIe-1")
    rows = get(bench.t.user_p, "/api/v1/builds/installations/", serial="GPU-L1-1").json()["results"]
    assert [row["removed_by"] for row in rows] == ["petr", None]

    components = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    schema = _json_schema(components["Installation"], components)
    for row in rows:
        jsonschema.validate(row, schema)
