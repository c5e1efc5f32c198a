"""Warranty tasks. Thin: take ids, call a service. Idempotent: a ready pack is never rendered again."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from warranty.services.packs import pack_generate

#: Errors worth another try: the database or the storage was away for a moment.
TRANSIENT = (OperationalError, InterfaceError, ConnectionError, TimeoutError)


@shared_task(
    autoretry_for=TRANSIENT,
    retry_backoff=True,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=5,
)
def handover_pack_generate_task(*, pack_id: int) -> bool:
    """Render one handover pack (PDF + ZIP); True when it is ready after this run."""
    return pack_generate(pack_id=pack_id) is not None
