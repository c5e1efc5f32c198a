"""Reactions of the builds app to order events (see orders.signals)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from orders.choices import OrderStatus
from werkbank.types import Actor

if TYPE_CHECKING:
    from orders.models import Order


def create_servers_on_procurement(
    sender: Any, *, order: Order, actor: Actor, after: str, **kwargs: Any
) -> None:
    """Servers are created when the order moves to procurement (one per unit, with their connectors)."""
    if after == OrderStatus.PROCUREMENT:
        from builds.services import servers_create_for_order

        servers_create_for_order(order=order, actor=actor)
