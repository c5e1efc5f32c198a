"""WSGI entry point."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "werkbank.settings")
application = get_wsgi_application()

from werkbank.apps import announce_task_mode, freeze_startup_heap  # noqa: E402 - needs the app registry

announce_task_mode()
freeze_startup_heap()
