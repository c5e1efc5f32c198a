"""Tenant isolation over every API route.

Customer B, partner Q and a user with no membership try customer A's objects: detail routes and actions
answer 404, lists leave A's rows out, filters refuse A's ids. The meta-test fails when the router has a route
that no case covers, so a new endpoint cannot ship without its isolation case. This module holds the cases of
the core, inventory and orders routes; test_isolation_builds.py those of builds and burn-in,
test_isolation_deployment.py those of deployment and warranty; the world is tests/werkbank/isolation_rig.py.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from inventory.models import BatchLot, Component, LabelBatch, StockMovement
from inventory.services import label_batch_request
from orders.choices import OrderStatus
from orders.models import Workload
from orders.services import TRANSITION_SERVICES
from tests.tenants_rig import api_client
from tests.werkbank.isolation_rig import (
    ROI_BODY,
    World,
    _assert_404,
    _ids,
    router_route_names,
)
from tests.werkbank.isolation_rig import world as isolation_world
from tests.werkbank.test_isolation_builds import (
    BUILDS_CASES,
    BURNIN_CASES,
    BURNIN_CHART_CASES,
    BURNIN_GATE_CASES,
)
from tests.werkbank.test_isolation_deployment import DEPLOYMENT_CASES, PACK_CASES, WARRANTY_CASES
from tests.werkbank.test_isolation_quality import QUALITY_CASES
from tests.werkbank.test_isolation_report import REPORT_CASES
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

world = isolation_world


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


def purchase_order_lines(w: World) -> None:
    url = f"/api/v1/inventory/purchase-orders/{w.po_p.pk}/lines/"
    line = w.po_p.lines.get()
    body = {"part": line.part_id, "quantity": 1, "unit_price": "1.00"}
    _assert_404(w.not_partner_p, "post", url, body)
    # The receiving partner sees the PO but does not add to it.
    assert api_client(w.t.user_p).post(url, body, format="json").status_code == 403
    assert w.po_p.lines.count() == 1


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


def foreign_key_writes(w: World) -> None:
    """A PM-only write path, but the serializer still refuses rows the writer cannot see."""
    response = api_client(w.t.user_b).post(
        "/api/v1/orders/",
        {"customer": w.t.customer_a.pk, "configuration": w.order_a.configuration_id, "server_count": 1},
        format="json",
    )
    assert response.status_code == 403


#: The cases of this module's routes.
CORE_CASES: dict[str, Callable[[World], None]] = {
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
    "purchase-order-lines": purchase_order_lines,
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
}

#: Every route's case: this module's and those of test_isolation_builds.py and test_isolation_deployment.py.
CASES: dict[str, Callable[[World], None]] = {
    **CORE_CASES,
    **BUILDS_CASES,
    **BURNIN_GATE_CASES,
    **BURNIN_CHART_CASES,
    **BURNIN_CASES,
    **DEPLOYMENT_CASES,
    **WARRANTY_CASES,
    **PACK_CASES,
    **QUALITY_CASES,
    **REPORT_CASES,
}


def test_every_api_route_has_an_isolation_case():
    missing = router_route_names() - set(CASES)
    assert not missing, f"API routes without a tenant-isolation case: {sorted(missing)}"
    stale = set(CASES) - router_route_names()
    assert not stale, f"Isolation cases for routes that no longer exist: {sorted(stale)}"


@pytest.mark.parametrize("route", sorted(CORE_CASES))
def test_isolation(world, route):
    CASES[route](world)


def test_foreign_key_writes_are_refused(world):
    foreign_key_writes(world)


def test_anonymous_gets_nothing(world, client):
    for url in ("/api/v1/orders/", f"/api/v1/orders/{world.order_a.pk}/", "/api/v1/organizations/"):
        assert client.get(url).status_code in {401, 403}
