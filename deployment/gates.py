"""The deployment app's answer to "may this order move on?" (see `orders.gates`), registered in `ready()`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from builds.choices import status_in_sentence
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
            missing[order.pk] = [
                _("Order %(reference)s has no servers to hand over.") % {"reference": order.reference}
            ]
            continue
        missing[order.pk] = named_at_most(
            [
                _("Server %(hostname)s is %(status)s; it must be deployed first.")
                % {"hostname": hostname, "status": status_in_sentence(status)}
                for hostname, status in servers
                if status not in DEPLOYED_OR_LATER
            ],
            more=lambda count: (
                ngettext(
                    "%(count)d more server is not deployed yet.",
                    "%(count)d more servers are not deployed yet.",
                    count,
                )
                % {"count": count}
            ),
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
