"""Serial identity at the bench scan: a serial matches in any letter case, and a serial that several
manufacturers printed is told apart by the connector's kind or by the manufacturer the scan names."""

from __future__ import annotations

import pytest

from builds.models import Allocation, Installation
from inventory.choices import PartCategory
from tests import factories
from tests.builds.bench_rig import post, snapshot

pytestmark = pytest.mark.django_db


def test_a_scan_in_lower_case_finds_the_component(bench):
    response = post(bench.t.user_p, bench.url("install/"), {"serial": " gpu-l1-2 ", "connector": "PCIe-2"})
    assert response.status_code == 201, response.json()
    assert response.json()["serial"] == "GPU-L1-2"  # stored as received, found in any letter case

    response = post(bench.t.user_p, bench.url("allocate/"), {"serials": ["dimm-1", "Dimm-2"]})
    assert response.status_code == 201, response.json()
    assert sorted(row["serial"] for row in response.json()) == ["DIMM-1", "DIMM-2"]

    response = post(
        bench.t.user_p, bench.url("move/"), {"serial": "gPu-L1-2", "to_connector": "pcie-1", "reason": "x"}
    )
    assert response.status_code == 200, response.json()
    assert response.json()["connector_name"] == "PCIe-1"


@pytest.fixture
def shared(bench):
    """SN-SHARED is printed by NVIDIA (a GPU on the BOM) and by PNY (a GPU off it), both at P's workshop."""
    pny = factories.PartFactory(manufacturer="PNY", name="RTX 5090 PNY")
    factories.receive_stock(part=bench.gpu, deliver_to=bench.t.partner_p, lots={"L-SHARED": ["SN-SHARED"]})
    factories.receive_stock(part=pny, deliver_to=bench.t.partner_p, lots={"L-PNY": ["sn-shared"]})
    return bench


def test_the_same_serial_from_two_manufacturers_needs_the_manufacturer(shared):
    bench = shared
    before = snapshot()
    response = post(bench.t.user_p, bench.url("install/"), {"serial": "SN-SHARED", "connector": "PCIe-2"})
    assert response.status_code == 400
    assert list(response.json()) == ["manufacturer"]
    assert "2 manufacturers (NVIDIA, PNY)" in response.json()["manufacturer"][0]
    response = post(bench.t.user_p, bench.url("allocate/"), {"serials": ["sn-shared"]})
    assert response.status_code == 400
    assert "manufacturer" in response.json()
    assert snapshot() == before

    response = post(
        bench.t.user_p,
        bench.url("install/"),
        {"serial": "sn-shared", "manufacturer": "nvidia", "connector": "PCIe-2"},
    )
    assert response.status_code == 201, response.json()
    installed = Installation.objects.get(connector__name="PCIe-2", removed_at__isnull=True).component
    assert (installed.manufacturer, installed.part) == ("NVIDIA", bench.gpu)

    # A manufacturer that did not print the serial finds nothing.
    response = post(
        bench.t.user_p, bench.url("allocate/"), {"serials": ["SN-SHARED"], "manufacturer": "Samsung"}
    )
    assert response.status_code == 404
    assert response.json()["serial"] == ["no component with serial 'SN-SHARED' from 'Samsung'."]


def test_the_connectors_kind_tells_a_dimm_from_a_gpu(bench):
    factories.receive_stock(part=bench.gpu, deliver_to=bench.t.partner_p, lots={"L-K": ["SN-KIND"]})
    factories.receive_stock(part=bench.dimm, deliver_to=bench.t.partner_p, lots={"L-K": ["SN-KIND"]})
    response = post(bench.t.user_p, bench.url("install/"), {"serial": "sn-kind", "connector": "DIMM-A1"})
    assert response.status_code == 201, response.json()
    assert Installation.objects.get(connector__name="DIMM-A1").component.part == bench.dimm
    # Without a connector nothing narrows it: allocating asks for the manufacturer.
    response = post(bench.t.user_p, bench.url("allocate/"), {"serials": ["SN-KIND"]})
    assert response.status_code == 400
    assert "(NVIDIA, Samsung)" in response.json()["manufacturer"][0]
    body = {"serials": ["SN-KIND"], "manufacturer": "NVIDIA"}
    response = post(bench.t.user_p, bench.url("allocate/"), body)
    assert response.status_code == 201, response.json()
    allocation = Allocation.objects.get(component__serial="SN-KIND", component__part=bench.gpu)
    assert allocation.server == bench.server


def test_the_manufacturers_named_are_only_those_the_user_may_see(bench):
    q_gpu = factories.PartFactory(manufacturer="Quelle Cards", name="Q's own GPU")
    factories.receive_stock(part=bench.gpu, deliver_to=bench.t.partner_p, lots={"L-V": ["SN-VIS"]})
    factories.receive_stock(part=bench.dimm, deliver_to=bench.t.partner_p, lots={"L-V": ["SN-VIS"]})
    factories.receive_stock(part=q_gpu, deliver_to=bench.t.partner_q, lots={"L-Q": ["SN-VIS", "SN-ONLY-P"]})
    factories.receive_stock(part=bench.gpu, deliver_to=bench.t.partner_p, lots={"L-W": ["SN-ONLY-P"]})

    response = post(bench.t.user_p, bench.url("allocate/"), {"serials": ["SN-VIS"]})
    assert response.status_code == 400
    message = response.json()["manufacturer"][0]
    assert "2 manufacturers (NVIDIA, Samsung)" in message
    assert "Quelle" not in message

    # Q's component of the same serial is not P's to see: for P the serial is unique.
    response = post(bench.t.user_p, bench.url("install/"), {"serial": "sn-only-p", "connector": "PCIe-2"})
    assert response.status_code == 201, response.json()


def test_a_pm_sees_every_workshop_so_the_pm_is_asked(bench):
    q_gpu = factories.PartFactory(category=PartCategory.GPU, manufacturer="Quelle Cards")
    factories.receive_stock(part=q_gpu, deliver_to=bench.t.partner_q, lots={"L-Q": ["GPU-L1-3"]})
    response = post(bench.t.pm, bench.url("install/"), {"serial": "GPU-L1-3", "connector": "PCIe-2"})
    assert response.status_code == 400
    assert "(NVIDIA, Quelle Cards)" in response.json()["manufacturer"][0]
    # P sees only its own: no question asked.
    response = post(bench.t.user_p, bench.url("install/"), {"serial": "GPU-L1-3", "connector": "PCIe-2"})
    assert response.status_code == 201, response.json()
