"""The admin as a PM uses it: lists, the order page with its timeline, transitions as actions."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME

from orders.choices import OrderStatus
from tests import factories
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def pm_browser(client, tenants):
    assert client.login(username="pm", password=factories.PASSWORD)
    return client


@pytest.mark.parametrize(
    "url",
    [
        "/admin/",
        "/admin/orders/order/",
        "/admin/orders/order/add/",
        "/admin/orders/serverconfiguration/",
        "/admin/inventory/part/",
        "/admin/werkbank/organization/",
        "/admin/werkbank/auditevent/",
        "/admin/orders/order/?status__exact=draft&q=WB",
    ],
)
def test_pm_pages_open(pm_browser, url):
    factories.OrderFactory()
    assert pm_browser.get(url).status_code == 200


def test_order_page_shows_status_read_only_and_the_timeline(pm_browser, tenants):
    order = factories.pass_gate(
        factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    )
    pm_browser.post(
        "/admin/orders/order/",
        {
            "action": "action_approve",
            ACTION_CHECKBOX_NAME: [order.pk],
            "apply": "1",
            "transition_text": "ROI ok",
        },
    )
    page = pm_browser.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'name="status"' not in page
    assert "order.approve" in page and "ROI ok" in page
    # The admin links to the PM's order page, where the transitions are buttons with their checks.
    assert f'href="/pm/orders/{order.pk}/"' in page


def test_admin_create_goes_through_the_service(pm_browser, tenants):
    configuration = factories.ConfigurationFactory()
    response = pm_browser.post(
        "/admin/orders/order/add/",
        {"customer": tenants.customer_a.pk, "configuration": configuration.pk, "server_count": 3,
         "warranty_months": 60, "burnin_hours": 72, "notes": "", "circuit_phases": 1},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    event = AuditEvent.objects.get(verb="order.create")
    assert event.actor == tenants.pm
    assert event.object_repr.startswith("WB-")


def test_reject_action_asks_for_a_reason_first(pm_browser, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    form = pm_browser.post(
        "/admin/orders/order/", {"action": "action_reject", ACTION_CHECKBOX_NAME: [order.pk]}
    )
    assert form.status_code == 200
    assert "Reason (required)" in form.content.decode()
    empty = pm_browser.post(
        "/admin/orders/order/",
        {"action": "action_reject", ACTION_CHECKBOX_NAME: [order.pk], "apply": "1", "transition_text": ""},
    )
    assert "A written reason is required." in empty.content.decode()
    order.refresh_from_db()
    assert order.status == OrderStatus.ROI_REVIEW

    pm_browser.post(
        "/admin/orders/order/",
        {
            "action": "action_reject",
            ACTION_CHECKBOX_NAME: [order.pk],
            "apply": "1",
            "transition_text": "No payback",
        },
    )
    order.refresh_from_db()
    assert order.status == OrderStatus.REJECTED
    assert AuditEvent.objects.get(verb="order.reject").note == "No payback"


def test_refused_admin_transition_shows_the_reason_and_writes_nothing(pm_browser, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.DRAFT)
    response = pm_browser.post(
        "/admin/orders/order/",
        {"action": "action_approve", ACTION_CHECKBOX_NAME: [order.pk], "apply": "1", "transition_text": ""},
        follow=True,
    )
    assert "to approve it must be roi review" in response.content.decode()
    order.refresh_from_db()
    assert order.status == OrderStatus.DRAFT
    assert not AuditEvent.objects.exists()


def test_staff_who_is_not_a_pm_sees_nothing(client, tenants):
    staff = factories.UserFactory(is_staff=True)
    client.force_login(staff)
    assert client.get("/admin/orders/order/").status_code == 403


def test_customer_member_cannot_open_the_admin(client, tenants):
    client.force_login(tenants.user_a)
    assert client.get("/admin/orders/order/").status_code == 302


def test_admin_approval_goes_through_the_gate_and_takes_an_override(pm_browser, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    action = {
        "action": "action_approve",
        ACTION_CHECKBOX_NAME: [order.pk],
        "apply": "1",
        "transition_text": "",
    }
    refused = pm_browser.post("/admin/orders/order/", action, follow=True)
    assert "No ROI assessment yet" in refused.content.decode()
    order.refresh_from_db()
    assert order.status == OrderStatus.ROI_REVIEW

    pm_browser.post("/admin/orders/order/", {**action, "override_reason": "Framework contract"}, follow=True)
    order.refresh_from_db()
    assert (order.status, order.approval_override_reason) == (OrderStatus.APPROVED, "Framework contract")
    page = pm_browser.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert "Approved by override:</strong> Framework contract" in page


def test_order_page_shows_the_gate_with_its_inputs(pm_browser, tenants):
    order = factories.pass_gate(
        factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    )
    page = pm_browser.get(f"/admin/orders/order/{order.pk}/change/").content.decode()
    assert 'Approval gate: <span class="gate-ok">all checks pass</span>' in page
    assert "Price per GPU-hour" in page and "0.9000" in page
    assert "H, hours per month" in page and ">730<" in page
    assert "Power budget (one server)" in page


def test_roi_assessment_added_in_the_admin_is_computed_by_the_service(pm_browser, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a)
    form = {
        "order": order.pk, "currency": "USD", "capex": "100000", "gpu_count": 8, "price_per_gpu_hour": "1.00",
        "utilization": "0.6", "platform_fee": "0", "power_active_kw": "6.3", "power_idle_kw": "1.2",
        "energy_price_kwh": "0.15", "pue": "1.3", "colo_month": "600", "other_opex_month": "0",
        "horizon_months": 36, "discount_rate_annual": "0.10", "residual_value": "0", "note": "",
    }  # fmt: skip
    response = pm_browser.post("/admin/orders/roiassessment/add/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    assessment = order.roi_assessments.get()
    assert (assessment.version, assessment.net_month) == (1, Decimal("2297.59"))
    assert AuditEvent.objects.filter(verb="order.roi_assess", actor=tenants.pm).count() == 1


def test_order_page_shows_what_blocks_the_next_step(pm_browser, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ASSEMBLY, server_count=2)
    first, second = factories.make_servers(order, status="assembled")
    second.status = "planned"
    second.save(update_fields=["status"])

    page = pm_browser.get(f"/admin/orders/order/{order.pk}/change/").content.decode()

    assert "Next steps" in page
    assert "Start burn in</strong> → burn-in" in page
    assert f"Server {second.hostname} is planned; it must be assembled first." in page
    assert f"Server {first.hostname} is" not in page


def test_transition_action_shows_the_checks_before_the_click(pm_browser, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ASSEMBLY, server_count=1)
    (server,) = factories.make_servers(order)
    page = pm_browser.post(
        "/admin/orders/order/", {"action": "action_start_burn_in", ACTION_CHECKBOX_NAME: [order.pk]}
    ).content.decode()

    assert "✗ blocked" in page
    assert f"Server {server.hostname} is planned; it must be assembled first." in page

    pm_browser.post(
        "/admin/orders/order/",
        {"action": "action_start_burn_in", ACTION_CHECKBOX_NAME: [order.pk], "apply": "1"},
    )
    order.refresh_from_db()
    assert order.status == OrderStatus.ASSEMBLY
