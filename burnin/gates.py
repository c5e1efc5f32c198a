"""The burn-in app's answer to "may this order move on?" (see `orders.gates`), registered in `ready()`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from builds.choices import ServerStatus
from builds.gates import order_servers
from orders.choices import OrderStatus
from orders.gates import named_at_most, register

#: Statuses of a server that has passed burn-in, whatever happened since.
PASSED_BURN_IN = frozenset({ServerStatus.BURN_IN_PASSED, ServerStatus.DEPLOYED, ServerStatus.HANDED_OVER})


def orders_servers_passed_burnin(orders: Sequence[Any]) -> dict[int, list[str]]:
    """No deployment until every server of the order has passed burn-in (one query for all orders)."""
    by_order = order_servers(orders)
    missing: dict[int, list[str]] = {}
    for order in orders:
        servers = by_order[order.pk]
        if not servers:
            missing[order.pk] = [f"Order {order.reference} has no servers to deploy."]
            continue
        missing[order.pk] = named_at_most(
            [
                f"Server {hostname} is {ServerStatus(status).label.lower()}; it must pass burn-in first."
                for hostname, status in servers
                if status not in PASSED_BURN_IN
            ],
            more=lambda count: f"{count} more server(s) have not passed burn-in yet.",
        )
    return missing


def order_servers_passed_burnin(order: Any) -> list[str]:
    return orders_servers_passed_burnin([order])[order.pk]


def register_gates() -> None:
    register(
        target=OrderStatus.DEPLOYMENT,
        name="burnin.servers_passed",
        check=order_servers_passed_burnin,
        check_many=orders_servers_passed_burnin,
    )
