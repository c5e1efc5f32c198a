"""``manage.py export-order WB-2026-0001 [--output FILE]``: one order's full record as a JSON bundle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ops.backup import BundleError, export_order


class Command(BaseCommand):
    help = (
        "Write one order's record (servers, components, steps, burn-in, deployment, audit …) as a versioned "
        "JSON bundle that import-order restores into an empty database. See ops/backup.py."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("reference", help="The order's reference, e.g. WB-2026-0001.")
        parser.add_argument("--output", "-o", help="File to write; default standard output.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bundle = export_order(options["reference"])
        except BundleError as exc:
            raise CommandError(str(exc)) from exc
        text = json.dumps(bundle, indent=1, ensure_ascii=False, sort_keys=True)
        if options["output"]:
            Path(options["output"]).write_text(text + "\n", encoding="utf-8")
            self.stderr.write(
                f"Wrote {len(bundle['objects'])} rows of {bundle['order']} to {options['output']}."
            )
        else:
            self.stdout.write(text)
