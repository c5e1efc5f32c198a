"""Warranty registration: each component allocated to a customer's server is registered in the customer's
name (seed 000: "vollständige Garantieunterlagen auf den Namen des Kunden")."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import transaction

from builds.models import Allocation, Server
from warranty.models import WarrantyRegistration
from werkbank.audit import audit
from werkbank.models import Organization
from werkbank.types import Actor


@transaction.atomic
def registrations_record(
    *, server: Server, allocations: Sequence[Allocation], customer: Organization, actor: Actor
) -> list[WarrantyRegistration]:
    """Register the allocated components' warranty to the customer, one row per allocation.

    Called by the receiver of `builds.signals.components_allocated`, inside the allocating transaction.
    Idempotent: an allocation already registered is left as it is (the one-to-one on the allocation).
    """
    if not allocations:
        return []
    done = set(
        WarrantyRegistration.objects.filter(allocation__in=allocations).values_list(
            "allocation_id", flat=True
        )
    )
    fresh = [allocation for allocation in allocations if allocation.pk not in done]
    registrations = WarrantyRegistration.objects.bulk_create(
        WarrantyRegistration(
            allocation=allocation,
            component_id=allocation.component_id,
            server=server,
            customer=customer,
            registered_at=allocation.allocated_at,
        )
        for allocation in fresh
    )
    if registrations:
        audit(
            actor=actor,
            verb="warranty.register",
            obj=server,
            after={
                "customer": customer.name,
                "serials": [allocation.component.serial for allocation in fresh],
            },
        )
    return registrations
