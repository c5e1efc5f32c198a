"""Load the demo fleet of the seeds and print the demo logins. Running it again changes nothing.

Each app may ship a `demo` module with `seed(context)`; they run in INSTALLED_APPS order, which is the
dependency order (werkbank ← inventory ← orders ← builds ← warranty), so the core knows none of them.
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
        # The walk-through sends customers their status e-mails; keep them in memory, not on the console.
        with (
            override_settings(EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend"),
            transaction.atomic(),
        ):
            for app_config in apps.get_app_configs():
                module_name = f"{app_config.name}.demo"
                if find_spec(module_name) is not None:
                    import_module(module_name).seed(context)
        if quiet:
            return
        self.stdout.write(self.style.SUCCESS(f"Demo fleet ready ({context.created} new objects)."))
        self.stdout.write(f"Demo logins, password {DEMO_PASSWORD!r} for each:")
        for username, role in context.logins:
            self.stdout.write(f"  {username:<10} {role}")
