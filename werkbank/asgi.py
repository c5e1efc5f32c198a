"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "werkbank.settings")
application = get_asgi_application()

from werkbank.apps import announce_task_mode, freeze_startup_heap  # noqa: E402 - needs the app registry

announce_task_mode()
freeze_startup_heap()
