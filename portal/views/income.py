"""The portal order page's income section (issue #28 item 6): the customer's own earnings against the
forecast of its business case, as PAGE_FIELDS rows (portal/customer.py)."""

from __future__ import annotations

from typing import Any

from deployment.income import order_income
from deployment.income_view import income_values
from orders.choices import OrderStatus
from orders.models import Order
from portal.customer import row

#: Order statuses in which the order has servers that may be in service (the order moves on only when
#: all its servers have, so its first server may earn while the order is still in procurement).
WITH_SERVERS = frozenset(
    {
        OrderStatus.PROCUREMENT,
        OrderStatus.ASSEMBLY,
        OrderStatus.BURN_IN,
        OrderStatus.DEPLOYMENT,
        OrderStatus.HANDED_OVER,
        OrderStatus.CLOSED,
    }
)


def income_row(order: Order) -> dict[str, Any] | None:
    """The income section of one of the customer's orders (the caller checked that the user sees it);
    None before the order has servers, so an order in review costs no query."""
    if order.status not in WITH_SERVERS:
        return None
    values = income_values(order_income(order=order))
    values["months"] = [row("order.income_month", **month) for month in values["months"]]
    values["servers"] = [row("order.income_server", **line) for line in values["servers"]]
    return row("order.income", **values)
