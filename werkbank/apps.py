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
        from werkbank import auth_audit, i18n

        auth_audit.connect()  # logins, failed logins and logouts leave an AuditEvent
        i18n.connect()  # a login remembers the member's language and roles in the session


def announce_task_mode() -> None:
    """Say once, when a server process starts, where Celery tasks run.

    Called from the WSGI/ASGI entry points (which `runserver` loads too) rather than from `ready()`, so that
    script commands such as `manage.py roi --json` keep their stderr to their own one-line errors.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        logger.warning("REDIS_URL is not set: Celery tasks run in-process (eager mode).")
    else:
        logger.info("Celery tasks go to the broker at REDIS_URL.")
