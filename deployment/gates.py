"""The deployment app's answer to "may this order move on?" (see `orders.gates`), registered in `ready()`."""

from __future__ import annotations

from typing import Any

from builds.choices import ServerStatus
from builds.models import Server
from deployment.choices import DEPLOYED_OR_LATER
from orders.choices import OrderStatus
from orders.gates import named_at_most, register


def order_servers_deployed(order: Any) -> list[str]:
    """No handover until every server of the order is deployed."""
    servers = list(Server.objects.filter(order=order).order_by("sequence").values_list("hostname", "status"))
    if not servers:
        return [f"Order {order.reference} has no servers to hand over."]
    return named_at_most(
        [
            f"Server {hostname} is {ServerStatus(status).label.lower()}; it must be deployed first."
            for hostname, status in servers
            if status not in DEPLOYED_OR_LATER
        ],
        more=lambda count: f"{count} more server(s) are not deployed yet.",
    )


def register_gates() -> None:
    register(target=OrderStatus.HANDED_OVER, name="deployment.servers_deployed", check=order_servers_deployed)
