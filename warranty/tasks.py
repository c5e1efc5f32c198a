"""Warranty tasks. Thin: take ids, call a service. Each is idempotent: a database constraint makes a repeat
harmless, and a ready pack is never rendered again."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from builds.models import Server
from warranty.services import (
    claim_draft_notice_send,
    expiry_notify,
    pm_digest_send,
)
from warranty.services.handover import handover_records_create
from warranty.services.packs import pack_generate

#: Errors worth another try: the database or the storage was away for a moment.
TRANSIENT = (OperationalError, InterfaceError, ConnectionError, TimeoutError)


@shared_task(
    autoretry_for=TRANSIENT, retry_backoff=True, retry_backoff_max=300, retry_jitter=True, max_retries=5
)
def handover_pack_generate_task(*, pack_id: int) -> bool:
    """Render one handover pack (PDF + ZIP); True when it is ready after this run."""
    return pack_generate(pack_id=pack_id) is not None


@shared_task(autoretry_for=TRANSIENT, retry_backoff=True, retry_jitter=True, max_retries=5)
def warranty_records_create_task(*, server_id: int) -> int:
    """Create a handed-over server's warranty records and ask for the pack revision that prints their dates;
    returns how many records this run created (0 on a repeat: the records' unique constraints)."""
    server = Server.objects.get(pk=server_id)
    return len(handover_records_create(server=server))


@shared_task(autoretry_for=(*TRANSIENT, OSError), retry_backoff=True, retry_jitter=True, max_retries=5)
def warranty_expiry_notify_task() -> int:
    """Daily (Celery beat): the expiry digests; returns the number of e-mails sent (0 on a repeat: the
    notices' unique (record, threshold))."""
    return expiry_notify(actor=None)


@shared_task(autoretry_for=(*TRANSIENT, OSError), retry_backoff=True, retry_jitter=True, max_retries=5)
def claim_draft_notify_task(*, claim_id: int) -> bool:
    """Tell the PMs of a claim drafted from a drift finding; True when this run sent it (False on a repeat:
    the claim is marked once told)."""
    return claim_draft_notice_send(claim_id=claim_id) is not None


@shared_task(autoretry_for=(*TRANSIENT, OSError), retry_backoff=True, retry_jitter=True, max_retries=5)
def pm_digest_task() -> bool:
    """Weekly (Celery beat, Mondays): the PMs' warranty digest; True when this run sent it (False on a
    repeat in the same week: the digest's unique week)."""
    return pm_digest_send() is not None
