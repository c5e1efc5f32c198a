"""The builds app's answers to "may this order move on?" (see `orders.gates`), registered in `ready()`."""

from __future__ import annotations

from typing import Any

from builds.choices import AT_LEAST_ASSEMBLED, ServerStatus
from builds.models import Server
from orders.choices import OrderStatus
from orders.gates import named_at_most, register


def order_has_servers(order: Any) -> list[str]:
    """No assembly for an order without servers (they are created when the order goes to procurement)."""
    if Server.objects.filter(order=order).exists():
        return []
    return [f"Order {order.reference} has no servers to assemble."]


def order_servers_assembled(order: Any) -> list[str]:
    """No burn-in until every server of the order is at least assembled."""
    servers = list(Server.objects.filter(order=order).order_by("sequence").values_list("hostname", "status"))
    if not servers:
        return [f"Order {order.reference} has no servers to burn in."]
    behind = [(hostname, status) for hostname, status in servers if status not in AT_LEAST_ASSEMBLED]
    return named_at_most(
        [
            f"Server {hostname} is {ServerStatus(status).label.lower()}; it must be assembled first."
            for hostname, status in behind
        ],
        more=lambda count: f"{count} more server(s) are not assembled yet.",
    )


def register_gates() -> None:
    register(target=OrderStatus.ASSEMBLY, name="builds.order_has_servers", check=order_has_servers)
    register(target=OrderStatus.BURN_IN, name="builds.servers_assembled", check=order_servers_assembled)
