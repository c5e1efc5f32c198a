"""Order tasks. Thin: take ids, call a service. Idempotent by the StatusNotice constraint."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from orders.services import order_status_notice_send


@shared_task(
    autoretry_for=(OperationalError, ConnectionError, OSError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def order_status_notify_task(*, event_id: int) -> bool:
    """E-mail the customer's members about one status transition; True when this run sent it."""
    return order_status_notice_send(event_id=event_id) is not None
