"""`manage.py verify-pack FILE.zip`: check a handover pack's ZIP against its manifest.

Exit status 0 when every file the manifest lists is there with its SHA-256 and size and nothing else is;
otherwise 1, with one line per mismatching, missing or unknown file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from warranty.documents import verify_zip


class Command(BaseCommand):
    help = "Check a handover pack ZIP against its manifest.json (SHA-256 and size of every file)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("zip", help="the pack's ZIP file")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["zip"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file.")
        problems = verify_zip(path)
        if problems:
            for problem in problems:
                self.stderr.write(problem)
            raise CommandError(f"{path}: {len(problems)} problem(s); the pack does not verify.")
        self.stdout.write(f"{path}: every file matches the manifest.")
