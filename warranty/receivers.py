"""Reactions of the warranty app to builds events (see builds.signals)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from werkbank.types import Actor

if TYPE_CHECKING:
    from builds.models import Allocation, Server
    from werkbank.models import Organization


def register_allocated_components(
    sender: Any,
    *,
    server: Server,
    allocations: Sequence[Allocation],
    customer: Organization,
    actor: Actor,
    **kwargs: Any,
) -> None:
    """Components allocated to a customer's server are registered in the customer's name, in the same
    transaction."""
    from warranty.services import registrations_record

    registrations_record(server=server, allocations=allocations, customer=customer, actor=actor)
