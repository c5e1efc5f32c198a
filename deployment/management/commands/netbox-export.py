"""Write the fleet as NetBox import files: `manage.py netbox-export --out DIR [--site NAME]`.

Writes racks.csv, devices.csv, interfaces.csv, prefixes.csv and ip-addresses.csv into DIR (made if missing),
for every site or the one named; import them into NetBox in that order (see `deployment.netbox`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from deployment.models import Site
from deployment.netbox import csv_text, netbox_tables


class Command(BaseCommand):
    help = "Write racks, devices, interfaces, prefixes and IP addresses as CSV in NetBox's import format."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--out", required=True, help="Directory to write the CSV files into")
        parser.add_argument("--site", help="Only this site (its name); all sites when left out")

    def handle(self, *args: Any, out: str, site: str | None = None, **options: Any) -> None:
        sites = Site.objects.order_by("name")
        if site is not None:
            sites = sites.filter(name=site)
            if not sites.exists():
                raise CommandError(f"No site named {site!r}.", returncode=2)
        directory = Path(out)
        if directory.exists() and not directory.is_dir():
            raise CommandError(f"{out} is a file, not a directory.", returncode=2)
        directory.mkdir(parents=True, exist_ok=True)
        for table in netbox_tables(sites=list(sites)):
            (directory / table.filename).write_text(csv_text(table), encoding="utf-8")
            self.stdout.write(f"{table.filename}: {len(table.rows)} rows")
