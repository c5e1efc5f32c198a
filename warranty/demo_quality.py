"""Demo data of the fleet's quality (issue #29), after the fleet's first server was handed over.

- The two cards that failed that server's first burn-in (burnin/demo.py) go back to their supplier: the
  first is shipped under the supplier's RMA number and came back as a replacement serial, booked into
  stock in the same lot; the second is shipped and waits for the supplier's answer.
- Spares near the end of their supplier warranty: the demo's stock all arrived today, so three of the fleet
  order's spare parts are shown as received long ago (their `received_at` moved back, as a warehouse of an
  older fleet holds them): their supplier warranty ends in 20, 45 and 80 days.

The failures themselves are attributed by the warranty app's receivers as they happen (the burn-in findings,
the claim, the 7U machine's blacklisted connectors); nothing here writes an attribution. Running it again
adds nothing.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from dateutil.relativedelta import relativedelta
from django.db import transaction
from django.utils import timezone

from builds.models import Server
from inventory.choices import ComponentStatus, PartCategory
from inventory.models import Component
from warranty.choices import FailureCause, SupplierReturnOutcome
from warranty.models import Attribution, SupplierReturn
from warranty.services.supplier_returns import (
    supplier_return_close,
    supplier_return_open,
    supplier_return_ship,
)

#: The supplier's RMA numbers of the two returns.
SUPPLIER_RMA = ["ALT-RMA-558120", "ALT-RMA-558121"]
#: Days before today: shipped, and (the first) answered with a replacement.
SHIPPED_DAYS_AGO, ANSWERED_DAYS_AGO = 20, 6
#: Days from today at which the three old spares' supplier warranty ends.
SPARE_WARRANTY_LEFT_DAYS = [20, 45, 80]


def seed_quality(*, server: Server, pm: Any) -> int:
    """The supplier returns of the server's failed cards and the old spares; how many objects it added."""
    if SupplierReturn.objects.exists():
        return 0
    failed = list(
        Component.objects.filter(
            status=ComponentStatus.FAILED,
            part__category=PartCategory.GPU,
            installations__server=server,
        )
        .distinct()
        .order_by("serial")
    )
    if len(failed) < 2:
        return 0
    now = timezone.now()
    with transaction.atomic():
        returns = []
        for component, rma in zip(failed[:2], SUPPLIER_RMA, strict=True):
            attribution = Attribution.objects.filter(
                component=component, cause=FailureCause.COMPONENT
            ).first()
            opened = supplier_return_open(
                component=component,
                actor=pm,
                reason=f"Failed its burn-in in {server.hostname}: "
                + (attribution.proposed_reason if attribution else "see the burn-in report"),
                attribution=attribution,
            )
            returns.append(
                supplier_return_ship(
                    supplier_return=opened,
                    actor=pm,
                    supplier_rma_number=rma,
                    shipped_at=now - timedelta(days=SHIPPED_DAYS_AGO),
                )
            )
        supplier_return_close(
            supplier_return=returns[0],
            actor=pm,
            outcome=SupplierReturnOutcome.REPLACEMENT,
            note="Confirmed faulty (memory); the supplier sent a new card of the same lot.",
            received_at=now - timedelta(days=ANSWERED_DAYS_AGO),
            replacement_serial=f"{failed[0].serial}R",
        )
        _age_spares(server=server, today=now)
    return 3


def _age_spares(*, server: Server, today: Any) -> None:
    """Three of the order's spares (not GPUs) as received so long ago that their supplier warranty ends
    within 90 days."""
    spares = list(
        Component.objects.filter(
            status=ComponentStatus.IN_STOCK,
            po_line__purchase_order__order_link__order=server.order,
        )
        .exclude(part__category=PartCategory.GPU)
        .select_related("lot__supplier")
        .order_by("part__category", "serial")[: len(SPARE_WARRANTY_LEFT_DAYS)]
    )
    for component, left in zip(spares, SPARE_WARRANTY_LEFT_DAYS, strict=False):
        months = component.lot.supplier.warranty_months
        received = today + timedelta(days=left) - relativedelta(months=months)
        Component.objects.filter(pk=component.pk).update(received_at=received)
