"""Builds tasks. Thin: take ids, call a service. Idempotent by the StatusNotice constraint."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from builds.services.assignment import partner_assigned_notice_send


@shared_task(
    autoretry_for=(OperationalError, ConnectionError, OSError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def partner_assigned_notify_task(*, event_id: int) -> bool:
    """E-mail an assembly partner's members about the builds given to it; True when this run sent it."""
    return partner_assigned_notice_send(event_id=event_id) is not None
