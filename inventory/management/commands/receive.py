"""Receive a purchase-order line from a packing-list CSV, by lot, from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from inventory.models import PurchaseOrderLine
from inventory.packing import parse_csv
from inventory.services import po_line_receive
from werkbank.errors import DomainError, InvalidInput


class Command(BaseCommand):
    help = "Receive the serials of a packing-list CSV on a PO line, into one lot; prints what it created."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("po_line_id", type=int, help="The purchase-order line's id")
        parser.add_argument("--lot", required=True, help="The manufacturer's lot code")
        parser.add_argument("--date-code", required=True, help="The manufacturer's date code, e.g. 2526")
        parser.add_argument("--origin", required=True, help="Country of origin, ISO 3166 alpha-2, e.g. DE")
        parser.add_argument(
            "--serials", required=True, type=Path, help="Packing-list CSV with a `serial` column"
        )
        parser.add_argument("--user", help="Username recorded as the receiver (default: none, i.e. 'system')")

    def handle(self, *args: Any, **options: Any) -> None:
        line = (
            PurchaseOrderLine.objects.select_related("purchase_order", "part")
            .filter(pk=options["po_line_id"])
            .first()
        )
        if line is None:
            raise CommandError(f"PO line {options['po_line_id']} does not exist.", returncode=2)
        actor = None
        if options["user"]:
            actor = get_user_model().objects.filter(username=options["user"]).first()
            if actor is None:
                raise CommandError(f"--user: no user {options['user']!r}.", returncode=2)
        try:
            data = options["serials"].read_bytes()
        except OSError as exc:
            raise CommandError(f"--serials: {exc.strerror}: {options['serials']}", returncode=2) from exc
        try:
            receipt = po_line_receive(
                line=line,
                actor=actor,
                lot_code=options["lot"],
                date_code=options["date_code"],
                origin=options["origin"],
                packing=parse_csv(data),
            )
        except InvalidInput as exc:
            for row in exc.rows:
                where = f"row {row['row']}" if row["row"] is not None else "file"
                column = f", column {row['column']}" if row["column"] else ""
                self.stderr.write(f"{where}{column}: {row['message']}")
            raise CommandError(
                f"{exc.field}: {exc.field_message} Nothing was received.", returncode=2
            ) from exc
        except DomainError as exc:
            raise CommandError(f"{exc.message} Nothing was received.", returncode=1) from exc
        lot = receipt.lot
        self.stdout.write(
            f"Received {len(receipt.components)} × {line.part.mpn} on {line.purchase_order.number} "
            f"(line {line.pk}: {receipt.line.quantity_received} of {receipt.line.quantity})."
        )
        self.stdout.write(
            f"Lot {lot.lot_code} ({'new' if receipt.lot_created else 'extended'}): "
            f"date code {lot.date_code}, origin {lot.country_of_origin}, supplier {lot.supplier.name}."
        )
        for component in receipt.components:
            self.stdout.write(f"  {component.serial}")
