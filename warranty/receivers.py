"""Reactions of the warranty app to builds events (see builds.signals)."""

from __future__ import annotations

from typing import Any


def register_allocated_components(
    sender: Any, *, server: Any, allocations: Any, customer: Any, actor: Any, **kwargs: Any
) -> None:
    """Components allocated to a customer's server are registered in the customer's name, in the same
    transaction."""
    from warranty.services import registrations_record

    registrations_record(server=server, allocations=allocations, customer=customer, actor=actor)
