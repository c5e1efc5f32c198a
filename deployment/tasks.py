"""Deployment tasks. Thin: take ids, call a service. Each is idempotent by a database constraint."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.conf import settings
from django.db import OperationalError

from deployment.choices import Platform
from deployment.models import PlatformAccount
from deployment.platforms import PlatformError, PlatformUnavailable
from deployment.services.credentials import bmc_rotated_notice_send
from deployment.services.platform import (
    platform_alert_send,
    platform_poll,
    platform_poll_failed,
)
from werkbank.tasks import enqueue_on_commit


@shared_task(
    autoretry_for=(OperationalError, ConnectionError, OSError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def bmc_rotated_notify_task(*, event_id: int) -> bool:
    """E-mail the customer that a server's BMC credentials changed (never the credentials); True when this
    run sent it. The StatusNotice row, unique per audit event, makes a second run send nothing."""
    return bmc_rotated_notice_send(event_id=event_id) is not None


# --- The rental platform poll (issue #28 item 4) ---------------------------------------------------------


@shared_task(bind=True, max_retries=None)
def platform_poll_task(self: Any, *, account_id: int) -> Any:
    """Poll one platform account (`platform_poll`); True when the platform was read, False when not.

    An unreachable platform is tried again `WERKBANK_PLATFORM_POLL_RETRIES` times, backing off (30 s,
    60 s, 120 s …); then, or at once for a refused key, the error is recorded on the account
    (`platform_poll_failed`) and the task ends without raising. Idempotent: a repeated poll of an unchanged
    platform appends nothing, and each alert is e-mailed once (`PlatformAlert.sent_at`).
    """
    account = PlatformAccount.objects.filter(pk=account_id).first()
    if account is None:
        return False
    try:
        platform_poll(account=account)
    except PlatformUnavailable as error:
        if self.request.retries < settings.WERKBANK_PLATFORM_POLL_RETRIES:
            # Schedule the next try and end this run without raising: a platform away for a moment is no
            # task failure (an in-process run, without a broker, tries again at once).
            return self.retry(countdown=min(30 * 2**self.request.retries, 900), throw=False)
        tries = self.request.retries + 1
        platform_poll_failed(account=account, error=f"{error} (after {tries} tries)")
        return False
    except PlatformError as error:
        platform_poll_failed(account=account, error=str(error))
        return False
    return True


@shared_task(autoretry_for=(OperationalError,), retry_backoff=True, retry_jitter=True, max_retries=5)
def platform_poll_all_task() -> int:
    """Every half hour (Celery beat): one poll task per pollable account; returns how many were enqueued."""
    ids = list(
        PlatformAccount.objects.filter(platform=Platform.VAST_AI).order_by("pk").values_list("pk", flat=True)
    )
    for account_id in ids:
        enqueue_on_commit("deployment.tasks.platform_poll_task", account_id=account_id)
    return len(ids)


@shared_task(
    autoretry_for=(OperationalError, ConnectionError, OSError),
    retry_backoff=True,
    retry_jitter=True,
    max_retries=5,
)
def platform_alert_send_task(*, alert_id: int) -> bool:
    """E-mail one platform alert to the PMs and the customer; True when this run sent it (False on a
    repeat: the alert's `sent_at`)."""
    return platform_alert_send(alert_id=alert_id) is not None
