"""The builds app's answers to "may this order move on?" (see `orders.gates`), registered in `ready()`.

Each check has a bulk form for many orders (one query for all of them); the single check asks the bulk
one about one order, so the transition service and the PM's pipeline say the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from builds.choices import AT_LEAST_ASSEMBLED, status_in_sentence
from builds.models import Server
from orders.choices import OrderStatus
from orders.gates import named_at_most, register


def order_servers(orders: Sequence[Any]) -> dict[int, list[tuple[str, str]]]:
    """(hostname, status) of each order's servers in their sequence, for many orders in one query."""
    servers: dict[int, list[tuple[str, str]]] = {order.pk: [] for order in orders}
    rows = (
        Server.objects.filter(order_id__in=list(servers))
        .order_by("order_id", "sequence")
        .values_list("order_id", "hostname", "status")
    )
    for order_id, hostname, status in rows:
        servers[order_id].append((hostname, status))
    return servers


def orders_have_servers(orders: Sequence[Any]) -> dict[int, list[str]]:
    """No assembly for an order without servers (they are created when the order goes to procurement)."""
    with_servers = set(
        Server.objects.filter(order_id__in=[order.pk for order in orders])
        .order_by()
        .values_list("order_id", flat=True)
        .distinct()
    )
    return {
        order.pk: []
        if order.pk in with_servers
        else [_("Order %(reference)s has no servers to assemble.") % {"reference": order.reference}]
        for order in orders
    }


def order_has_servers(order: Any) -> list[str]:
    return orders_have_servers([order])[order.pk]


def orders_servers_assembled(orders: Sequence[Any]) -> dict[int, list[str]]:
    """No burn-in until every server of the order is at least assembled."""
    missing: dict[int, list[str]] = {}
    by_order = order_servers(orders)
    for order in orders:
        servers = by_order[order.pk]
        if not servers:
            missing[order.pk] = [
                _("Order %(reference)s has no servers to burn in.") % {"reference": order.reference}
            ]
            continue
        missing[order.pk] = named_at_most(
            [
                _("Server %(hostname)s is %(status)s; it must be assembled first.")
                % {"hostname": hostname, "status": status_in_sentence(status)}
                for hostname, status in servers
                if status not in AT_LEAST_ASSEMBLED
            ],
            more=lambda count: (
                ngettext(
                    "%(count)d more server is not assembled yet.",
                    "%(count)d more servers are not assembled yet.",
                    count,
                )
                % {"count": count}
            ),
        )
    return missing


def order_servers_assembled(order: Any) -> list[str]:
    return orders_servers_assembled([order])[order.pk]


def register_gates() -> None:
    register(
        target=OrderStatus.ASSEMBLY,
        name="builds.order_has_servers",
        check=order_has_servers,
        check_many=orders_have_servers,
    )
    register(
        target=OrderStatus.BURN_IN,
        name="builds.servers_assembled",
        check=order_servers_assembled,
        check_many=orders_servers_assembled,
    )
