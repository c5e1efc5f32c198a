"""The order page's income section (issue #28 item 6): the deployment app's income against the forecast."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from builds.choices import DEPLOYED_OR_LATER
from deployment.income import order_income
from deployment.income_view import income_values
from orders.models import Order, ROIAssessment


def income_context(
    order: Order, *, assessment: ROIAssessment | None, servers: Iterable[Any]
) -> dict[str, Any] | None:
    """The section's values once a server of the order is deployed (read from the page's server list, so an
    order before deployment costs no query); None before."""
    if not any(server.status in DEPLOYED_OR_LATER for server in servers):
        return None
    return income_values(order_income(order=order, assessment=assessment))
