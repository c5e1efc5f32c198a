"""The admin lists link related records, search by the related reference, and show progress (issue #14,
item 5): a PO finds its order, a component its server and lot, an order how many of its servers are built."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.urls import reverse

from builds.choices import AT_LEAST_ASSEMBLED
from builds.models import Allocation, Server
from inventory.models import BatchLot, PurchaseOrder
from orders.models import Order
from werkbank.demo_context import DEMO_PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def pm_client(client: Any) -> Any:
    call_command("seed_demo", verbosity=0)
    assert client.login(username="pm", password=DEMO_PASSWORD)
    return client


def _results(response: Any) -> list[Any]:
    assert response.status_code == 200
    return list(response.context["cl"].result_list)


def _change(obj: Any) -> str:
    return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])


def test_lists_link_search_and_show_progress(pm_client):
    # Purchase orders, searched by the order they serve; each row links its order and counts its lines.
    order = Order.objects.filter(purchase_order_links__isnull=False).order_by("reference").first()
    served = set(PurchaseOrder.objects.filter(order_link__order=order))
    assert served and served != set(PurchaseOrder.objects.all())
    response = pm_client.get(reverse("admin:inventory_purchaseorder_changelist"), {"q": order.reference})
    assert set(_results(response)) == served
    html = response.content.decode()
    assert f'<a href="{_change(order)}">{order.reference}</a>' in html
    po = next(iter(served))
    assert f"{po.lines.count()} / {po.lines.count()} lines received" in html  # the demo's POs are received

    # Orders: servers built out of all, as a bar and words.
    fleet = Order.objects.get(server_count=8)
    built = fleet.servers.filter(status__in=sorted(AT_LEAST_ASSEMBLED)).count()
    html = pm_client.get(reverse("admin:orders_order_changelist")).content.decode()
    assert f'<progress value="{built}" max="8"></progress> {built} / 8 assembled' in html
    assert 'class="badge badge-' in html and 'data-status="assembly"' in html

    # Components, searched by the hostname and the asset tag of the server they are allocated to.
    allocation = Allocation.objects.filter(released_at__isnull=True).select_related("server").first()
    server = allocation.server
    on_server = set(
        Allocation.objects.filter(server=server).values_list("component_id", flat=True).distinct()
    )
    for term in filter(None, (server.hostname, server.asset_tag)):
        response = pm_client.get(reverse("admin:inventory_component_changelist"), {"q": term})
        assert {component.pk for component in _results(response)} == on_server, term
    html = response.content.decode()
    assert f'<a href="{_change(server)}">{server.hostname}</a>' in html
    assert f'<a href="{_change(allocation.component.lot)}">{allocation.component.lot.lot_code}</a>' in html

    # A component's page links its server; a server's page links its order; an order's page its POs.
    page = pm_client.get(_change(allocation.component)).content.decode()
    assert f'<a href="{_change(server)}">{server.hostname}</a>' in page
    page = pm_client.get(_change(server)).content.decode()
    assert f'<a href="{_change(server.order)}">{server.order.reference}</a>' in page
    page = pm_client.get(_change(order)).content.decode()
    assert all(f'<a href="{_change(po)}">{po.number}</a>' in page for po in served)
    assert any(f'<a href="{_change(s)}">{s.hostname}</a>' in page for s in Server.objects.filter(order=order))

    # Lots: the supplier (linked, with its country) and the origin, searchable by the supplier's name.
    lot = BatchLot.objects.select_related("supplier").first()
    response = pm_client.get(reverse("admin:inventory_batchlot_changelist"), {"q": lot.supplier.name})
    assert lot in _results(response)
    html = response.content.decode()
    assert f'<a href="{_change(lot.supplier)}">' in html and f"({lot.supplier.country})" in html
