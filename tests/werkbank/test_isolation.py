"""Tenant isolation over every API route.

Customer B, partner Q and a user with no membership try customer A's objects: detail routes and actions
answer 404, lists leave A's rows out, filters refuse A's ids. The meta-test fails when the router has a route
that no case covers, so a new endpoint cannot ship without its isolation case.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import TestCase

from builds.choices import ConnectorKind, ServerStatus
from builds.models import (
    Allocation,
    BuildPhoto,
    BuildStep,
    ChassisLayout,
    ConnectorBlacklist,
    Installation,
    LayoutConnector,
    Server,
)
from builds.services import server_assign_partner, servers_create_for_order
from burnin.models import BurnInRun
from deployment.services import (
    feed_create,
    listing_record,
    network_set,
    placement_create,
    rack_create,
    site_create,
)
from inventory.models import BatchLot, Component, LabelBatch, StockMovement
from inventory.services import label_batch_request
from orders.choices import OrderStatus
from orders.models import Workload
from orders.services import TRANSITION_SERVICES
from tests import factories
from tests.burnin.rig import fitted_report, post_report
from tests.conftest import Tenants, api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


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


# --- cases, one per route name -------------------------------------------------------------------------


def organization_list(w: World) -> None:
    assert _ids(api_client(w.t.user_b).get("/api/v1/organizations/")) == {w.t.customer_b.pk}
    assert _ids(api_client(w.t.user_q).get("/api/v1/organizations/")) == {w.t.partner_q.pk}
    assert _ids(api_client(w.t.outsider).get("/api/v1/organizations/")) == set()


def organization_detail(w: World) -> None:
    url = f"/api/v1/organizations/{w.t.customer_a.pk}/"
    _assert_404(w.intruders, "get", url)
    _assert_404(w.intruders, "patch", url, {"name": "Taken over"})


def part_list(w: World) -> None:
    # The catalogue is shared by members, but a user with no membership sees nothing.
    assert w.part.pk in _ids(api_client(w.t.user_b).get("/api/v1/inventory/parts/"))
    assert _ids(api_client(w.t.outsider).get("/api/v1/inventory/parts/")) == set()


def part_detail(w: World) -> None:
    _assert_404([w.t.outsider], "get", f"/api/v1/inventory/parts/{w.part.pk}/")
    response = api_client(w.t.user_b).patch(
        f"/api/v1/inventory/parts/{w.part.pk}/", {"name": "x"}, format="json"
    )
    assert response.status_code == 403


def configuration_list(w: World) -> None:
    for user in w.intruders:
        assert w.order_a.configuration_id not in _ids(api_client(user).get("/api/v1/configurations/"))
    assert _ids(api_client(w.t.user_b).get("/api/v1/configurations/")) == {w.order_b.configuration_id}


def configuration_detail(w: World) -> None:
    url = f"/api/v1/configurations/{w.order_a.configuration_id}/"
    _assert_404(w.intruders, "get", url)
    _assert_404(w.intruders, "patch", url, {"name": "x"})


def order_list(w: World) -> None:
    assert _ids(api_client(w.t.user_b).get("/api/v1/orders/")) == {w.order_b.pk}
    for user in (w.t.user_p, w.t.user_q, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/orders/")) == set()
    # Filter choices are scoped too: naming A as the customer is an invalid choice, not a leak.
    response = api_client(w.t.user_b).get(f"/api/v1/orders/?customer={w.t.customer_a.pk}")
    assert response.status_code == 400
    assert "customer" in response.json()


def order_detail(w: World) -> None:
    url = f"/api/v1/orders/{w.order_a.pk}/"
    _assert_404(w.intruders, "get", url)
    _assert_404(w.intruders, "patch", url, {"notes": "x"})


def order_events(w: World) -> None:
    _assert_404(w.intruders, "get", f"/api/v1/orders/{w.order_a.pk}/events/")


def _order_action(action: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        _assert_404(
            w.intruders, "post", f"/api/v1/orders/{w.order_a.pk}/{action}/", {"reason": "x", "note": "x"}
        )
        w.order_a.refresh_from_db()
        assert w.order_a.status == OrderStatus.ROI_REVIEW
        assert not AuditEvent.objects.for_object(w.order_a).exists()

    return case


def order_roi_assessments(w: World) -> None:
    url = f"/api/v1/orders/{w.order_a.pk}/roi-assessments/"
    _assert_404(w.intruders, "get", url)
    _assert_404(w.intruders, "post", url, ROI_BODY)
    assert w.order_a.roi_assessments.count() == 1


def order_workload(w: World) -> None:
    url = f"/api/v1/orders/{w.order_a.pk}/workload/"
    _assert_404(w.intruders, "get", url)
    _assert_404(w.intruders, "put", url, {"preset": "glm-4.6", "context_tokens": 1})
    assert Workload.objects.get(order=w.order_a).preset == "llama-3.1-8b"


def order_approval_checks(w: World) -> None:
    _assert_404(w.intruders, "get", f"/api/v1/orders/{w.order_a.pk}/approval-checks/")


def order_transition_checks(w: World) -> None:
    _assert_404(w.intruders, "get", f"/api/v1/orders/{w.order_a.pk}/transition-checks/")


def roi_assessment_list(w: World) -> None:
    mine = w.order_b.roi_assessments.get().pk
    assert _ids(api_client(w.t.user_b).get("/api/v1/roi-assessments/")) == {mine}
    for user in (w.t.user_p, w.t.user_q, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/roi-assessments/")) == set()
    response = api_client(w.t.user_b).get(f"/api/v1/roi-assessments/?order={w.order_a.pk}")
    assert response.status_code == 400


def roi_assessment_detail(w: World) -> None:
    _assert_404(w.intruders, "get", f"/api/v1/roi-assessments/{w.order_a.roi_assessments.get().pk}/")


def roi_assessment_preview(w: World) -> None:
    # Not tenant data, but a PM tool: members are refused, and nothing is saved for anyone.
    for user in w.intruders:
        assert (
            api_client(user).post("/api/v1/roi-assessments/preview/", ROI_BODY, format="json").status_code
            == 403
        )


def supplier_list(w: World) -> None:
    for user in [w.t.user_a, w.t.user_p, w.t.user_q, w.t.outsider]:
        assert _ids(api_client(user).get("/api/v1/inventory/suppliers/")) == set()


def supplier_detail(w: World) -> None:
    url = f"/api/v1/inventory/suppliers/{w.po_p.supplier_id}/"
    _assert_404([w.t.user_a, w.t.user_p, w.t.user_q, w.t.outsider], "get", url)
    _assert_404([w.t.user_a, w.t.user_p, w.t.user_q, w.t.outsider], "patch", url, {"country": "CN"})


def purchase_order_list(w: World) -> None:
    assert _ids(api_client(w.t.user_p).get("/api/v1/inventory/purchase-orders/")) == {w.po_p.pk}
    for user in w.not_partner_p:
        assert _ids(api_client(user).get("/api/v1/inventory/purchase-orders/")) == set()


def purchase_order_detail(w: World) -> None:
    assert api_client(w.t.user_p).get(f"/api/v1/inventory/purchase-orders/{w.po_p.pk}/").status_code == 200
    _assert_404(w.not_partner_p, "get", f"/api/v1/inventory/purchase-orders/{w.po_p.pk}/")


def _po_action(action: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        url = f"/api/v1/inventory/purchase-orders/{w.po_p.pk}/{action}/"
        _assert_404(w.not_partner_p, "post", url, {"reason": "x", "override_reason": "x"})
        # The receiving partner sees the PO but does not run its life cycle.
        assert api_client(w.t.user_p).post(url, {"reason": "x"}, format="json").status_code == 403
        w.po_p.refresh_from_db()
        assert w.po_p.status == "partially_received"

    return case


def purchase_order_line_list(w: World) -> None:
    line = w.po_p.lines.get()
    assert _ids(api_client(w.t.user_p).get("/api/v1/inventory/purchase-order-lines/")) == {line.pk}
    for user in w.not_partner_p:
        assert _ids(api_client(user).get("/api/v1/inventory/purchase-order-lines/")) == set()


def purchase_order_line_detail(w: World) -> None:
    _assert_404(w.not_partner_p, "get", f"/api/v1/inventory/purchase-order-lines/{w.po_p.lines.get().pk}/")


def purchase_order_line_receive(w: World) -> None:
    url = f"/api/v1/inventory/purchase-order-lines/{w.po_p.lines.get().pk}/receive/"
    body = {"lot": "L-X", "date_code": "2526", "origin": "TW", "serials": "X-1"}
    _assert_404(w.not_partner_p, "post", url, body)
    assert not Component.objects.filter(serial="X-1").exists()


def lot_list(w: World) -> None:
    lot = BatchLot.objects.get(lot_code="L-P")
    assert _ids(api_client(w.t.user_p).get("/api/v1/inventory/lots/")) == {lot.pk}
    for user in w.not_partner_p:
        assert _ids(api_client(user).get("/api/v1/inventory/lots/")) == set()


def lot_detail(w: World) -> None:
    _assert_404(w.not_partner_p, "get", f"/api/v1/inventory/lots/{BatchLot.objects.get(lot_code='L-P').pk}/")


def lot_labels(w: World) -> None:
    url = f"/api/v1/inventory/lots/{BatchLot.objects.get(lot_code='L-P').pk}/labels/"
    _assert_404(w.not_partner_p, "get", url)
    response = api_client(w.t.user_p).get(url)
    assert (response.status_code, response["Content-Type"]) == (200, "application/pdf")


LABEL_BATCHES = "/api/v1/inventory/label-batches/"


def _label_batch(w: World) -> LabelBatch:
    return label_batch_request(actor=w.t.user_p, lot=BatchLot.objects.get(lot_code="L-P"))


def label_batch_list(w: World) -> None:
    batch = _label_batch(w)
    assert _ids(api_client(w.t.user_p).get(LABEL_BATCHES)) == {batch.pk}
    assert _ids(api_client(w.t.pm).get(LABEL_BATCHES)) == {batch.pk}
    for user in w.not_partner_p:
        assert _ids(api_client(user).get(LABEL_BATCHES)) == set()
        # Nor can anyone else ask for the labels of partner P's lot or purchase order.
        for body in ({"lot": batch.lot_id}, {"purchase_order": w.po_p.pk}):
            assert api_client(user).post(LABEL_BATCHES, body, format="json").status_code == 400, (user, body)
    assert LabelBatch.objects.count() == 1


def label_batch_detail(w: World) -> None:
    batch = _label_batch(w)
    assert api_client(w.t.user_p).get(f"{LABEL_BATCHES}{batch.pk}/").status_code == 200
    _assert_404(w.not_partner_p, "get", f"{LABEL_BATCHES}{batch.pk}/")


def label_batch_pdf(w: World) -> None:
    _assert_404(w.not_partner_p, "get", f"{LABEL_BATCHES}{_label_batch(w).pk}/pdf/")


def component_list(w: World) -> None:
    assert {
        row["serial"] for row in api_client(w.t.user_p).get("/api/v1/inventory/components/").json()["results"]
    } == {
        "P-SERIAL-1",
        "P-SERIAL-2",
    }
    for user in w.not_partner_p:
        assert _ids(api_client(user).get("/api/v1/inventory/components/?serial=P-SERIAL-1")) == set()


def component_detail(w: World) -> None:
    _assert_404(w.not_partner_p, "get", f"/api/v1/inventory/components/{Component.objects.first().pk}/")


def stock_movement_list(w: World) -> None:
    assert len(_ids(api_client(w.t.user_p).get("/api/v1/inventory/stock-movements/"))) == 2
    for user in w.not_partner_p:
        assert _ids(api_client(user).get("/api/v1/inventory/stock-movements/")) == set()


def stock_movement_detail(w: World) -> None:
    _assert_404(
        w.not_partner_p, "get", f"/api/v1/inventory/stock-movements/{StockMovement.objects.first().pk}/"
    )


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


def foreign_key_writes(w: World) -> None:
    """A PM-only write path, but the serializer still refuses rows the writer cannot see."""
    response = api_client(w.t.user_b).post(
        "/api/v1/orders/",
        {"customer": w.t.customer_a.pk, "configuration": w.order_a.configuration_id, "server_count": 1},
        format="json",
    )
    assert response.status_code == 403


# --- builds: partner P's bench on a server of customer A's order ---------------------------------------


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


def _bench_intruders(w: World) -> list[Any]:
    """Customer A follows the server, but the bench is P's (and the PM's) alone."""
    return [w.t.user_a, w.t.user_b, w.t.user_q, w.t.outsider]


def _builds_list(path: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        b = _builds(w)
        assert _ids(api_client(w.t.user_p).get(f"/api/v1/builds/{path}/"))
        for user in _bench_intruders(w):
            assert _ids(api_client(user).get(f"/api/v1/builds/{path}/")) == set(), user.username
        response = api_client(w.t.user_q).get(f"/api/v1/builds/{path}/?server={b.server.pk}")
        assert response.status_code == 400

    return case


def _builds_detail(path: str, attribute: str, suffix: str = "") -> Callable[[World], None]:
    def case(w: World) -> None:
        url = f"/api/v1/builds/{path}/{getattr(_builds(w), attribute).pk}/{suffix}"
        assert api_client(w.t.user_p).get(url).status_code == 200
        _assert_404(_bench_intruders(w), "get", url)

    return case


def server_list(w: World) -> None:
    b = _builds(w)
    assert _ids(api_client(w.t.user_p).get("/api/v1/builds/servers/")) == {b.server.pk}
    order_a_servers = set(w.order_a.servers.values_list("pk", flat=True))
    assert b.server.pk in order_a_servers
    assert _ids(api_client(w.t.user_a).get("/api/v1/builds/servers/")) == order_a_servers
    for user in (w.t.user_b, w.t.user_q, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/builds/servers/")) == set()
    assert api_client(w.t.user_b).get(f"/api/v1/builds/servers/?order={w.order_a.pk}").status_code == 400


def server_detail(w: World) -> None:
    url = f"/api/v1/builds/servers/{_builds(w).server.pk}/"
    assert api_client(w.t.user_a).get(url).status_code == 200
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


def _server_action(
    action: str, body: dict | Callable[[World], dict], method: str = "post"
) -> Callable[[World], None]:
    """Everyone off P's bench gets a 404 on a server action, with a body that would otherwise work."""

    def case(w: World) -> None:
        b = _builds(w)
        payload = body(w) if callable(body) else body
        counts = [model.objects.count() for model in (Installation, Allocation, BuildStep, BuildPhoto)]
        events = AuditEvent.objects.count()
        _assert_404(_bench_intruders(w), method, f"/api/v1/builds/servers/{b.server.pk}/{action}/", payload)
        b.server.refresh_from_db()
        assert (b.server.status, b.server.partner) == ("planned", w.t.partner_p)
        assert counts == [
            model.objects.count() for model in (Installation, Allocation, BuildStep, BuildPhoto)
        ]
        assert AuditEvent.objects.count() == events
        assert b.installation.component.status == "installed"

    return case


def server_steps(w: World) -> None:
    _server_action("steps", {}, "get")(w)
    _server_action("steps", {"kind": "note"})(w)


def connector_blacklist(w: World) -> None:
    url = f"/api/v1/builds/connectors/{_builds(w).connector.pk}/blacklist/"
    _assert_404(_bench_intruders(w), "post", url, {"reason": "sabotage"})
    assert not ConnectorBlacklist.objects.exists()


def chassis_layout_list(w: World) -> None:
    layout = _builds(w).layout
    for user in (w.t.user_p, w.t.user_q):
        assert _ids(api_client(user).get("/api/v1/builds/layouts/")) == {layout.pk}
    for user in (w.t.user_a, w.t.user_b, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/builds/layouts/")) == set()


def chassis_layout_detail(w: World) -> None:
    url = f"/api/v1/builds/layouts/{_builds(w).layout.pk}/"
    _assert_404([w.t.user_a, w.t.user_b, w.t.outsider], "get", url)


BUILDS_CASES: dict[str, Callable[[World], None]] = {
    "server-list": server_list,
    "server-detail": server_detail,
    "server-assign": _server_action("assign", lambda w: {"partner": w.t.partner_q.pk}),
    "server-start-assembly": _server_action("start-assembly", {}),
    "server-mark-assembled": _server_action("mark-assembled", {}),
    "server-allocate": _server_action("allocate", {"serials": ["P-SERIAL-2"]}),
    "server-install": _server_action("install", {"serial": "P-SERIAL-2", "connector": "PCIe-2"}),
    "server-remove": _server_action("remove", {"serial": "P-SERIAL-1", "reason": "x"}),
    "server-move": _server_action("move", {"serial": "P-SERIAL-1", "to_connector": "PCIe-2", "reason": "x"}),
    "server-steps": server_steps,
    "server-photos": _server_action("photos", {}),
    "server-connector-map": _server_action("connector-map", {}, "get"),
    "connector-list": _builds_list("connectors"),
    "connector-detail": _builds_detail("connectors", "connector"),
    "connector-blacklist": connector_blacklist,
    "installation-list": _builds_list("installations"),
    "installation-detail": _builds_detail("installations", "installation"),
    "allocation-list": _builds_list("allocations"),
    "allocation-detail": _builds_detail("allocations", "allocation"),
    "build-step-list": _builds_list("steps"),
    "build-step-detail": _builds_detail("steps", "step"),
    "build-photo-list": _builds_list("photos"),
    "build-photo-detail": _builds_detail("photos", "photo"),
    "build-photo-download": _builds_detail("photos", "photo", "download/"),
    "chassis-layout-list": chassis_layout_list,
    "chassis-layout-detail": chassis_layout_detail,
}


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


def _unchanged(g: BurninGate) -> None:
    g.server.refresh_from_db()
    g.fail.refresh_from_db()
    assert (g.server.status, g.fail.waived) == (ServerStatus.BURN_IN, False)
    assert not AuditEvent.objects.filter(verb__startswith="burnin.").exists()
    assert not AuditEvent.objects.for_object(g.server).filter(verb__contains="burn_in").exists()


def burnin_finding_list(w: World) -> None:
    g = _burnin_gate(w)
    mine = set(g.fail.run.findings.values_list("pk", flat=True))
    for user in (w.t.user_a, w.t.user_p):  # the server's customer and partner follow its burn-in
        assert _ids(api_client(user).get("/api/v1/burnin/findings/")) == mine
    for user in (w.t.user_b, w.t.user_q, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/burnin/findings/")) == set()
    for params in (f"run={g.fail.run_id}", f"server={g.server.pk}"):
        assert api_client(w.t.user_q).get(f"/api/v1/burnin/findings/?{params}").status_code == 400


def burnin_finding_detail(w: World) -> None:
    g = _burnin_gate(w)
    url = f"/api/v1/burnin/findings/{g.fail.pk}/"
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).get(url).status_code == 200
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


def burnin_finding_waive(w: World) -> None:
    g = _burnin_gate(w)
    url = f"/api/v1/burnin/findings/{g.fail.pk}/waive/"
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "post", url, {"reason": "x"})
    for user in (w.t.user_a, w.t.user_p):  # they see it, so they are told why not
        assert api_client(user).post(url, {"reason": "x"}, format="json").status_code == 403
    _unchanged(g)


def burnin_server_gate_detail(w: World) -> None:
    g = _burnin_gate(w)
    url = f"/api/v1/burnin/server-gate/{g.server.asset_tag}/"
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).get(url).json()["missing"] == ["GPU 0: GPU 0 at x8"]
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


def _burnin_server_gate_action(action: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        g = _burnin_gate(w)
        # Nothing blocks the pass: only the caller's rights stand in the way.
        g.fail.run.findings.update(severity="warn")
        url = f"/api/v1/burnin/server-gate/{g.server.asset_tag}/{action}/"
        _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "post", url, {"reason": "x", "note": "x"})
        for user in (w.t.user_a, w.t.user_p):
            assert api_client(user).post(url, {"reason": "x"}, format="json").status_code == 403
        _unchanged(g)

    return case


BURNIN_GATE_CASES: dict[str, Callable[[World], None]] = {
    "burnin-finding-list": burnin_finding_list,
    "burnin-finding-detail": burnin_finding_detail,
    "burnin-finding-waive": burnin_finding_waive,
    "burnin-server-gate-detail": burnin_server_gate_detail,
    "burnin-server-gate-pass": _burnin_server_gate_action("pass"),
    "burnin-server-gate-fail": _burnin_server_gate_action("fail"),
}


# --- burn-in charts: a run of partner P's server of customer A's order ----------------------------------


def burnin_telemetry_detail(w: World) -> None:
    from datetime import UTC, datetime, timedelta

    from burnin.models import TelemetrySample
    from burnin.services.samples import store_rollup

    started = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
    run = factories.make_burnin_run_row(
        _builds(w).server, started_at=started, ended_at=started + timedelta(hours=1)
    )
    TelemetrySample.objects.create(run=run, gpu_index=0, at=started, temp_c=61.0)
    store_rollup(run)  # what the endpoint reads, as after an ingest
    url = f"/api/v1/burnin/telemetry/{run.pk}/"
    # Who sees the server sees its telemetry: the PM, its partner, its order's customer.
    for user in (w.t.pm, w.t.user_p, w.t.user_a):
        response = api_client(user).get(url)
        assert response.status_code == 200, user.username
        assert response.json()["series"]["0"]["temp_c"] == [61.0]
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


BURNIN_CHART_CASES: dict[str, Callable[[World], None]] = {
    "burnin-telemetry-detail": burnin_telemetry_detail,
}


# --- burnin: the probe's upload for P's server, and its runs -------------------------------------------


def _burnin_server(w: World) -> Any:
    """P's server of A's order, assembled: ready to take a burn-in report."""
    server = _builds(w).server
    Server.objects.filter(pk=server.pk).update(status=ServerStatus.ASSEMBLED)
    return server


def _burnin_run(w: World) -> int:
    server = _burnin_server(w)
    url = f"/api/v1/burnin/servers/{server.asset_tag}/reports/"
    with TestCase.captureOnCommitCallbacks(execute=True):  # the report's file is written on commit
        response = post_report(w.t.user_p, url, fitted_report(server))
    assert response.status_code == 201, response.content
    return response.json()["id"]


def burnin_server_reports(w: World) -> None:
    server = _burnin_server(w)
    url = f"/api/v1/burnin/servers/{server.asset_tag}/reports/"
    for user in (w.t.user_b, w.t.user_q, w.t.outsider):
        assert post_report(user, url, fitted_report(server)).status_code == 404, user.username
    # Customer A follows the server, but only its partner (and PMs) post reports.
    assert post_report(w.t.user_a, url, fitted_report(server)).status_code == 403
    assert not BurnInRun.objects.exists()
    server.refresh_from_db()
    assert server.status == ServerStatus.ASSEMBLED
    assert _burnin_run(w)  # the same body from P is stored


def burnin_run_list(w: World) -> None:
    run = _burnin_run(w)
    for user in (w.t.pm, w.t.user_p, w.t.user_a):
        assert _ids(api_client(user).get("/api/v1/burnin/runs/")) == {run}, user.username
    for user in (w.t.user_b, w.t.user_q, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/burnin/runs/")) == set(), user.username
    server = _builds(w).server.pk
    assert api_client(w.t.user_q).get(f"/api/v1/burnin/runs/?server={server}").status_code == 400


def burnin_run_detail(w: World) -> None:
    url = f"/api/v1/burnin/runs/{_burnin_run(w)}/"
    assert api_client(w.t.user_a).get(url).status_code == 200
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


BURNIN_CASES: dict[str, Callable[[World], None]] = {
    "burnin-server-reports": burnin_server_reports,
    "burnin-run-list": burnin_run_list,
    "burnin-run-detail": burnin_run_detail,
}


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


def _deployment_strangers(w: World) -> list[Any]:
    return [w.t.user_b, w.t.user_q, w.t.outsider]


def _deployment_list(path: str, attribute: str, server_filter: bool = False) -> Callable[[World], None]:
    def case(w: World) -> None:
        d = _deployment(w)
        mine = getattr(d, attribute).pk
        for user in (w.t.user_a, w.t.user_p):  # the servers' customer and partner
            assert mine in _ids(api_client(user).get(f"/api/v1/{path}/")), user.username
        for user in _deployment_strangers(w):
            assert _ids(api_client(user).get(f"/api/v1/{path}/")) == set(), user.username
        if server_filter:
            response = api_client(w.t.user_q).get(f"/api/v1/{path}/?server={d.ready.pk}")
            assert response.status_code == 400

    return case


def _deployment_detail(
    path: str, attribute: str, body: dict, delete: bool = False
) -> Callable[[World], None]:
    def case(w: World) -> None:
        d = _deployment(w)
        url = f"/api/v1/{path}/{getattr(d, attribute).pk}/"
        events = AuditEvent.objects.count()
        assert api_client(w.t.user_a).get(url).status_code == 200
        _assert_404(_deployment_strangers(w), "get", url)
        _assert_404(_deployment_strangers(w), "patch", url, body)
        if delete:
            _assert_404(_deployment_strangers(w), "delete", url)
        for user in (w.t.user_a, w.t.user_p):  # they see it, so they are told why not
            assert api_client(user).patch(url, body, format="json").status_code == 403
        assert AuditEvent.objects.count() == events
        assert type(getattr(d, attribute)).objects.filter(pk=getattr(d, attribute).pk).exists()

    return case


def rack_power(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/racks/{d.rack.pk}/power/"
    assert d.ready.hostname in api_client(w.t.user_p).get(url).content.decode()
    _assert_404(_deployment_strangers(w), "get", url)


def placement_detail(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/placements/{d.placement.pk}/"
    assert api_client(w.t.user_a).get(url).status_code == 200
    _assert_404(_deployment_strangers(w), "get", url)
    _assert_404(_deployment_strangers(w), "delete", url, {"reason": "x"})
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).delete(url).status_code == 403
    assert not AuditEvent.objects.filter(verb="deployment.unplace").exists()


def platform_listing_detail(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/platform-listings/{d.listing.pk}/"
    assert api_client(w.t.user_p).get(url).status_code == 200
    _assert_404(_deployment_strangers(w), "get", url)


def deployment_server_detail(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/deployment/servers/{d.ready.asset_tag}/"
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).get(url).json()["ready"] is True
    _assert_404(_deployment_strangers(w), "get", url)


def deployment_server_deploy(w: World) -> None:
    d = _deployment(w)
    url = f"/api/v1/deployment/servers/{d.ready.asset_tag}/deploy/"
    _assert_404(_deployment_strangers(w), "post", url, {"note": "x"})
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).post(url, {"note": "x"}, format="json").status_code == 403
    d.ready.refresh_from_db()
    assert d.ready.status == ServerStatus.BURN_IN_PASSED
    assert not AuditEvent.objects.filter(verb="deployment.deploy").exists()


def rack_elevation_svg(w: World) -> None:
    from deployment.services import feed_create, placement_create, rack_create, site_create

    order = factories.OrderFactory(customer=w.t.customer_a, server_count=1)
    [server] = factories.make_servers(order, status=ServerStatus.BURN_IN_PASSED)
    Server.objects.filter(pk=server.pk).update(partner=w.t.partner_p)
    site = site_create(
        actor=w.t.pm,
        name="Iso colo",
        kind="colocation",
        operator="Op",
        customer=None,
        address="x",
        country="BG",
    )
    rack = rack_create(site=site, actor=w.t.pm, name="R1", height_u=42)
    feed = feed_create(rack=rack, actor=w.t.pm, name="A1", leg="A", voltage_v=230, current_a=32, phases=3)
    placement_create(server=server, rack=rack, lowest_u=1, feeds=[feed], actor=w.t.pm)
    for url in (f"/api/v1/racks/{rack.pk}/elevation.svg/", f"/api/v1/racks/{rack.pk}/elevation.svg"):
        for user in (w.t.pm, w.t.user_a, w.t.user_p):
            response = api_client(user).get(url)
            assert (response.status_code, response["Content-Type"]) == (200, "image/svg+xml"), user.username
            assert server.hostname in response.content.decode()
        _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


DEPLOYMENT_CASES: dict[str, Callable[[World], None]] = {
    "site-list": _deployment_list("sites", "site"),
    "site-detail": _deployment_detail("sites", "site", {"operator": "Taken over"}),
    "rack-list": _deployment_list("racks", "rack"),
    "rack-detail": _deployment_detail("racks", "rack", {"name": "Taken over"}),
    "rack-power": rack_power,
    "power-feed-list": _deployment_list("power-feeds", "feed"),
    "power-feed-detail": _deployment_detail("power-feeds", "feed", {"current_a": 16}, delete=True),
    "placement-list": _deployment_list("placements", "placement", server_filter=True),
    "placement-detail": placement_detail,
    "network-list": _deployment_list("networks", "network", server_filter=True),
    "network-detail": _deployment_detail("networks", "network", {"bmc_password": "taken-over"}),
    "platform-listing-list": _deployment_list("platform-listings", "listing", server_filter=True),
    "platform-listing-detail": platform_listing_detail,
    "deployment-server-detail": deployment_server_detail,
    "deployment-server-deploy": deployment_server_deploy,
    "rack-elevation-svg": rack_elevation_svg,
}


# --- warranty: customer A's server (built by P) handed over, with records, a registration and a claim ----


@dataclass
class Warranty:
    record: Any
    registration: Any
    claim: Any
    deployed: Any


def _warranty(w: World) -> Warranty:
    from warranty.choices import PackStatus
    from warranty.models import HandoverPack, WarrantyRegistration
    from warranty.services import claim_open, warranty_records_create

    cached = getattr(w, "_warranty", None)
    if cached is not None:
        return cached
    b = _builds(w)
    Server.objects.filter(pk=b.server.pk).update(status=ServerStatus.HANDED_OVER)
    records = warranty_records_create(server=b.server, actor=w.t.pm)
    record = next(r for r in records if r.serial == "P-SERIAL-1")
    claim = claim_open(record=record, actor=w.t.user_a, description="It fell silent")
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
    )
    return w._warranty  # type: ignore[attr-defined]


def _warranty_strangers(w: World) -> list[Any]:
    """The records are the customer's: its partner built the server but holds no warranty."""
    return [w.t.user_b, w.t.user_p, w.t.user_q, w.t.outsider]


def _warranty_list(path: str, attribute: str, server_filter: bool = False) -> Callable[[World], None]:
    def case(w: World) -> None:
        mine = getattr(_warranty(w), attribute).pk
        assert mine in _ids(api_client(w.t.user_a).get(f"/api/v1/warranty/{path}/"))
        for user in _warranty_strangers(w):
            assert _ids(api_client(user).get(f"/api/v1/warranty/{path}/")) == set(), user.username
        if server_filter:
            response = api_client(w.t.user_b).get(f"/api/v1/warranty/{path}/?server={_builds(w).server.pk}")
            assert response.status_code == 400

    return case


def _warranty_detail(path: str, attribute: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        url = f"/api/v1/warranty/{path}/{getattr(_warranty(w), attribute).pk}/"
        assert api_client(w.t.user_a).get(url).status_code == 200
        _assert_404(_warranty_strangers(w), "get", url)

    return case


def warranty_record_lookup(w: World) -> None:
    _warranty_list("records", "record", server_filter=True)(w)
    for user in _warranty_strangers(w):  # another customer's serial is simply not found
        response = api_client(user).get("/api/v1/warranty/records/?serial=p-serial-1")
        assert _ids(response) == set(), user.username
    assert len(_ids(api_client(w.t.user_a).get("/api/v1/warranty/records/?serial=p-serial-1"))) == 1


def warranty_claim_list(w: World) -> None:
    _warranty_list("claims", "claim")(w)
    x = _warranty(w)
    # Opening a claim on A's record: 404 for whoever does not see it, nothing written.
    _assert_404(_warranty_strangers(w), "post", "/api/v1/warranty/claims/",
                {"record": x.record.pk, "description": "mine now"})  # fmt: skip
    assert x.record.claims.count() == 1


def _warranty_claim_action(action: str, body: dict) -> Callable[[World], None]:
    def case(w: World) -> None:
        x = _warranty(w)
        url = f"/api/v1/warranty/claims/{x.claim.pk}/{action}/"
        events = AuditEvent.objects.count()
        _assert_404(_warranty_strangers(w), "post", url, body)
        assert api_client(w.t.user_a).post(url, body, format="json").status_code == 403  # sees it: told why
        x.claim.refresh_from_db()
        assert x.claim.status == "open" and AuditEvent.objects.count() == events

    return case


def handover_server_detail(w: World) -> None:
    x = _warranty(w)
    url = f"/api/v1/handover/servers/{x.deployed.asset_tag}/"
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).get(url).json()["ready"] is True
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


def handover_server_hand_over(w: World) -> None:
    x = _warranty(w)
    url = f"/api/v1/handover/servers/{x.deployed.asset_tag}/hand-over/"
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "post", url, {"note": "x"})
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).post(url, {"note": "x"}, format="json").status_code == 403
    x.deployed.refresh_from_db()
    assert x.deployed.status == ServerStatus.DEPLOYED


WARRANTY_CASES: dict[str, Callable[[World], None]] = {
    "warranty-record-list": warranty_record_lookup,
    "warranty-record-detail": _warranty_detail("records", "record"),
    "warranty-registration-list": _warranty_list("registrations", "registration", server_filter=True),
    "warranty-registration-detail": _warranty_detail("registrations", "registration"),
    "warranty-claim-list": warranty_claim_list,
    "warranty-claim-detail": _warranty_detail("claims", "claim"),
    "warranty-claim-approve": _warranty_claim_action("approve", {"note": "x"}),
    "warranty-claim-reject": _warranty_claim_action("reject", {"note": "x"}),
    "warranty-claim-ship-replacement": _warranty_claim_action("ship-replacement", {"component": 1}),
    "warranty-claim-close": _warranty_claim_action("close", {"note": "x"}),
    "handover-server-detail": handover_server_detail,
    "handover-server-hand-over": handover_server_hand_over,
}


# --- warranty: handover packs and certificates ----------------------------------------------------------


def _pack(w: World) -> Any:
    """A ready pack of a deployed server of customer A, built by partner P (who is not handed it)."""
    from django.core.files.base import ContentFile

    from warranty.models import HandoverPack

    order = factories.OrderFactory(customer=w.t.customer_a, server_count=1)
    [server] = factories.make_servers(order, status=ServerStatus.DEPLOYED)
    Server.objects.filter(pk=server.pk).update(partner=w.t.partner_p)
    pack = HandoverPack(server=server, revision=1, language="en", status="ready", progress=100)
    pack.pdf.save("handover.pdf", ContentFile(b"%PDF-1.4 pack"), save=False)
    pack.zip.save("handover.zip", ContentFile(b"PK pack"), save=False)
    pack.pdf_sha256 = pack.zip_sha256 = "0" * 64
    pack.save()
    return pack


def handover_pack_list(w: World) -> None:
    pack = _pack(w)
    assert pack.pk in _ids(api_client(w.t.user_a).get("/api/v1/handover/packs/"))
    for user in w.intruders:
        assert _ids(api_client(user).get("/api/v1/handover/packs/")) == set(), user.username
    # Asking for a pack is a PM's: the customer who sees it is told so, nobody else learns of the server.
    for user in [w.t.user_a, *w.intruders]:
        response = api_client(user).post("/api/v1/handover/packs/", {"server": pack.server_id}, format="json")
        assert response.status_code == 403, user.username
    assert not AuditEvent.objects.filter(verb="pack.request").exists()


def _pack_route(suffix: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        pack = _pack(w)
        url = f"/api/v1/handover/packs/{pack.pk}/{suffix}"
        assert api_client(w.t.user_a).get(url).status_code == 200
        _assert_404(w.intruders, "get", url)

    return case


def warranty_certificate_detail(w: World) -> None:
    url = f"/api/v1/warranty/certificates/{w.order_a.pk}/"
    response = api_client(w.t.user_a).get(url)
    assert (response.status_code, response["Content-Type"]) == (200, "application/pdf")
    _assert_404(w.intruders, "get", url)


PACK_CASES: dict[str, Callable[[World], None]] = {
    "handover-pack-list": handover_pack_list,
    "handover-pack-detail": _pack_route(""),
    "handover-pack-pdf": _pack_route("pdf/"),
    "handover-pack-zip": _pack_route("zip/"),
    "warranty-certificate-detail": warranty_certificate_detail,
}


CASES: dict[str, Callable[[World], None]] = {
    "organization-list": organization_list,
    "organization-detail": organization_detail,
    "part-list": part_list,
    "part-detail": part_detail,
    "configuration-list": configuration_list,
    "configuration-detail": configuration_detail,
    "order-list": order_list,
    "order-detail": order_detail,
    "order-events": order_events,
    "order-roi-assessments": order_roi_assessments,
    "order-workload": order_workload,
    "order-approval-checks": order_approval_checks,
    "order-transition-checks": order_transition_checks,
    "roi-assessment-list": roi_assessment_list,
    "roi-assessment-detail": roi_assessment_detail,
    "roi-assessment-preview": roi_assessment_preview,
    "supplier-list": supplier_list,
    "supplier-detail": supplier_detail,
    "purchase-order-list": purchase_order_list,
    "purchase-order-detail": purchase_order_detail,
    **{f"purchase-order-{action}": _po_action(action) for action in ("send", "cancel", "close")},
    "purchase-order-line-list": purchase_order_line_list,
    "purchase-order-line-detail": purchase_order_line_detail,
    "purchase-order-line-receive": purchase_order_line_receive,
    "lot-list": lot_list,
    "lot-detail": lot_detail,
    "lot-labels": lot_labels,
    "label-batch-list": label_batch_list,
    "label-batch-detail": label_batch_detail,
    "label-batch-pdf": label_batch_pdf,
    "component-list": component_list,
    "component-detail": component_detail,
    "stock-movement-list": stock_movement_list,
    "stock-movement-detail": stock_movement_detail,
    **{
        f"order-{name.replace('_', '-')}": _order_action(name.replace("_", "-"))
        for name in TRANSITION_SERVICES
    },
    **BUILDS_CASES,
    **BURNIN_GATE_CASES,
    **BURNIN_CHART_CASES,
    **BURNIN_CASES,
    **DEPLOYMENT_CASES,
    **WARRANTY_CASES,
    **PACK_CASES,
}


def router_route_names() -> set[str]:
    from werkbank.urls import api_router as router

    return {pattern.name for pattern in router.urls if pattern.name != "api-root"}


def test_every_api_route_has_an_isolation_case():
    missing = router_route_names() - set(CASES)
    assert not missing, f"API routes without a tenant-isolation case: {sorted(missing)}"
    stale = set(CASES) - router_route_names()
    assert not stale, f"Isolation cases for routes that no longer exist: {sorted(stale)}"


@pytest.mark.parametrize("route", sorted(CASES))
def test_isolation(world, route):
    CASES[route](world)


def test_foreign_key_writes_are_refused(world):
    foreign_key_writes(world)


def test_anonymous_gets_nothing(world, client):
    for url in ("/api/v1/orders/", f"/api/v1/orders/{world.order_a.pk}/", "/api/v1/organizations/"):
        assert client.get(url).status_code in {401, 403}
