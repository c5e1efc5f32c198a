"""Allocation: components set aside for one server under row locks, all GPUs from one lot."""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from builds.models import (
    Allocation,
    Server,
)
from builds.services.servers import lock_server, require_open
from builds.signals import components_allocated
from inventory.choices import ComponentStatus, PartCategory
from inventory.models import Component
from inventory.services import component_move
from werkbank.access import is_pm
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.types import Actor


@transaction.atomic
def server_allocate(
    *, server: Server, actor: Actor, components: Iterable[Component], override_reason: str = ""
) -> list[Allocation]:
    """Set components aside for a server under row locks; `components_allocated` then registers their
    warranty to the customer (the warranty app's receiver, in this transaction).

    All GPUs of one server come from one lot (seed 000: "gleiche Fertigungslose"); a mixed lot needs a PM's
    written override.
    """
    locked_server = lock_server(server)
    require_open(locked_server)
    ids = sorted({component.pk for component in components})
    if not ids:
        raise InvalidInput("components", "name at least one component.")
    locked = list(
        Component.objects.select_for_update(of=("self",))
        .select_related("part", "lot")
        .filter(pk__in=ids)
        .order_by("pk")
    )
    taken = {
        allocation.component_id: allocation.server
        for allocation in Allocation.objects.filter(
            component__in=locked, released_at__isnull=True
        ).select_related("server")
    }
    for component in locked:
        if component.pk in taken:
            other = taken[component.pk]
            where = "this server" if other.pk == locked_server.pk else f"server {other.hostname}"
            raise RuleViolation(
                f"{component.part.mpn} {component.serial} is already allocated to {where}.",
                missing=[f"a free {component.part.mpn}"],
                code="component_taken",
            )
        if component.status != ComponentStatus.IN_STOCK:
            raise RuleViolation(
                f"{component.part.mpn} {component.serial} is "
                f"{component.get_status_display().lower()}, not in stock.",
                code="component_unavailable",
            )
    elsewhere = [c for c in locked if c.holder_id is not None and c.holder_id != locked_server.partner_id]
    if elsewhere:
        raise RuleViolation(
            f"{elsewhere[0].part.mpn} {elsewhere[0].serial} is at {elsewhere[0].location}, "
            f"not at the workshop that builds {locked_server.hostname}.",
            missing=[f"{c.serial}: stock at the server's workshop or our warehouse" for c in elsewhere],
            code="component_elsewhere",
        )
    bom = set(locked_server.order.configuration.lines.values_list("part_id", flat=True))
    foreign = [component for component in locked if component.part_id not in bom]
    if foreign:
        raise RuleViolation(
            f"{foreign[0].part.mpn} {foreign[0].serial} is not on the bill of materials of "
            f"{locked_server.order.configuration.name}.",
            missing=[f"{c.serial}: a part of the configuration's bill of materials" for c in foreign],
            code="not_on_bom",
        )
    gpu_lots = {
        lot_code
        for lot_code in Allocation.objects.filter(
            server=locked_server, released_at__isnull=True, component__part__category=PartCategory.GPU
        ).values_list("component__lot__lot_code", flat=True)
    } | {component.lot.lot_code for component in locked if component.part.category == PartCategory.GPU}
    override_reason = (override_reason or "").strip()
    if len(gpu_lots) > 1:
        if not override_reason:
            raise RuleViolation(
                f"The GPUs of {locked_server.hostname} would come from {len(gpu_lots)} lots "
                f"({', '.join(sorted(gpu_lots))}); one server takes GPUs of one lot unless a PM overrides it "
                "with a written reason.",
                missing=["GPUs of a single lot, or a PM's override reason"],
                code="mixed_lot",
            )
        if not is_pm(actor):
            raise RuleViolation(
                f"Mixing GPU lots on {locked_server.hostname} needs a project manager's override.",
                missing=["a project manager's override"],
                code="mixed_lot",
            )
    customer = locked_server.order.customer
    allocations = Allocation.objects.bulk_create(
        Allocation(
            component=component,
            server=locked_server,
            allocated_by=user_or_none(actor),
            lot_override_reason=override_reason if len(gpu_lots) > 1 else "",
        )
        for component in locked
    )
    component_move(
        components=locked,
        actor=actor,
        to_status=ComponentStatus.ALLOCATED,
        reason=f"Allocated to {locked_server.hostname}; warranty registered to {customer.name}",
    )
    audit(
        actor=actor,
        verb="server.allocate",
        obj=locked_server,
        after={
            "serials": [c.serial for c in locked],
            "customer": customer.name,
            "lots": sorted({c.lot.lot_code for c in locked}),
        },
        note=override_reason,
    )
    components_allocated.send(
        sender=Server, server=locked_server, allocations=allocations, customer=customer, actor=actor
    )
    return allocations
