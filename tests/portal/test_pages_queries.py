"""Each portal page runs the same number of queries for 10 rows as for 100 (orders, servers and events,
installed components and findings, tokens up to the cap)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.contenttypes.models import ContentType

from builds.choices import ConnectorKind
from builds.models import Connector, Installation
from inventory.models import Component
from orders.models import Order
from tests import factories
from werkbank.models import AuditEvent
from werkbank.services import api_token_create

pytestmark = pytest.mark.django_db

#: Queries per page: session, user, the customer-membership check, then the page's own reads.
#: The server page reads its last GPU change, to judge its burn-in runs (stale or counting).
QUERIES = {"orders": 7, "order": 10, "server": 15, "tokens": 4}


def _orders(tenants: Any, n: int) -> str:
    configuration = factories.ConfigurationFactory()
    for _ in range(n):
        order = factories.OrderFactory(customer=tenants.customer_a, configuration=configuration)
        factories.make_servers(order)
    return "/portal/"


def _events(order: Order, n: int) -> None:
    content_type = ContentType.objects.get_for_model(Order)
    AuditEvent.objects.bulk_create(
        AuditEvent(
            verb="order.submit" if index % 2 else "order.create",
            content_type=content_type,
            object_id=str(order.pk),
            object_repr=order.reference,
            before={"status": "draft"},
            after={"status": "roi_review"},
        )
        for index in range(n)
    )


def _order(tenants: Any, n: int) -> str:
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=n)
    factories.ROIAssessmentFactory(order=order)
    factories.make_servers(order)
    _events(order, n)
    return f"/portal/orders/{order.pk}/"


def _server(tenants: Any, n: int) -> str:
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in")
    po = factories.receive_stock(deliver_to=tenants.partner_p, lots={"L-Q": [f"Q-{n}-0"]})
    template = Component.objects.get(serial=f"Q-{n}-0")
    components = Component.objects.bulk_create(
        Component(
            part=template.part,
            manufacturer=template.manufacturer,
            serial=f"Q-{n}-{index + 1}",
            lot=template.lot,
            po_line=po.lines.get(),
            location="installed",
        )
        for index in range(n)
    )
    connectors = Connector.objects.bulk_create(
        Connector(server=server, name=f"DIMM-{index}", kind=ConnectorKind.DIMM_SLOT, position=index)
        for index in range(n)
    )
    Installation.objects.bulk_create(
        Installation(server=server, connector=connector, component=component, installed_by=tenants.user_p)
        for connector, component in zip(connectors, components, strict=True)
    )
    factories.make_burnin_run(
        server,
        findings=[
            {"code": "thermal_margin_low", "severity": "warn", "subject": f"GPU {i}", "message": "2 °C"}
            for i in range(n)
        ],
    )
    return f"/portal/servers/{server.pk}/"


def _tokens(tenants: Any, n: int) -> str:
    # The cap is 10 live tokens: one against ten.
    for _ in range(max(1, n // 10)):
        api_token_create(user=tenants.user_a, actor=tenants.user_a)
    return "/portal/tokens/"


BUILDERS = {"orders": _orders, "order": _order, "server": _server, "tokens": _tokens}


@pytest.mark.parametrize("page", sorted(BUILDERS))
@pytest.mark.parametrize("n", [10, 100])
def test_queries_per_page_do_not_grow_with_the_rows(client, tenants, django_assert_num_queries, page, n):
    url = BUILDERS[page](tenants, n)
    client.force_login(tenants.user_a)
    with django_assert_num_queries(QUERIES[page]):
        response = client.get(url)
    assert response.status_code == 200
