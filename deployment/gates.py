"""The deployment app's answer to "may this order move on?" (see `orders.gates`), registered in `ready()`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from builds.choices import ServerStatus
from builds.gates import order_servers
from deployment.choices import DEPLOYED_OR_LATER
from orders.choices import OrderStatus
from orders.gates import named_at_most, register


def orders_servers_deployed(orders: Sequence[Any]) -> dict[int, list[str]]:
    """No handover until every server of the order is deployed (one query for all orders)."""
    by_order = order_servers(orders)
    missing: dict[int, list[str]] = {}
    for order in orders:
        servers = by_order[order.pk]
        if not servers:
            missing[order.pk] = [f"Order {order.reference} has no servers to hand over."]
            continue
        missing[order.pk] = named_at_most(
            [
                f"Server {hostname} is {ServerStatus(status).label.lower()}; it must be deployed first."
                for hostname, status in servers
                if status not in DEPLOYED_OR_LATER
            ],
            more=lambda count: f"{count} more server(s) are not deployed yet.",
        )
    return missing


def order_servers_deployed(order: Any) -> list[str]:
    return orders_servers_deployed([order])[order.pk]


def register_gates() -> None:
    register(
        target=OrderStatus.HANDED_OVER,
        name="deployment.servers_deployed",
        check=order_servers_deployed,
        check_many=orders_servers_deployed,
    )
