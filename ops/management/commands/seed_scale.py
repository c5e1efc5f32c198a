"""`manage.py seed_scale`: the fleet-scale dataset of issue #15 (ops.scale), for benchmarks and trials."""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError, connection

from ops import scale


class Command(BaseCommand):
    """Write the scale dataset: 10,000 servers, 100,000 components and 1.7 million telemetry samples by
    default. Refuses a database that already holds a fleet, unless `--allow-nonempty`."""

    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        defaults = scale.ScaleSize()
        parser.add_argument("--servers", type=int, default=defaults.servers)
        parser.add_argument("--components", type=int, default=defaults.components)
        parser.add_argument("--samples", type=int, default=defaults.samples, help="Telemetry samples in all.")
        parser.add_argument("--orders", type=int, default=defaults.orders)
        parser.add_argument("--seed", type=int, default=defaults.seed, help="The random generator's seed.")
        parser.add_argument(
            "--allow-nonempty",
            action="store_true",
            help="Add to a database that already holds data (the scale rows' names must still be free).",
        )
        parser.add_argument("--digest", action="store_true", help="Print the digest of the seeded tables.")

    def handle(self, *args: Any, allow_nonempty: bool, digest: bool, **options: Any) -> None:
        size = scale.ScaleSize(
            servers=options["servers"],
            components=options["components"],
            samples=options["samples"],
            orders=options["orders"],
            seed=options["seed"],
        )
        for name in ("servers", "components", "samples", "orders"):
            if getattr(size, name) < 0:
                raise CommandError(f"--{name} must not be negative.")
        if size.orders < 1:
            raise CommandError("--orders must be at least 1.")
        if not allow_nonempty and not scale.is_empty():
            raise CommandError(
                "The database already holds organizations, parts, orders, servers or components: seed_scale "
                "writes a fleet into an empty database (migrate a fresh one), or pass --allow-nonempty."
            )
        verbose = options["verbosity"] >= 1
        start = time.perf_counter()

        def log(line: str) -> None:
            if verbose:
                self.stdout.write(f"{time.perf_counter() - start:7.1f} s  {line}")

        try:
            counts = scale.seed(size=size, log=log)
        except (IntegrityError, connection.Database.IntegrityError) as error:
            # The one transaction rolled back: nothing was written. (COPY runs on psycopg's own cursor, whose
            # errors Django does not wrap.)
            raise CommandError(
                f"Nothing written: a scale row collides with one already here ({error}). seed_scale has "
                "probably run on this database before; its names and numbers are the same on every run."
            ) from error
        if verbose:
            total = sum(counts.values())
            self.stdout.write(
                f"{total} rows in {time.perf_counter() - start:.1f} s; logins: {scale.PM_USERNAME}, "
                f"scale-partner-001 …, scale-customer-001 … (password {scale.PASSWORD})"
            )
        if digest:
            self.stdout.write(scale.digest())
