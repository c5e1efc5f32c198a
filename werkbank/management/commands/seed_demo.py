"""Load the demo fleet of the seeds and print the demo logins. Running it again changes nothing.

Each app may ship a `demo` module with `seed(context)`; they run in INSTALLED_APPS order, which is the
dependency order (werkbank ← inventory ← orders ← builds ← warranty), so the core knows none of them.
They all run in one transaction. A loader that needs what happens on its commit (a Celery task enqueued
with `enqueue_on_commit` runs then: in-process without REDIS_URL, else on a worker) may also define
`seed_after_commit(context)`: those run after that commit, in the same order, in transactions of their own.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.test.utils import override_settings

from werkbank.demo_context import DEMO_PASSWORD, DemoContext


class Command(BaseCommand):
    help = "Load the demo fleet from the seeds (idempotent) and print the demo logins."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--quiet", action="store_true", help="Do not print the logins.")

    def handle(self, *args: Any, quiet: bool = False, **options: Any) -> None:
        if settings.PRODUCTION:
            raise CommandError(
                "seed_demo creates logins with a known password; it refuses to run in production."
            )
        context = DemoContext()
        modules = [
            import_module(f"{app_config.name}.demo")
            for app_config in apps.get_app_configs()
            if find_spec(f"{app_config.name}.demo") is not None
        ]
        # The walk-through sends customers their status e-mails; keep them in memory, not on the console.
        with override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"):
            with transaction.atomic():
                for module in modules:
                    module.seed(context)
            # Committed: its on-commit work (tasks, stored files) has run, or is queued for a worker.
            for module in modules:
                after_commit = getattr(module, "seed_after_commit", None)
                if after_commit is not None:
                    after_commit(context)
        if quiet:
            return
        self.stdout.write(self.style.SUCCESS(f"Demo fleet ready ({context.created} new objects)."))
        self.stdout.write(f"Demo logins, password {DEMO_PASSWORD!r} for each:")
        for username, role in context.logins:
            self.stdout.write(f"  {username:<10} {role}")
