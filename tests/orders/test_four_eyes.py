"""Four eyes on approval (issue #24): with WERKBANK_APPROVAL_FOUR_EYES on, the PM who submitted an order to
ROI review cannot approve it; the 409 says who may, and nothing is written. Off, one PM may do both."""

from __future__ import annotations

import pytest

from orders.choices import OrderStatus
from orders.services import order_submit
from tests import factories
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _submitted(tenants):
    order = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a))
    order_submit(order=order, actor=tenants.pm)
    return order


def test_the_submitter_cannot_approve_and_another_pm_may(tenants, settings):
    settings.WERKBANK_APPROVAL_FOUR_EYES = True
    order = _submitted(tenants)
    second = factories.make_pm(username="zoe")
    events = AuditEvent.objects.count()

    refused = api_client(tenants.pm).post(f"/api/v1/orders/{order.pk}/approve/", {}, format="json")

    assert refused.status_code == 409
    body = refused.json()
    assert body["code"] == "four_eyes"
    assert f"was submitted to ROI review by {tenants.pm.username}" in body["detail"]
    assert "Who may: zoe." in body["detail"]
    assert body["missing"] == [f"an approval by a project manager other than {tenants.pm.username}"]
    order.refresh_from_db()
    assert order.status == OrderStatus.ROI_REVIEW and AuditEvent.objects.count() == events

    approved = api_client(second).post(f"/api/v1/orders/{order.pk}/approve/", {}, format="json")
    assert approved.status_code == 200, approved.json()
    assert approved.json()["status"] == OrderStatus.APPROVED


def test_the_order_page_shows_the_four_eyes_refusal(client, tenants, settings):
    settings.WERKBANK_APPROVAL_FOUR_EYES = True
    order = _submitted(tenants)
    client.force_login(tenants.pm)
    response = client.post(f"/pm/orders/{order.pk}/approve/", {"approve-note": ""})
    assert response.status_code == 409
    assert "another project manager must approve it (four eyes)" in response.text
    assert "none yet: add a second project manager" in response.text


def test_off_one_pm_submits_and_approves(tenants, settings):
    settings.WERKBANK_APPROVAL_FOUR_EYES = False
    order = _submitted(tenants)
    response = api_client(tenants.pm).post(f"/api/v1/orders/{order.pk}/approve/", {}, format="json")
    assert response.status_code == 200
