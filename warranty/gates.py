"""The warranty app's answer to "may this order move on?" (see `orders.gates`), registered in `ready()`."""

from __future__ import annotations

from typing import Any

from builds.choices import ServerStatus
from builds.models import Server
from orders.choices import OrderStatus
from orders.gates import named_at_most, register


def order_servers_handed_over(order: Any) -> list[str]:
    """The order gate of `closed`: every server handed over (seed 000 ends with the handover)."""
    pending = list(
        Server.objects.filter(order=order)
        .exclude(status=ServerStatus.HANDED_OVER)
        .order_by("sequence")
        .values_list("hostname", "status")
    )
    return named_at_most(
        [
            f"Server {hostname} is {ServerStatus(status).label.lower()}; it must be handed over first."
            for hostname, status in pending
        ],
        more=lambda count: f"{count} more server(s) are not handed over yet.",
    )


def register_gates() -> None:
    register(target=OrderStatus.CLOSED, name="warranty.servers_handed_over", check=order_servers_handed_over)
