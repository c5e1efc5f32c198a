"""Reactions of the builds app to order events (see orders.signals)."""

from __future__ import annotations

from typing import Any

from orders.choices import OrderStatus


def create_servers_on_procurement(sender: Any, *, order: Any, actor: Any, after: str, **kwargs: Any) -> None:
    """Servers are created when the order moves to procurement (one per unit, with their connectors)."""
    if after == OrderStatus.PROCUREMENT:
        from builds.services import servers_create_for_order

        servers_create_for_order(order=order, actor=actor)
