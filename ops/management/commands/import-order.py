"""``manage.py import-order FILE``: restore an order bundle (from export-order) into an empty database."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ops.backup import BundleError, import_order


class Command(BaseCommand):
    help = "Restore an order bundle written by export-order. Refuses a database that already holds data."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="The bundle (JSON) that export-order wrote.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bundle = json.loads(Path(options["file"]).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CommandError(f"Cannot read {options['file']}: {exc}") from exc
        try:
            count = import_order(bundle)
        except BundleError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Restored {count} rows of {bundle.get('order')}.")
