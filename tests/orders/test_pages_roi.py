"""The PM page of an order's ROI: the cash-flow SVG next to the gate's figures."""

from __future__ import annotations

import pytest

from orders.choices import OrderStatus
from tests import factories

pytestmark = pytest.mark.django_db


def test_pm_sees_the_cash_flow_with_the_break_even_month(client, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    from orders.services import roi_assess

    roi_assess(
        order=order,
        actor=tenants.pm,
        capex=50000,
        gpu_count=8,
        price_per_gpu_hour=1,
        utilization=0.6,
        power_active_kw=6.3,
        power_idle_kw=1.2,
        energy_price_kwh=0.15,
        pue=1.3,
        colo_month=600,
        horizon_months=36,
    )
    client.force_login(tenants.pm)
    page = client.get(f"/pm/orders/{order.pk}/roi/").content.decode()
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in page
    assert 'class="cashflow" points="84.0,' in page
    # 50,000 / 2,297.59 per month = 21.8 months: cumulative cash turns positive in month 22.
    assert "break-even month 22" in page
    assert "month (H = 730 h)" in page
    assert "ROI ✓" in page
    assert f'href="/pm/orders/{order.pk}/" id="order-page-link"' in page  # back to the order page


def test_no_break_even_is_said_plainly(client, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a)
    factories.ROIAssessmentFactory(
        order=order, utilization="0.0500", payback_months=None, net_month="-500.00"
    )
    client.force_login(tenants.pm)
    page = client.get(f"/pm/orders/{order.pk}/roi/").content.decode()
    assert "no break-even within 36 months" in page


@pytest.mark.parametrize("who", ["user_a", "user_b", "user_p", "outsider"])
def test_only_pms_open_the_page(client, tenants, who):
    order = factories.OrderFactory(customer=tenants.customer_a)
    client.force_login(getattr(tenants, who))
    assert client.get(f"/pm/orders/{order.pk}/roi/").status_code == 404


def test_anonymous_is_sent_to_log_in(client, tenants):
    order = factories.OrderFactory(customer=tenants.customer_a)
    response = client.get(f"/pm/orders/{order.pk}/roi/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_the_power_budget_compares_the_dc_load_and_shows_the_wall_power_apart(client, tenants):
    # The factory's server: 8 × 575 W = 4600 W DC on 5× 1600 W N+1, 6400 × 0.9 = 5760 W: 1160 W (20.1 %)
    # to spare. Only the wall power is divided by the efficiency: 4600 / 0.94 = 4894 W.
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    client.force_login(tenants.pm)
    page = client.get(f"/pm/orders/{order.pk}/roi/").content.decode()
    assert "<th>PSU load (DC, sum of TDP)</th><td>4600 W</td>" in page
    assert "<td>5760 W; margin 1160 W (20.1 %)</td>" in page
    assert "<th>Wall power (AC)</th><td>4894 W = DC load ÷ efficiency 0.94</td>" in page
