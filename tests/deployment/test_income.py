"""Earnings on a rental platform (`deployment.services.earnings`): one row per server, platform and month,
refused where the input or the server does not fit, updated in place and audited only when it changes."""

from __future__ import annotations

import datetime
from decimal import Decimal

import pytest
from django.utils import timezone

from deployment.models import PlatformEarning
from deployment.services import earning_record, listing_record
from tests import factories
from tests.deployment import svc_rig as rig
from werkbank.errors import InvalidInput, RuleViolation

pytestmark = pytest.mark.django_db


@pytest.fixture
def pm():
    return factories.make_pm(username="income-pm")


def _listed(pm, **kwargs):
    server = rig.server(status="deployed", **kwargs)
    listing_record(server=server, actor=pm, platform="vast_ai", machine_id=f"m-{server.pk}")
    return server


def _last_month() -> datetime.date:
    return (timezone.localdate().replace(day=1) - datetime.timedelta(days=1)).replace(day=1)


def test_an_earning_is_recorded_updated_and_an_unchanged_one_skipped(pm):
    server = _listed(pm)
    month = _last_month()

    first = earning_record(
        server=server,
        platform="vast_ai",
        month=month.replace(day=17),
        amount=Decimal("3005.264"),
        gpu_hours="3620.84",
        actor=pm,
    )
    assert (first.month, first.amount, first.gpu_hours, first.currency, first.source) == (
        month,
        Decimal("3005.26"),
        Decimal("3620.8"),
        "EUR",
        "manual",
    )
    again = earning_record(
        server=server,
        platform="vast_ai",
        month=month,
        amount="3005.26",
        gpu_hours=Decimal("3620.8"),
        actor=pm,
    )
    assert again.pk == first.pk
    assert len(rig.events(server, "deployment.earning")) == 1

    changed = earning_record(
        server=server, platform="vast_ai", month=month, amount=Decimal("3100"), source="poll", actor=None
    )
    assert changed.pk == first.pk
    assert PlatformEarning.objects.filter(server=server).count() == 1
    changed.refresh_from_db()
    assert (changed.amount, changed.gpu_hours, changed.source) == (Decimal("3100.00"), None, "poll")
    events = rig.events(server, "deployment.earning")
    assert len(events) == 2
    assert events[0].before == {}
    assert events[0].after["amount"] == "3005.26"
    assert events[1].before["amount"] == "3005.26"
    assert events[1].after["amount"] == "3100.00"
    assert events[1].after["month"] == f"{month:%Y-%m}"


@pytest.mark.parametrize(
    ("field", "values"),
    [
        ("amount", {"amount": Decimal("-1")}),
        ("amount", {"amount": Decimal("NaN")}),
        ("amount", {"amount": float("inf")}),
        ("amount", {"amount": "lots"}),
        ("gpu_hours", {"gpu_hours": "-3"}),
        ("currency", {"currency": "euro"}),
        ("currency", {"currency": "E1"}),
        ("platform", {"platform": "none"}),
        ("platform", {"platform": "runpod"}),
        ("source", {"source": "guess"}),
        ("month", {"month": "2025-01"}),
    ],
)
def test_bad_input_is_refused_naming_the_field(pm, field, values):
    server = _listed(pm)
    arguments = {"platform": "vast_ai", "month": _last_month(), "amount": Decimal("10"), **values}
    with pytest.raises(InvalidInput) as caught:
        earning_record(server=server, actor=pm, **arguments)
    assert caught.value.field == field
    assert not PlatformEarning.objects.exists()


def test_a_month_in_the_future_is_refused_and_this_month_accepted(pm):
    server = _listed(pm)
    this_month = timezone.localdate().replace(day=1)
    next_month = (this_month + datetime.timedelta(days=32)).replace(day=1)
    with pytest.raises(InvalidInput) as caught:
        earning_record(server=server, platform="vast_ai", month=next_month, amount=Decimal("1"), actor=pm)
    assert caught.value.field == "month"
    assert "future" in caught.value.field_message
    earning = earning_record(
        server=server, platform="vast_ai", month=timezone.localdate(), amount=Decimal("1"), actor=pm
    )
    assert earning.month == this_month


def test_a_server_never_deployed_or_never_listed_there_earns_nothing(pm):
    planned = rig.server(status="burn_in_passed")
    with pytest.raises(RuleViolation) as caught:
        earning_record(server=planned, platform="vast_ai", month=_last_month(), amount=Decimal("1"), actor=pm)
    assert caught.value.code == "not_deployed"

    unlisted = rig.server(status="deployed")
    with pytest.raises(RuleViolation) as caught:
        earning_record(
            server=unlisted, platform="vast_ai", month=_last_month(), amount=Decimal("1"), actor=pm
        )
    assert caught.value.code == "not_listed"
    assert "Vast.ai" in caught.value.message

    elsewhere = _listed(pm)
    with pytest.raises(RuleViolation) as caught:
        earning_record(server=elsewhere, platform="other", month=_last_month(), amount=Decimal("1"), actor=pm)
    assert caught.value.code == "not_listed"
    assert not PlatformEarning.objects.exists()


# --- the selector: income against the forecast, and the payback re-estimated through the ROI formulas ----

#: The demo fleet's ROI inputs (orders/demo.py): 8 GPUs at 0.85 per GPU-hour and 70 %, one server's capex.
ROI = {
    "capex": "42000",
    "gpu_count": 8,
    "price_per_gpu_hour": "0.85",
    "utilization": "0.70",
    "platform_fee": "0",
    "power_active_kw": "5.8",
    "power_idle_kw": "0.9",
    "energy_price_kwh": "0.15",
    "pue": "1.3",
    "colo_month": "600",
    "horizon_months": 36,
    "discount_rate_annual": "0.10",
    "residual_value": "8000",
}
#: Three months of one server: rented GPU hours and the payout.
THREE_MONTHS = [("3620.8", "3005.26"), ("4146.4", "3482.98"), ("4321.6", "3673.36")]


def _months_back(count: int) -> datetime.date:
    month = timezone.localdate().replace(day=1)
    for _ in range(count):
        month = (month - datetime.timedelta(days=1)).replace(day=1)
    return month


def _fleet(pm, count: int = 1, **kwargs):
    from orders.services import roi_assess

    servers = rig.servers(count, status="deployed", **kwargs)
    roi_assess(order=servers[0].order, actor=pm, **ROI)
    for server in servers:
        listing_record(server=server, actor=pm, platform="vast_ai", machine_id=f"m-{server.pk}")
    return servers


def _record_three(pm, server):
    for back, (hours, amount) in zip((3, 2, 1), THREE_MONTHS, strict=True):
        earning_record(
            server=server,
            platform="vast_ai",
            month=_months_back(back),
            amount=Decimal(amount),
            gpu_hours=Decimal(hours),
            actor=pm,
        )


def _payback_by_hand(mean: float, utilization: float) -> float:
    """capex / net, with net = R − (U·P_act + (1−U)·P_idle)·H·PUE·c − colo (reference §4), written out."""
    energy = (utilization * 5.8 + (1 - utilization) * 0.9) * 730 * 1.3 * 0.15
    return 42000 / (mean - energy - 600)


def test_one_server_three_months_against_its_forecast_and_the_payback_by_hand(pm):
    from deployment.income import server_income

    [server] = _fleet(pm)
    _record_three(pm, server)
    income = server_income(server=server)

    assert income.problem == ""
    assert [m.month for m in income.months] == [_months_back(3), _months_back(2), _months_back(1)]
    assert [m.actual for m in income.months] == [Decimal(a) for _, a in THREE_MONTHS]
    # The forecast per server and month: N × H × U × P = 8 × 730 × 0.70 × 0.85.
    assert [m.forecast for m in income.months] == [Decimal("3474.80")] * 3
    assert income.months[0].difference == Decimal("-469.54")
    assert income.total_actual == Decimal("10161.60")
    assert income.total_forecast == Decimal("10424.40")
    assert income.ratio == pytest.approx(10161.60 / 10424.40)
    assert income.mean_actual == Decimal("3387.20")
    # 12,088.8 rented GPU hours of 8 × 730 × 3 = 17,520: 69 %, at 3,387.20 / (8 × 730 × 0.69) per GPU-hour.
    assert income.utilization_from_hours
    assert income.observed_utilization == pytest.approx(0.69)
    assert income.observed_price == pytest.approx(3387.20 / (8 * 730 * 0.69))
    by_hand = _payback_by_hand(3387.20, 0.69)
    assert by_hand == pytest.approx(19.2856, abs=1e-4)
    assert income.payback_months == pytest.approx(by_hand)
    assert income.start == _months_back(3)
    assert income.payback_date == _months_back(3) + datetime.timedelta(days=round(by_hand * 730 / 24))
    assert income.forecast_payback_date == _months_back(3) + datetime.timedelta(
        days=round(float(income.assessment.payback_months) * 730 / 24)
    )
    assert income.estimate is not None and income.estimate.breakeven_month == 20


def test_an_order_sums_its_servers_and_counts_only_servers_in_service(pm):
    from deployment.income import order_income
    from werkbank.models import AuditEvent

    first, second = _fleet(pm, 2)
    _record_three(pm, first)
    # The second server was deployed two months back and has one month on record, without its hours.
    earning_record(server=second, platform="vast_ai", month=_months_back(1), amount=Decimal("3000"), actor=pm)
    deployed = AuditEvent.objects.create(
        verb="deployment.deploy",
        content_type_id=rig.events(second, "deployment.earning")[0].content_type_id,
        object_id=str(second.pk),
        object_repr=second.hostname,
    )
    at = timezone.make_aware(datetime.datetime.combine(_months_back(2).replace(day=10), datetime.time(12)))
    AuditEvent.objects.filter(pk=deployed.pk).update(created_at=at)

    income = order_income(order=first.order)

    assert [(m.in_service, m.recorded) for m in income.months] == [(1, 1), (2, 1), (2, 2)]
    assert [m.forecast for m in income.months] == [Decimal("3474.80"), Decimal("6949.60"), Decimal("6949.60")]
    assert income.months[-1].actual == Decimal("6673.36")
    assert income.months[-1].gpu_hours is None  # one of the two has no hours
    assert income.months_missing == 1  # the second server's first month in service
    assert income.server_months == 4
    assert income.total_forecast == Decimal("3474.80") * 4
    # Without every month's hours the utilisation is the one at which 0.85 per GPU-hour earns the mean.
    mean = (10161.60 + 3000) / 4
    assert not income.utilization_from_hours
    assert income.observed_utilization == pytest.approx(mean / (8 * 730 * 0.85))
    assert income.observed_price == pytest.approx(0.85)
    assert income.payback_months == pytest.approx(_payback_by_hand(mean, mean / (8 * 730 * 0.85)))
    assert [(line.hostname, line.months_recorded, line.actual) for line in income.servers] == [
        (first.hostname, 3, Decimal("10161.60")),
        (second.hostname, 1, Decimal("3000.00")),
    ]
    assert income.servers[1].start == _months_back(2)


def test_no_earnings_a_month_in_progress_and_a_currency_mismatch(pm):
    from deployment.income import CURRENCY_MISMATCH, NO_EARNINGS, order_income, server_income

    [server] = _fleet(pm)
    assert order_income(order=server.order).problem == NO_EARNINGS
    assert server_income(server=server).problem == NO_EARNINGS

    earning_record(
        server=server, platform="vast_ai", month=timezone.localdate(), amount=Decimal("900"), actor=pm
    )
    income = server_income(server=server)
    [month] = income.months
    assert month.in_progress and month.actual == Decimal("900.00")
    assert income.server_months == 0 and income.payback_months is None and income.estimate is None

    earning_record(
        server=server,
        platform="vast_ai",
        month=_months_back(1),
        amount=Decimal("3600"),
        currency="USD",
        actor=pm,
    )
    income = server_income(server=server)
    assert income.problem == CURRENCY_MISMATCH
    assert income.currencies == ("EUR", "USD")
    assert income.months == [] and income.payback_months is None


def test_earnings_paid_in_usd_are_compared_at_the_operators_rate(pm, settings):
    """Vast.ai pays out in USD; with a rate in WERKBANK_EXCHANGE_RATES they are compared with the EUR
    forecast (converted copies: the stored row keeps its USD), and the rate is named."""
    from deployment.income import CURRENCY_MISMATCH, server_income
    from deployment.income_view import income_values

    [server] = _fleet(pm)
    stored = earning_record(
        server=server,
        platform="vast_ai",
        month=_months_back(1),
        amount=Decimal("4000"),
        currency="USD",
        source="poll",
        actor=pm,
    )
    settings.WERKBANK_EXCHANGE_RATES = {}
    assert server_income(server=server).problem == CURRENCY_MISMATCH

    settings.WERKBANK_EXCHANGE_RATES = {"USD/EUR": Decimal("0.86")}
    income = server_income(server=server)
    assert income.problem == "" and income.currency == "EUR"
    assert income.converted == {"USD": Decimal("0.86")}
    assert income.total_actual == Decimal("3440.00") and income.server_months == 1
    assert income.payback_months is not None
    assert income_values(income)["converted"] == [("USD", Decimal("0.86"))]
    stored.refresh_from_db()
    assert (stored.amount, stored.currency) == (Decimal("4000.00"), "USD")


def test_the_chart_draws_a_bar_per_recorded_month_and_the_forecast_line(pm):
    from deployment.income import server_income
    from deployment.income_chart import income_svg

    [server] = _fleet(pm)
    _record_three(pm, server)
    income = server_income(server=server)
    svg = income_svg(months=income.months, currency="EUR")
    assert svg.startswith("<svg") and svg.count('class="actual"') == 3
    assert svg.count('<polyline class="forecast"') == 1
    assert "forecast (ROI assessment)" in svg
