"""The warranty app's answer to "may this order move on?" (see `orders.gates`), registered in `ready()`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from builds.choices import ServerStatus
from builds.gates import order_servers
from orders.choices import OrderStatus
from orders.gates import named_at_most, register


def orders_servers_handed_over(orders: Sequence[Any]) -> dict[int, list[str]]:
    """The order gate of `closed`: every server handed over (seed 000 ends with the handover); one query
    for all orders."""
    by_order = order_servers(orders)
    return {
        order.pk: named_at_most(
            [
                f"Server {hostname} is {ServerStatus(status).label.lower()}; it must be handed over first."
                for hostname, status in by_order[order.pk]
                if status != ServerStatus.HANDED_OVER
            ],
            more=lambda count: f"{count} more server(s) are not handed over yet.",
        )
        for order in orders
    }


def order_servers_handed_over(order: Any) -> list[str]:
    return orders_servers_handed_over([order])[order.pk]


def register_gates() -> None:
    register(
        target=OrderStatus.CLOSED,
        name="warranty.servers_handed_over",
        check=order_servers_handed_over,
        check_many=orders_servers_handed_over,
    )
