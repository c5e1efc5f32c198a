"""The burn-in app's answer to "may this order move on?" (see `orders.gates`), registered in `ready()`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from builds.choices import ServerStatus, status_in_sentence
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
            missing[order.pk] = [
                _("Order %(reference)s has no servers to deploy.") % {"reference": order.reference}
            ]
            continue
        missing[order.pk] = named_at_most(
            [
                _("Server %(hostname)s is %(status)s; it must pass burn-in first.")
                % {"hostname": hostname, "status": status_in_sentence(status)}
                for hostname, status in servers
                if status not in PASSED_BURN_IN
            ],
            more=lambda count: (
                ngettext(
                    "%(count)d more server has not passed burn-in yet.",
                    "%(count)d more servers have not passed burn-in yet.",
                    count,
                )
                % {"count": count}
            ),
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
