"""System test: a real Celery worker, a real Redis broker, the real PostgreSQL test database."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from orders.models import StatusNotice
from orders.tasks import order_status_notify_task
from tests import factories
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = [pytest.mark.system, pytest.mark.django_db(transaction=True)]


def _wait_for(condition: Callable[[], bool], worker, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; worker log:\n{worker.log.read_text()}")
        time.sleep(0.2)


def test_notification_runs_exactly_once_per_transition(tenants, celery_worker):
    order = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a))
    pm = api_client(tenants.pm)

    # The transition commits, and only then is the task published to Redis for the worker.
    assert pm.post(f"/api/v1/orders/{order.pk}/submit/", {}, format="json").status_code == 200
    submitted = AuditEvent.objects.get(verb="order.submit")
    _wait_for(lambda: StatusNotice.objects.filter(event=submitted).exists(), celery_worker)

    # The broker delivers the same task again (at-least-once): the worker must send nothing more.
    order_status_notify_task.delay(event_id=submitted.pk)
    # The solo worker takes one message at a time in order, so once the next transition's notice exists,
    # the duplicate has been handled.
    assert pm.post(f"/api/v1/orders/{order.pk}/approve/", {}, format="json").status_code == 200
    approved = AuditEvent.objects.get(verb="order.approve")
    _wait_for(lambda: StatusNotice.objects.filter(event=approved).exists(), celery_worker)

    assert StatusNotice.objects.filter(event=submitted).count() == 1
    mails = celery_worker.mails()
    assert len(mails) == 2, mails
    assert f"Subject: [Werkbank] Order {order.reference}: ROI review" in mails[0] + mails[1]
    assert f"Subject: [Werkbank] Order {order.reference}: Approved" in mails[0] + mails[1]
    assert all(f"To: {tenants.user_a.email}" in mail for mail in mails)
    log = celery_worker.log.read_text()
    assert log.count("orders.tasks.order_status_notify_task") >= 3  # received: submit, duplicate, approve
