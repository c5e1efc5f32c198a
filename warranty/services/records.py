"""Warranty records: one per serial a customer received at handover, and a replacement's for the rest of
the term."""

from __future__ import annotations

from datetime import date

from dateutil.relativedelta import relativedelta
from django.db import transaction
from django.utils import timezone

from builds.choices import ServerStatus
from builds.models import Installation, Server
from builds.services import lock_server
from warranty.choices import RecordKind
from warranty.models import WarrantyRecord
from warranty.selectors import component_description, server_warranty_serial, warranty_end
from werkbank.audit import audit
from werkbank.errors import RuleViolation
from werkbank.models import AuditEvent
from werkbank.types import Actor


def remaining_months(start: date, end: date) -> int:
    """Whole months from `start` to `end`, a begun month counted as one (at least 1): the term a
    replacement's record states. Its end date is the replaced record's, not start + this."""
    span = relativedelta(end, start)
    months = span.years * 12 + span.months + (1 if span.days > 0 else 0)
    return max(1, months)


def handover_date(server: Server) -> date:
    """The day the server was handed over: its `server.hand_over` audit event (in the site's time zone)."""
    event = (
        AuditEvent.objects.for_object(server).filter(verb="server.hand_over").order_by("-created_at").first()
    )
    return timezone.localdate(event.created_at) if event else timezone.localdate()


@transaction.atomic
def warranty_records_create(*, server: Server, actor: Actor) -> list[WarrantyRecord]:
    """One warranty record per component installed in a handed-over server, plus one for the server.

    Start at the handover date, the order's term (36 or 60 months), end = start + term, in the customer's
    name. Idempotent: the partial unique constraints (one record per server, one per server and component)
    make the insert skip what exists (ON CONFLICT DO NOTHING), so a repeated or concurrent run adds
    nothing; the server's lock orders concurrent runs. Returns the records it created.
    """
    locked = lock_server(server)
    if locked.status != ServerStatus.HANDED_OVER:
        raise RuleViolation(
            f"Server {locked.hostname} is {locked.get_status_display().lower()}; its warranty starts at "
            "handover.",
            missing=["server status handed over"],
            code="not_handed_over",
        )
    order = locked.order
    start = handover_date(locked)
    end = warranty_end(start, order.warranty_months)
    common = {
        "server": locked,
        "order": order,
        "customer": order.customer,
        "start_date": start,
        "term_months": order.warranty_months,
        "end_date": end,
    }
    # component_id is None for the server's own record (the stubs type the nullable key as int).
    existing: set[tuple[str, int | None]] = set(
        WarrantyRecord.objects.filter(server=locked).values_list("kind", "component_id").order_by()
    )
    wanted: list[WarrantyRecord] = []
    if (RecordKind.SERVER, None) not in existing:
        wanted.append(
            WarrantyRecord(
                kind=RecordKind.SERVER,
                serial=server_warranty_serial(locked),
                description=f"Server {locked.hostname} ({order.configuration.name})"[:200],
                **common,
            )
        )
    installed = (
        Installation.objects.active()
        .filter(server=locked)
        .select_related("component__part")
        .order_by("connector__position", "pk")
    )
    for installation in installed:
        component = installation.component
        if (RecordKind.COMPONENT, component.pk) in existing:
            continue
        wanted.append(
            WarrantyRecord(
                kind=RecordKind.COMPONENT,
                component=component,
                serial=component.serial,
                description=component_description(component),
                **common,
            )
        )
    if not wanted:
        return []
    WarrantyRecord.objects.bulk_create(wanted, ignore_conflicts=True)
    created = [
        record
        for record in WarrantyRecord.objects.filter(server=locked).order_by("pk")
        if (record.kind, record.component_id) not in existing
    ]
    audit(
        actor=actor,
        verb="warranty.records_create",
        obj=locked,
        after={
            "serials": [record.serial for record in wanted],
            "start_date": start.isoformat(),
            "end_date": end.isoformat(),
            "term_months": order.warranty_months,
        },
    )
    return created
