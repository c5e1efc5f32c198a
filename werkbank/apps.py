"""The core app: tenancy, audit, access control, API base classes."""

from __future__ import annotations

import gc
import logging

from django.apps import AppConfig
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger("werkbank")


class CoreConfig(AppConfig):
    name = "werkbank"
    label = "werkbank"
    verbose_name = "Werkbank core"

    def ready(self) -> None:
        from django.core import checks

        from werkbank import auth_audit, exports, i18n
        from werkbank.checks import check_task_broker

        checks.register(check_task_broker)  # production needs a broker (werkbank.E001)
        auth_audit.connect()  # logins, failed logins and logouts leave an AuditEvent
        i18n.connect()  # a login remembers the member's language and roles in the session
        exports.register_exports()  # what an order's export carries of the core's rows
        # Every admin is registered by now (the admin app's ready() ran autodiscover): the change lists of
        # Django's and the libraries' admins get the export that PMAdmin gives the project's.
        from django.contrib import admin

        from werkbank.admin_io import export_everywhere

        export_everywhere(admin.site)


def announce_task_mode() -> None:
    """Say once, when a server process starts, where Celery tasks run.

    Called from the WSGI/ASGI entry points (which `runserver` loads too) rather than from `ready()`, so that
    script commands such as `manage.py roi --json` keep their stderr to their own one-line errors.
    """
    from werkbank.checks import check_task_broker

    refused = check_task_broker()
    if refused:  # a server started without `manage.py check` (gunicorn) refuses as the check does
        raise ImproperlyConfigured(f"{refused[0].msg} {refused[0].hint}")
    if settings.CELERY_TASK_ALWAYS_EAGER:
        logger.warning("REDIS_URL is not set: Celery tasks run in-process (eager mode).")
    else:
        logger.info("Celery tasks go to the broker at REDIS_URL.")


def freeze_startup_heap() -> int:
    """Load every view, serializer and admin (through the URL configuration), then move every object alive
    now into the collector's permanent generation (`gc.freeze()`); returns how many were frozen.

    Called once by the WSGI/ASGI entry points, after the application is built. A server process's startup
    heap (Django, the apps, the URL patterns: some 135,000 objects) lives as long as the process, but the
    collector scanned all of it on each full collection, and a 200-row API page allocates enough to trigger
    one every few requests: those requests took ~100 ms more (orders at limit=200 in `make bench`: p50 35 ms;
    p95 157 ms not frozen, 57 ms frozen; bench/bench_orders.py measures both). The Python documentation
    recommends this for long-lived server processes (see `gc.freeze`).
    """
    from django.urls import get_resolver

    _patterns = get_resolver().url_patterns  # imports every app's views, serializers and admin
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
