"""Every order transition through the API: one allowed path, one refused path (409, nothing written)."""

from __future__ import annotations

import pytest
from django.core import mail

from orders.choices import OrderStatus as S
from orders.models import Order, StatusNotice
from tests import factories
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

# action, from, to, a status the action is refused from, the body it needs
CASES = [
    ("submit", S.DRAFT, S.ROI_REVIEW, S.APPROVED, {}),
    ("approve", S.ROI_REVIEW, S.APPROVED, S.DRAFT, {"note": "ROI checked"}),
    ("reject", S.ROI_REVIEW, S.REJECTED, S.APPROVED, {"reason": "Payback 51 months"}),
    ("procure", S.APPROVED, S.PROCUREMENT, S.ROI_REVIEW, {}),
    ("start_assembly", S.PROCUREMENT, S.ASSEMBLY, S.APPROVED, {}),
    ("start_burn_in", S.ASSEMBLY, S.BURN_IN, S.PROCUREMENT, {}),
    ("start_deployment", S.BURN_IN, S.DEPLOYMENT, S.ASSEMBLY, {}),
    ("hand_over", S.DEPLOYMENT, S.HANDED_OVER, S.BURN_IN, {}),
    ("close", S.HANDED_OVER, S.CLOSED, S.DEPLOYMENT, {}),
    ("cancel", S.PROCUREMENT, S.CANCELLED, S.ASSEMBLY, {"reason": "Customer withdrew"}),
]


#: What the builds, burn-in and deployment apps' gates need from an order's servers before these transitions.
SERVERS_FOR = {
    "start_assembly": "planned",
    "start_burn_in": "assembled",
    "start_deployment": "burn_in_passed",
    # The order's handover follows its servers' (issue #24): a deployed server is handed over first.
    "hand_over": "handed_over",
}


def _url(order: Order, action: str) -> str:
    return f"/api/v1/orders/{order.pk}/{action.replace('_', '-')}/"


@pytest.mark.parametrize(
    ("action", "source", "target", "refused_from", "body"), CASES, ids=[c[0] for c in CASES]
)
def test_transition_allowed(
    tenants, django_capture_on_commit_callbacks, action, source, target, refused_from, body
):
    order = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a, status=source))
    if action in SERVERS_FOR:
        factories.make_servers(order, status=SERVERS_FOR[action])
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client(tenants.pm).post(_url(order, action), body, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["status"] == target
    order.refresh_from_db()
    assert order.status == target
    event = AuditEvent.objects.for_object(order).get()
    assert (event.verb, event.before, event.after["status"], event.actor) == (
        f"order.{action}",
        {"status": source},
        target,
        tenants.pm,
    )
    assert event.note == body.get("reason", body.get("note", ""))
    # The customer's member and its contact address hear about it, once.
    assert [message.to for message in mail.outbox] == [
        sorted([tenants.user_a.email, tenants.customer_a.contact_email])
    ]
    assert order.reference in mail.outbox[0].subject


@pytest.mark.parametrize(
    ("action", "source", "target", "refused_from", "body"), CASES, ids=[c[0] for c in CASES]
)
def test_transition_refused_from_the_wrong_status(
    tenants, django_capture_on_commit_callbacks, action, source, target, refused_from, body
):
    order = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a, status=refused_from))
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client(tenants.pm).post(_url(order, action), body, format="json")

    assert response.status_code == 409
    payload = response.json()
    assert payload["code"] == "invalid_transition"
    assert f"is {S(refused_from).label.lower()}" in payload["detail"]
    assert S(source).label.lower() in payload["detail"]
    assert any(source in missing for missing in payload["missing"])
    order.refresh_from_db()
    assert order.status == refused_from
    assert not AuditEvent.objects.exists()
    assert not StatusNotice.objects.exists()
    assert mail.outbox == []


def test_submit_refused_when_the_configuration_has_no_gpu(tenants):
    configuration = factories.ConfigurationFactory(lines=[(factories.ChassisFactory(), 1)])
    order = factories.OrderFactory(customer=tenants.customer_a, configuration=configuration)
    response = api_client(tenants.pm).post(_url(order, "submit"), {}, format="json")
    assert response.status_code == 409
    assert response.json()["missing"] == [f"a GPU line on configuration {configuration.name}"]
    order.refresh_from_db()
    assert order.status == S.DRAFT
    assert not AuditEvent.objects.exists()


@pytest.mark.parametrize("action", ["reject", "cancel"])
def test_reason_is_required(tenants, action):
    order = factories.OrderFactory(customer=tenants.customer_a, status=S.ROI_REVIEW)
    for body in ({}, {"reason": "   "}):
        response = api_client(tenants.pm).post(_url(order, action), body, format="json")
        assert response.status_code == 400
        assert "reason" in response.json()
    order.refresh_from_db()
    assert order.status == S.ROI_REVIEW
    assert not AuditEvent.objects.exists()


def test_status_cannot_be_patched(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a)
    response = api_client(tenants.pm).patch(
        f"/api/v1/orders/{order.pk}/", {"status": S.CLOSED, "notes": "rush"}, format="json"
    )
    assert response.status_code == 200
    order.refresh_from_db()
    assert (order.status, order.notes) == (S.DRAFT, "rush")


def test_terms_are_frozen_after_draft(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=S.APPROVED)
    response = api_client(tenants.pm).patch(f"/api/v1/orders/{order.pk}/", {"server_count": 9}, format="json")
    assert response.status_code == 409
    assert "server_count" in response.json()["detail"]
    order.refresh_from_db()
    assert order.server_count == 2


def test_customer_member_cannot_transition_own_order(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=S.ROI_REVIEW)
    response = api_client(tenants.user_a).post(_url(order, "approve"), {}, format="json")
    assert response.status_code == 403
    order.refresh_from_db()
    assert order.status == S.ROI_REVIEW


def test_notification_is_sent_once_per_transition(tenants, django_capture_on_commit_callbacks):
    from orders.tasks import order_status_notify_task

    order = factories.OrderFactory(customer=tenants.customer_a)
    with django_capture_on_commit_callbacks(execute=True):
        api_client(tenants.pm).post(_url(order, "submit"), {}, format="json")
    event = AuditEvent.objects.for_object(order).get()
    # A re-delivered task finds the notice and sends nothing.
    assert order_status_notify_task.delay(event_id=event.pk).get() is False
    assert len(mail.outbox) == 1
    assert StatusNotice.objects.filter(event=event).count() == 1


def test_german_customer_gets_a_german_notice(tenants, django_capture_on_commit_callbacks):
    tenants.customer_a.language = "de"
    tenants.customer_a.save(update_fields=["language"])
    order = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a, status=S.ROI_REVIEW))
    with django_capture_on_commit_callbacks(execute=True):
        api_client(tenants.pm).post(_url(order, "approve"), {}, format="json")
    assert mail.outbox[0].subject == f"[Werkbank] Auftrag {order.reference}: Freigegeben"
    assert "„ROI-Prüfung“ auf „Freigegeben“" in mail.outbox[0].body


def test_the_status_mail_carries_a_rejection_reason_but_no_internal_note(
    tenants, django_capture_on_commit_callbacks
):
    """A PM's note on an approval is internal (werkbank/audiences.py); a rejection's reason is not."""
    approved = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a, status=S.ROI_REVIEW))
    rejected = factories.OrderFactory(customer=tenants.customer_a, status=S.ROI_REVIEW)
    client = api_client(tenants.pm)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(_url(approved, "approve"), {"note": "Margin thin, approved as a favour"}, format="json")
        client.post(_url(rejected, "reject"), {"reason": "Payback beyond 36 months"}, format="json")

    bodies = {message.subject: message.body for message in mail.outbox}
    approval = next(body for subject, body in bodies.items() if approved.reference in subject)
    rejection = next(body for subject, body in bodies.items() if rejected.reference in subject)
    assert "Margin thin" not in approval and "Note:" not in approval
    assert "Note: Payback beyond 36 months" in rejection
