"""Rows for the tests of the PM's warranty report, the spares near their supplier warranty's end and the PMs'
digest: warranty records ending a given number of days from today, and components in stock received on a
given day from a supplier with its warranty term. Small and explicit, through the factories."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any

from django.utils import timezone

from inventory.models import Component, Supplier
from inventory.packing import parse_scanner
from inventory.services import po_line_receive
from orders.models import Order
from tests import factories
from warranty.models import WarrantyRecord


def records_ending(
    customer: Any, ends: dict[str, int], *, today: date | None = None, replaced: tuple[str, ...] = ()
) -> dict[str, WarrantyRecord]:
    """One order of `customer` with a server per serial, and each server's own record ending `ends[serial]`
    days from today (negative: ended); the serials in `replaced` are marked replaced."""
    today = today or timezone.localdate()
    order = factories.OrderFactory(customer=customer, server_count=len(ends))
    servers = factories.make_servers(order, status="handed_over")
    records = {}
    for server, (serial, days) in zip(servers, ends.items(), strict=True):
        end = today + timedelta(days=days)
        records[serial] = WarrantyRecord.objects.create(
            kind="server",
            server=server,
            order=order,
            customer=customer,
            serial=serial,
            description=f"Server {serial}",
            start_date=end - timedelta(days=1096),
            term_months=36,
            end_date=end,
            replaced_at=timezone.now() if serial in replaced else None,
        )
    return records


def component_record(order: Order, component: Component, *, ends_in: int) -> WarrantyRecord:
    """A component's record on the order's first server, ending `ends_in` days from today."""
    server = order.servers.order_by("sequence").first()
    end = timezone.localdate() + timedelta(days=ends_in)
    return WarrantyRecord.objects.create(
        kind="component",
        server=server,
        component=component,
        order=order,
        customer=order.customer,
        serial=component.serial,
        description=f"{component.part.manufacturer} {component.part.name} ({component.part.mpn})",
        start_date=end - timedelta(days=1096),
        term_months=36,
        end_date=end,
    )


def supplier(name: str, months: int) -> Supplier:
    return factories.SupplierFactory(name=name, warranty_months=months, country="DE")


def stock(
    source: Supplier, received: dict[str, date], *, lot_code: str = "L-1", **part: Any
) -> list[Component]:
    """Serials received from `source` into one lot, each with its receipt day (noon, local time)."""
    po = factories.make_po(supplier=source, quantity=len(received), part=factories.PartFactory(**part))
    po_line_receive(
        line=po.lines.get(),
        actor=factories.make_pm(),
        lot_code=lot_code,
        date_code="2526",
        origin="TW",
        packing=parse_scanner("\n".join(received)),
    )
    zone = timezone.get_current_timezone()
    for serial, day in received.items():
        Component.objects.filter(serial=serial).update(
            received_at=datetime.combine(day, time(12), tzinfo=zone)
        )
    return list(Component.objects.filter(serial__in=list(received)).order_by("serial"))
