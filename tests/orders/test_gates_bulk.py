"""The gates' bulk form answers as the per-order checks do, on a mixed set of orders, in a fixed number of
queries (the PM's pipeline shows what blocks a hundred orders with it)."""

from __future__ import annotations

from typing import Any

import pytest

from builds.models import Server
from orders import gates
from orders.choices import OrderStatus
from orders.models import Order
from orders.selectors import transition_checks, transition_checks_many
from tests import factories

pytestmark = pytest.mark.django_db


def _mixed_orders() -> list[Order]:
    """Orders in every open status, with no servers, some servers behind and all servers through."""
    orders = []
    for status, server_statuses in [
        (OrderStatus.DRAFT, []),
        (OrderStatus.ROI_REVIEW, []),
        (OrderStatus.APPROVED, []),
        (OrderStatus.PROCUREMENT, []),
        (OrderStatus.PROCUREMENT, ["planned"]),
        (OrderStatus.ASSEMBLY, ["assembled", "assembling"]),
        (OrderStatus.ASSEMBLY, ["assembled", "burn_in"]),
        (OrderStatus.BURN_IN, ["burn_in_passed", "burn_in_failed"]),
        (OrderStatus.BURN_IN, ["burn_in_passed", "deployed"]),
        (OrderStatus.DEPLOYMENT, ["deployed", "burn_in_passed"]),
        (OrderStatus.DEPLOYMENT, []),
        (OrderStatus.HANDED_OVER, ["handed_over", "deployed"]),
        (OrderStatus.HANDED_OVER, ["handed_over", "handed_over"]),
    ]:
        order = factories.OrderFactory(status=status, server_count=max(len(server_statuses), 1))
        if server_statuses:
            servers = factories.make_servers(order)
            for server, server_status in zip(servers, server_statuses, strict=True):
                Server.objects.filter(pk=server.pk).update(status=server_status)
        orders.append(order)
    # One order in ROI review whose gate holds (a paying ROI), one whose configuration lacks its chassis,
    # and one whose part has no list price.
    factories.pass_gate(factories.OrderFactory(status=OrderStatus.ROI_REVIEW))
    gpu_only = factories.ConfigurationFactory(lines=[(factories.PartFactory(), 8)])
    factories.OrderFactory(status=OrderStatus.DRAFT, configuration=gpu_only)
    factories.OrderFactory(
        status=OrderStatus.APPROVED,
        configuration=factories.ConfigurationFactory(lines=[(factories.PartFactory(list_price=None), 8)]),
    )
    return list(Order.objects.order_by("pk"))


def test_every_gate_answers_in_bulk_as_it_does_for_one_order():
    orders = _mixed_orders()
    targets = {gate.target for target in OrderStatus.values for gate in gates.gates_for(target)}
    assert len(targets) == 5  # assembly, burn-in, deployment, handed over, closed
    for target in targets:
        bulk = gates.missing_for_many(orders=orders, target=target)
        assert bulk == {order.pk: gates.missing_for(order=order, target=target) for order in orders}, target
    # The mixed set is mixed: some orders are blocked, some are not, by the same gate.
    burn_in = gates.missing_for_many(orders=orders, target=OrderStatus.BURN_IN)
    assert any(burn_in.values()) and not all(burn_in.values())


def test_transition_checks_in_bulk_equal_the_checks_of_each_order():
    orders = _mixed_orders()
    bulk = transition_checks_many(orders=list(Order.objects.order_by("pk")))
    single = {order.pk: transition_checks(order=Order.objects.get(pk=order.pk)) for order in orders}
    assert bulk == single
    readiness = {check.ready for checks in bulk.values() for check in checks}
    assert readiness == {True, False}


def _orders_in_review(n: int) -> list[Any]:
    configuration = factories.ConfigurationFactory()
    return [
        factories.OrderFactory(status=status, configuration=configuration)
        for index in range(n)
        for status in [list(OrderStatus)[index % 9]]
    ]


@pytest.mark.parametrize("n", [10, 100])
def test_transition_checks_in_bulk_cost_the_same_queries_for_10_and_100_orders(django_assert_num_queries, n):
    _orders_in_review(n)
    orders = list(Order.objects.order_by("pk"))
    # configurations, their lines, parts, ROI versions, workloads; then one query per gate asked.
    with django_assert_num_queries(11):  # +1: the handover's warranty gate (issue #24)
        checks = transition_checks_many(orders=orders)
    assert len(checks) == n
