"""The warranty app's answer to "may this order move on?" (see `orders.gates`), registered in `ready()`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from builds.choices import ServerStatus, status_in_sentence
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
                _("Server %(hostname)s is %(status)s; it must be handed over first.")
                % {"hostname": hostname, "status": status_in_sentence(status)}
                for hostname, status in by_order[order.pk]
                if status != ServerStatus.HANDED_OVER
            ],
            more=lambda count: (
                ngettext(
                    "%(count)d more server is not handed over yet.",
                    "%(count)d more servers are not handed over yet.",
                    count,
                )
                % {"count": count}
            ),
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
