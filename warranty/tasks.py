"""Warranty tasks. Thin: take ids, call a service. Each is idempotent by a database constraint."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from builds.models import Server

# --- warranty records and expiry notices (warranty/services/records.py, expiry.py) ----------------------


@shared_task(
    autoretry_for=(OperationalError, ConnectionError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def warranty_records_create_task(*, server_id: int) -> int:
    """Create a handed-over server's warranty records; returns how many this run created (0 on a repeat:
    the records' unique constraints)."""
    from warranty.services import warranty_records_create

    server = Server.objects.get(pk=server_id)
    return len(warranty_records_create(server=server, actor=None))


@shared_task(
    autoretry_for=(OperationalError, ConnectionError, OSError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def warranty_expiry_notify_task() -> int:
    """Daily (Celery beat): the expiry digests; returns the number of e-mails sent (0 on a repeat: the
    notices' unique (record, threshold))."""
    from warranty.services import expiry_notify

    return expiry_notify(actor=None)
