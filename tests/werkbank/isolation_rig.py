"""The tenant-isolation world and its builders, shared by the isolation tests (test_isolation*.py) and the
audience tests (test_audiences.py).

Customer A's order in ROI review and customer B's order, a purchase order delivered to partner P's workshop,
partly received; the builders add, on demand, P's bench on a server of A's order, a burn-in gate with a
failing run, a colocation rack with A's servers, and a handed-over server with its warranty.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase

from builds.choices import ConnectorKind, ServerStatus
from builds.models import (
    Allocation,
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    Installation,
    LayoutConnector,
    Server,
)
from builds.services import server_assign_partner, servers_create_for_order
from deployment.services import (
    feed_create,
    listing_record,
    network_set,
    placement_create,
    rack_create,
    site_create,
)
from orders.choices import OrderStatus
from orders.models import Workload
from tests import factories
from tests.tenants_rig import Tenants, api_client


@dataclass
class World:
    t: Tenants
    order_a: Any
    order_b: Any
    part: Any
    po_p: Any
    _builds: Any = None

    @property
    def intruders(self) -> list[Any]:
        return [self.t.user_b, self.t.user_p, self.t.user_q, self.t.outsider]

    @property
    def not_partner_p(self) -> list[Any]:
        """Everyone but PMs and partner P: P's purchase orders are none of their business."""
        return [self.t.user_a, self.t.user_b, self.t.user_q, self.t.outsider]


@pytest.fixture
def world(tenants: Tenants, settings: Any, tmp_path: Any) -> World:
    settings.MEDIA_ROOT = tmp_path / "media"
    order_a = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    order_b = factories.OrderFactory(customer=tenants.customer_b)
    factories.ROIAssessmentFactory(order=order_a)
    factories.ROIAssessmentFactory(order=order_b)
    Workload.objects.create(order=order_a, preset="llama-3.1-8b", context_tokens=8192)
    # A PO delivered to partner P's workshop, partly received: P may see it; Q, customers and others not.
    gpu_a = order_a.configuration.lines.get(part__category="gpu").part  # installable in order A's servers
    po_p = factories.receive_stock(
        deliver_to=tenants.partner_p, part=gpu_a, quantity=4, lots={"L-P": ["P-SERIAL-1", "P-SERIAL-2"]}
    )
    return World(
        t=tenants, order_a=order_a, order_b=order_b, part=order_a.configuration.lines.first().part, po_p=po_p
    )


def _ids(response: Any) -> set[int]:
    assert response.status_code == 200, response.content
    return {row["id"] for row in response.json()["results"]}


def _assert_404(users: list[Any], method: str, url: str, body: dict | None = None) -> None:
    for user in users:
        response = getattr(api_client(user), method)(url, body or {}, format="json")
        assert response.status_code == 404, (user.username, method, url, response.status_code)


# --- builds: partner P's bench on a server of customer A's order ---------------------------------------


#: A valid ROI assessment body: the ROI routes are tried with it.
ROI_BODY = {
    "capex": "100000",
    "gpu_count": 8,
    "price_per_gpu_hour": "1.00",
    "utilization": "0.6",
    "power_active_kw": "6.3",
    "power_idle_kw": "1.2",
    "energy_price_kwh": "0.15",
    "pue": "1.3",
    "colo_month": "600",
}


@dataclass
class Builds:
    server: Any
    connector: Any
    installation: Any
    allocation: Any
    step: Any
    photo: Any
    layout: Any


# A valid 1×1 PNG: the photo the bench routes are tried on.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c49444154789c63f8cfc0"
    "000003010100c9fe92ef0000000049454e44ae426082"
)


def _builds(w: World) -> Builds:
    """Built on demand, so that the inventory cases above keep counting only their own rows."""
    if w._builds is None:
        chassis = w.order_a.configuration.lines.get(part__category="chassis").part
        layout = ChassisLayout.objects.create(chassis=chassis)
        for position, name in enumerate(["PCIe-1", "PCIe-2"], start=1):
            LayoutConnector.objects.create(
                layout=layout, name=name, kind=ConnectorKind.PCIE_SLOT, position=position
            )
        server = servers_create_for_order(order=w.order_a, actor=w.t.pm)[0]
        server_assign_partner(server=server, actor=w.t.pm, partner=w.t.partner_p)
        p = api_client(w.t.user_p)
        base = f"/api/v1/builds/servers/{server.pk}"
        assert p.post(f"{base}/install/", {"serial": "P-SERIAL-1", "connector": "PCIe-1"}).status_code == 201
        step = p.post(f"{base}/steps/", {"kind": "note"}, format="json").json()["id"]
        upload = SimpleUploadedFile("p.png", PNG, content_type="image/png")
        with TestCase.captureOnCommitCallbacks(execute=True):  # the photo's file is written on commit
            response = p.post(f"{base}/photos/", {"photo": upload, "step": step}, format="multipart")
        photo = response.json()["id"]
        w._builds = Builds(
            server=server,
            connector=server.connectors.get(name="PCIe-2"),
            installation=Installation.objects.get(server=server),
            allocation=Allocation.objects.get(server=server),
            step=BuildStep.objects.get(pk=step),
            photo=BuildPhoto.objects.get(pk=photo),
            layout=layout,
        )
    return w._builds


# --- burn-in gate: a server of customer A's order, built by P, in burn-in with a failing run ------------


@dataclass
class BurninGate:
    server: Any
    fail: Any


def _burnin_gate(w: World) -> BurninGate:
    server = _builds(w).server
    Server.objects.filter(pk=server.pk).update(status=ServerStatus.BURN_IN)
    run = factories.make_burnin_run(
        server,
        findings=[
            {
                "code": "pcie_link_downtrained",
                "severity": "fail",
                "subject": "GPU 0",
                "message": "GPU 0 at x8",
            },
            {"code": "thermal_margin_low", "severity": "warn", "subject": "GPU 1", "message": "GPU 1: 2 °C"},
        ],
    )
    return BurninGate(server=server, fail=run.findings.get(severity="fail"))


# --- deployment: customer A's servers (built by P) in a colocation rack, one ready, one deployed and listed -


@dataclass
class Deployment:
    site: Any
    rack: Any
    feed: Any
    ready: Any
    placement: Any
    network: Any
    listing: Any


def _deployment(w: World) -> Deployment:
    order = factories.OrderFactory(customer=w.t.customer_a, server_count=2)
    factories.make_servers(order, status=ServerStatus.BURN_IN_PASSED)
    order.servers.update(partner=w.t.partner_p)
    ready, live = order.servers.order_by("sequence")
    pm = w.t.pm
    site = site_create(
        actor=pm, name="Sofia", kind="colocation", operator="T", customer=None, address="A", country="BG"
    )
    rack = rack_create(site=site, actor=pm, name="R1")
    feed = feed_create(rack=rack, actor=pm, name="PDU-A", voltage_v=230, current_a=32)
    placement = placement_create(
        server=ready, rack=rack, lowest_u=1, feeds=[feed], actor=pm, measured_wall_w=1
    )
    placement_create(server=live, rack=rack, lowest_u=10, feeds=[feed], actor=pm, measured_wall_w=1)
    network = network_set(
        server=ready, actor=pm, management_ip="10.0.0.1", bmc_ip="10.1.0.1", bmc_mac="3c:ec:ef:00:00:01"
    )
    Server.objects.filter(pk=live.pk).update(status=ServerStatus.DEPLOYED)
    live.refresh_from_db()
    listing = listing_record(server=live, actor=pm, platform="vast_ai", machine_id="4711")
    return Deployment(
        site=site, rack=rack, feed=feed, ready=ready, placement=placement, network=network, listing=listing
    )


# --- warranty: customer A's server (built by P) handed over, with records, a registration and a claim ----


@dataclass
class Warranty:
    record: Any
    registration: Any
    claim: Any
    deployed: Any
    attachment: Any = None


#: The log customer A filed its claim with (its file is written as the commit would write it).
CLAIM_LOG = b"[ 4711.0] NVRM: Xid (PCI:0000:41:00): 79, GPU has fallen off the bus.\n"


def _warranty(w: World) -> Warranty:
    from warranty.choices import PackStatus
    from warranty.models import HandoverPack, WarrantyRegistration
    from warranty.services import Upload, claim_open, warranty_records_create

    cached = getattr(w, "_warranty", None)
    if cached is not None:
        return cached
    b = _builds(w)
    Server.objects.filter(pk=b.server.pk).update(status=ServerStatus.HANDED_OVER)
    records = warranty_records_create(server=b.server, actor=w.t.pm)
    record = next(r for r in records if r.serial == "P-SERIAL-1")
    claim = claim_open(
        record=record,
        actor=w.t.user_a,
        description="It fell silent",
        attachments=[Upload("dmesg.log", CLAIM_LOG)],
    )
    attachment = claim.attachments.get()
    if not attachment.file.storage.exists(attachment.file.name):  # no commit in a test's transaction
        attachment.file.storage.save(attachment.file.name, ContentFile(CLAIM_LOG))
    order = factories.OrderFactory(customer=w.t.customer_a, server_count=1)
    [deployed] = factories.make_servers(order, status=ServerStatus.DEPLOYED)
    Server.objects.filter(pk=deployed.pk).update(partner=w.t.partner_p)
    HandoverPack.objects.create(
        server=deployed, revision=1, status=PackStatus.READY, progress=100, pdf="p.pdf", zip="p.zip",
        pdf_sha256="a" * 64, zip_sha256="b" * 64,
    )  # fmt: skip
    w._warranty = Warranty(  # type: ignore[attr-defined]
        record=record,
        registration=WarrantyRegistration.objects.get(allocation=b.allocation),
        claim=claim,
        deployed=deployed,
        attachment=attachment,
    )
    return w._warranty  # type: ignore[attr-defined]


def router_route_names() -> set[str]:
    from werkbank.urls import api_router as router

    return {pattern.name for pattern in router.urls if pattern.name != "api-root"}
