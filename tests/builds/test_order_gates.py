"""Order gates answered by the builds app, through the order API: the 409 and `transition-checks` agree."""

from __future__ import annotations

import pytest

from builds.choices import ServerStatus
from builds.models import Server
from orders import gates
from orders.choices import OrderStatus
from orders.models import Order
from tests import factories
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _post(user, order: Order, action: str, body: dict | None = None):
    return api_client(user).post(f"/api/v1/orders/{order.pk}/{action}/", body or {}, format="json")


def _checks(user, order: Order):
    return api_client(user).get(f"/api/v1/orders/{order.pk}/transition-checks/")


def _by_action(payload: dict) -> dict[str, dict]:
    return {entry["action"]: entry for entry in payload["transitions"]}


@pytest.fixture
def procured(tenants) -> Order:
    """An approved order of two servers, procured through the API: the signal creates its servers."""
    order = factories.pass_gate(
        factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.APPROVED, server_count=2)
    )
    assert not Server.objects.filter(order=order).exists()
    response = _post(tenants.pm, order, "procure")
    assert response.status_code == 200, response.json()
    return order


def test_procurement_creates_the_servers_through_the_signal(tenants, procured):
    hostnames = list(
        Server.objects.filter(order=procured).order_by("sequence").values_list("hostname", "status")
    )
    reference = procured.reference.lower()
    assert hostnames == [(f"{reference}-01", "planned"), (f"{reference}-02", "planned")]


def test_burn_in_is_refused_while_a_server_is_planned(tenants, procured):
    assert _post(tenants.pm, procured, "start-assembly").status_code == 200
    first, second = Server.objects.filter(order=procured).order_by("sequence")
    Server.objects.filter(pk=first.pk).update(status=ServerStatus.ASSEMBLED)
    events_before = AuditEvent.objects.count()

    checks = _checks(tenants.pm, procured)
    response = _post(tenants.pm, procured, "start-burn-in")

    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "order_gate"
    assert body["missing"] == [f"Server {second.hostname} is planned; it must be assembled first."]
    assert second.hostname in body["detail"]
    assert first.hostname not in body["detail"]
    procured.refresh_from_db()
    assert procured.status == OrderStatus.ASSEMBLY
    assert AuditEvent.objects.count() == events_before

    assert checks.status_code == 200
    payload = checks.json()
    assert (payload["order"], payload["status"]) == (procured.reference, "assembly")
    assert _by_action(payload) == {
        "start_burn_in": {
            "action": "start_burn_in",
            "target": "burn_in",
            "ready": False,
            "missing": body["missing"],
            "overridable": False,
            "needs_reason": False,
        }
    }


def test_burn_in_starts_once_every_server_is_assembled(tenants, procured):
    assert _post(tenants.pm, procured, "start-assembly").status_code == 200
    Server.objects.filter(order=procured).update(status=ServerStatus.ASSEMBLED)

    assert _by_action(_checks(tenants.pm, procured).json())["start_burn_in"]["ready"] is True
    response = _post(tenants.pm, procured, "start-burn-in")

    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "burn_in"


def test_assembly_needs_servers(tenants):
    order = factories.pass_gate(
        factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.PROCUREMENT)
    )
    expected = [f"Order {order.reference} has no servers to assemble."]

    assert _by_action(_checks(tenants.pm, order).json())["start_assembly"]["missing"] == expected
    response = _post(tenants.pm, order, "start-assembly")

    assert response.status_code == 409
    assert response.json()["missing"] == expected
    order.refresh_from_db()
    assert order.status == OrderStatus.PROCUREMENT


def test_a_long_list_names_ten_servers_and_counts_the_rest(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ASSEMBLY, server_count=12)
    Server.objects.bulk_create(
        Server(order=order, sequence=n, hostname=f"host-{n:02d}", asset_tag=f"tag-{n:02d}")
        for n in range(1, 13)
    )
    missing = _post(tenants.pm, order, "start-burn-in").json()["missing"]
    assert len(missing) == 11
    assert missing[0] == "Server host-01 is planned; it must be assembled first."
    assert missing[-1] == "2 more servers are not assembled yet."


def test_checks_list_the_orders_own_preconditions(tenants):
    """Draft: the bill of materials; ROI review: the approval gate (overridable) and rejection (a reason)."""
    gpu_only = factories.ConfigurationFactory(lines=[(factories.PartFactory(), 8)])
    draft = factories.OrderFactory(customer=tenants.customer_a, configuration=gpu_only)
    draft_checks = _by_action(_checks(tenants.pm, draft).json())
    assert set(draft_checks) == {"submit", "cancel"}
    assert draft_checks["submit"]["missing"] == [
        f"The bill of materials lacks a chassis line on configuration {gpu_only.name}."
    ]
    assert draft_checks["cancel"] == {
        "action": "cancel",
        "target": "cancelled",
        "ready": True,
        "missing": [],
        "overridable": False,
        "needs_reason": True,
    }

    review = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    approve = _by_action(_checks(tenants.pm, review).json())["approve"]
    assert approve["ready"] is False
    assert approve["overridable"] is True
    assert any("ROI" in sentence for sentence in approve["missing"])


def test_a_registered_gate_joins_the_refusal_and_the_checks(tenants):
    """The registry is open to every app above orders: one 409 lists every check's sentences."""
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.HANDED_OVER)
    gates.register(
        target=OrderStatus.CLOSED, name="tests.invoice", check=lambda o: [f"{o.reference}: no invoice."]
    )
    gates.register(
        target=OrderStatus.CLOSED, name="tests.invoice", check=lambda o: [f"{o.reference}: unpaid."]
    )
    try:
        response = _post(tenants.pm, order, "close")
        checks = _by_action(_checks(tenants.pm, order).json())
    finally:
        gates.unregister(target=OrderStatus.CLOSED, name="tests.invoice")

    assert response.status_code == 409
    assert response.json()["missing"] == [f"{order.reference}: unpaid."]  # registered once, replaced
    assert checks["close"]["missing"] == [f"{order.reference}: unpaid."]
    assert _post(tenants.pm, order, "close").status_code == 200


def test_transition_checks_are_for_pms(tenants, procured):
    assert _checks(tenants.user_a, procured).status_code == 403  # the customer sees the order, not its gates
    assert _checks(tenants.user_b, procured).status_code == 404  # another tenant does not see it at all
    assert _checks(None, procured).status_code in {401, 403}
