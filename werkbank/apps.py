"""The core app: tenancy, audit, access control, API base classes."""

from __future__ import annotations

import logging

from django.apps import AppConfig
from django.conf import settings

logger = logging.getLogger("werkbank")


class CoreConfig(AppConfig):
    name = "werkbank"
    label = "werkbank"
    verbose_name = "Werkbank core"

    def ready(self) -> None:
        if settings.CELERY_TASK_ALWAYS_EAGER:
            logger.warning("REDIS_URL is not set: Celery tasks run in-process (eager mode).")
