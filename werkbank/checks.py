"""The core's system checks (registered in werkbank.apps.CoreConfig.ready)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks


def check_task_broker(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """werkbank.E001: production has a Celery broker (REDIS_URL), unless in-process tasks are allowed.

    Without a broker every task (handover packs, e-mails, burn-in ingests) runs inside the web request
    that enqueued it: no retries, no beat schedule, a slow render holds a web worker. That is the
    embedded profile's choice; in production it is a mistake unless WERKBANK_ALLOW_INPROCESS_TASKS=1
    says otherwise.
    """
    if not settings.PRODUCTION or settings.REDIS_URL or settings.WERKBANK_ALLOW_INPROCESS_TASKS:
        return []
    return [
        checks.Error(
            "REDIS_URL is not set: with WERKBANK_ENV=production, Celery tasks would run in-process.",
            hint="Set REDIS_URL (redis://host:6379/0), or WERKBANK_ALLOW_INPROCESS_TASKS=1 if that is meant.",
            id="werkbank.E001",
        )
    ]
