"""Inventory tasks. Thin: take ids, call a service. A repeat is harmless: a ready label batch (its
`ready_has_file` constraint) is never rendered again."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from inventory.services import label_batch_generate, po_document_send

#: Errors worth another try: the database or the storage was away for a moment.
TRANSIENT = (OperationalError, InterfaceError, ConnectionError, TimeoutError)


@shared_task(
    autoretry_for=TRANSIENT, retry_backoff=True, retry_backoff_max=300, retry_jitter=True, max_retries=5
)
def label_batch_render_task(*, batch_id: int) -> bool:
    """Render one label batch's PDF; True when it is ready after this run."""
    return label_batch_generate(batch_id=batch_id) is not None


@shared_task(
    autoretry_for=(*TRANSIENT, OSError),
    retry_backoff=True,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=5,
)
def po_document_send_task(*, po_id: int) -> bool:
    """Render a sent PO's PDF, keep it and e-mail it to the supplier; True when this run did."""
    return po_document_send(po_id=po_id) is not None
