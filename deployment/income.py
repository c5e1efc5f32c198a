"""Income against the forecast (issue #28 item 6): a server's (or an order's) earnings on its rental platform,
month by month, against the ROI assessment that approved the order, and the payback re-estimated from them.

What is compared
    The ROI assessment is per server (`orders.formulas.roi`: "ROI of one server over its horizon"; the
    capex is one server's), so the forecast of one server for one month is the assessment's
    `revenue_month` = N × H × U × P × (1 − f), with H = 730 h. The assessment is the one that counts for
    the order (`orders.selectors.latest_assessment`, the highest version: the one the approval gate read,
    unless the order was re-assessed since). An order's forecast for a month is that figure times the
    servers in service in that month. A platform's earnings are its payout after its fee, which is what
    `revenue_month` is once `platform_fee` is set.

Which months
    A server is in service from its deployment month (the `deployment.deploy` audit row) or from its first
    recorded month, whichever is earlier. The series runs from the first month any server is in service to
    the last complete month; a record for the current month is shown as "in progress" and left out of the
    figures. A complete month with no record for a server is shown as not recorded, and it too is left
    out (the platform may not have been read for it); the page says how many there are.

How the payback is re-estimated (the ROI formulas, not a second copy)
    Over the recorded complete months of all the servers (n server-months): the mean payout per server
    and month R = Σ amount / n, and the observed utilisation U = Σ rented GPU hours / (N × H × n) where
    every recorded month has its GPU hours, else the U at which the assessment's price earns R
    (R / (N × H × P × (1 − f))); U is at most 1. The price per GPU-hour is then the one at which U earns R
    (P = R / (N × H × U × (1 − f))), so the formulas' revenue is exactly the observed mean. Those two replace
    the assessment's utilisation and price; every other input (capex, power at load and idle, energy price,
    PUE, colocation, horizon, discount rate, residual value) stays, and `orders.formulas.roi` computes the
    energy, the net per month and the payback months = capex / net. The payback date is the first month
    in service plus that many months of 730 h.

Currencies
    Earnings in another currency than the assessment's (Vast.ai pays out in USD) are converted at the
    operator's rate in `WERKBANK_EXCHANGE_RATES` ("USD/EUR" → 1 USD in EUR), and the page names the rate.
    Where a currency has no rate, nothing is mixed: no comparison is made, and the reason is given.
"""

from __future__ import annotations

import copy
import datetime
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from django.conf import settings
from django.db.models import Min
from django.utils import timezone

from builds.models import Server
from deployment.choices import DEPLOYED_OR_LATER
from deployment.models import PlatformEarning
from orders import formulas
from orders.models import ROI_STORED_INPUTS, Order, ROIAssessment
from orders.selectors import latest_assessment
from orders.services.roi import roi_inputs
from werkbank.errors import InvalidInput
from werkbank.models import AuditEvent

#: Days of one month of H = 730 hours (`orders.formulas.HOURS_PER_MONTH`), for the payback date.
DAYS_PER_MONTH = formulas.HOURS_PER_MONTH / 24

NO_EARNINGS = "no_earnings"
NO_ASSESSMENT = "no_assessment"
CURRENCY_MISMATCH = "currency_mismatch"


@dataclass(frozen=True)
class IncomeMonth:
    """One month: what the servers earned (None: nothing recorded) against the forecast of the servers in
    service then. `recorded` and `in_service` count servers; `in_progress` marks the current month."""

    month: datetime.date
    actual: Decimal | None
    forecast: Decimal | None
    gpu_hours: Decimal | None
    recorded: int
    in_service: int
    in_progress: bool = False

    @property
    def difference(self) -> Decimal | None:
        if self.actual is None or self.forecast is None:
            return None
        return self.actual - self.forecast


@dataclass(frozen=True)
class ServerIncome:
    """One server's line of an order's income: its recorded complete months and their sums."""

    server_id: int
    hostname: str
    start: datetime.date | None
    months_recorded: int
    actual: Decimal
    forecast: Decimal | None


@dataclass
class Income:
    """The income of a server or an order against its forecast, and the payback re-estimated from it."""

    currency: str
    assessment: ROIAssessment | None
    months: list[IncomeMonth] = field(default_factory=list)
    servers: list[ServerIncome] = field(default_factory=list)
    #: Why no comparison is made: NO_EARNINGS, NO_ASSESSMENT or CURRENCY_MISMATCH ("" when it is made).
    problem: str = ""
    currencies: tuple[str, ...] = ()
    #: The rates the earnings were converted at, {"USD": Decimal("0.86")} (1 USD in `currency`).
    converted: dict[str, Decimal] = field(default_factory=dict)
    start: datetime.date | None = None
    server_months: int = 0
    months_missing: int = 0
    total_actual: Decimal = Decimal("0.00")
    total_forecast: Decimal | None = None
    mean_actual: Decimal | None = None
    observed_utilization: float | None = None
    observed_price: float | None = None
    utilization_from_hours: bool = False
    estimate: formulas.ROIResult | None = None
    estimate_error: str = ""
    payback_months: float | None = None
    payback_date: datetime.date | None = None
    forecast_payback_date: datetime.date | None = None

    @property
    def ratio(self) -> float | None:
        """Actual over forecast of the recorded complete months (1.0 = on forecast)."""
        if not self.total_forecast:
            return None
        return float(self.total_actual / self.total_forecast)

    @property
    def pays_back(self) -> bool:
        return self.payback_months is not None


def _first(day: datetime.date) -> datetime.date:
    return day.replace(day=1)


def _next_month(day: datetime.date) -> datetime.date:
    return datetime.date(day.year + day.month // 12, day.month % 12 + 1, 1)


def _month_range(start: datetime.date, end: datetime.date) -> list[datetime.date]:
    months, month = [], start
    while month <= end:
        months.append(month)
        month = _next_month(month)
    return months


def payback_date(start: datetime.date, months: float | None) -> datetime.date | None:
    """The day `months` months of H = 730 h after the first day of `start`; None for never."""
    if months is None or not math.isfinite(months) or months > 1200:
        return None
    return start + datetime.timedelta(days=round(months * DAYS_PER_MONTH))


def _deploy_months(server_ids: Sequence[int]) -> dict[int, datetime.date]:
    """Each server's deployment month, from its first `deployment.deploy` audit row (one query)."""
    rows = (
        AuditEvent.objects.filter(
            verb="deployment.deploy",
            content_type__app_label="builds",
            content_type__model="server",
            object_id__in=[str(pk) for pk in server_ids],
        )
        .values("object_id")
        .annotate(first=Min("created_at"))
    )
    return {int(row["object_id"]): _first(timezone.localdate(row["first"])) for row in rows}


def _estimate(
    assessment: ROIAssessment, *, mean: Decimal, hours: Decimal | None, server_months: int
) -> tuple[formulas.ROIResult | None, float, float, str]:
    """The ROI formulas fed the observed utilisation and price (module docstring): (result, U, P, error)."""
    gpus = assessment.gpu_count
    fee = float(assessment.platform_fee)
    full_month = gpus * formulas.HOURS_PER_MONTH * (1 - fee)
    price = float(assessment.price_per_gpu_hour)
    if hours is not None:
        utilization = float(hours) / (gpus * formulas.HOURS_PER_MONTH * server_months)
    else:
        utilization = float(mean) / (full_month * price) if price > 0 else 1.0
    if hours is not None and utilization <= 0 < mean:  # paid without rented hours: judge by the payout
        utilization = float(mean) / (full_month * price) if price > 0 else 1.0
    utilization = min(max(utilization, 0.0), 1.0)
    if utilization > 0:
        price = float(mean) / (full_month * utilization)
    values: dict[str, Any] = {name: getattr(assessment, name) for name in ROI_STORED_INPUTS}
    values.update(utilization=utilization, price_per_gpu_hour=price)
    try:
        result = formulas.roi(roi_inputs(**values))
    except InvalidInput as error:  # e.g. a payout that implies a price above the formulas' bound
        return None, utilization, price, error.message
    return result, utilization, price, ""


def _converted(rows: list[PlatformEarning], *, to: str) -> tuple[list[PlatformEarning], dict[str, Decimal]]:
    """The rows with every amount in `to`, at the rates of `WERKBANK_EXCHANGE_RATES`, and the rates used;
    a currency without a rate stays as it is (the caller then compares nothing). The rows are copies: the
    stored earnings keep the currency they were paid in."""
    rates: dict[str, Decimal] = {}
    result = []
    for row in rows:
        if row.currency != to:
            rate = settings.WERKBANK_EXCHANGE_RATES.get(f"{row.currency}/{to}")
            if rate is None:
                result.append(row)
                continue
            rates[row.currency] = rate
            row = copy.copy(row)
            row.amount, row.currency = (row.amount * rate).quantize(Decimal("0.01")), to
        result.append(row)
    return result, rates


def _compute(
    *,
    servers: Sequence[Server],
    assessment: ROIAssessment | None,
    earnings: Iterable[PlatformEarning],
    deployed: dict[int, datetime.date],
) -> Income:
    rows = list(earnings)
    currencies = tuple(sorted({row.currency for row in rows}))
    income = Income(
        currency=assessment.currency if assessment is not None else (currencies[0] if currencies else ""),
        assessment=assessment,
        currencies=currencies,
    )
    if not rows:
        income.problem = NO_EARNINGS
        return income
    if assessment is not None:
        rows, income.converted = _converted(rows, to=assessment.currency)
    if len({row.currency for row in rows}) > 1 or (
        assessment is not None and rows[0].currency != assessment.currency
    ):
        income.problem = CURRENCY_MISMATCH
        return income
    this_month = _first(timezone.localdate())
    by_server: dict[int, dict[datetime.date, list[PlatformEarning]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        by_server[row.server_id][row.month].append(row)
    starts: dict[int, datetime.date] = {}
    for server in servers:
        candidates = [*by_server.get(server.pk, {}).keys()]
        if server.pk in deployed:
            candidates.append(deployed[server.pk])
        if candidates:
            starts[server.pk] = min(candidates)
    income.start = min(starts.values())
    forecast = assessment.revenue_month if assessment is not None else None
    total_hours: Decimal | None = Decimal("0")
    for month in _month_range(income.start, this_month):
        in_service = sum(1 for start in starts.values() if start <= month)
        month_rows = [row for pk in starts for row in by_server.get(pk, {}).get(month, [])]
        recorded = len({row.server_id for row in month_rows})
        actual = sum((row.amount for row in month_rows), Decimal("0.00")) if month_rows else None
        hours_known = month_rows and all(row.gpu_hours is not None for row in month_rows)
        hours = (
            sum((row.gpu_hours or Decimal("0") for row in month_rows), Decimal("0")) if hours_known else None
        )
        in_progress = month == this_month
        if in_progress and not month_rows:
            continue
        income.months.append(
            IncomeMonth(
                month=month,
                actual=actual,
                forecast=None if forecast is None else forecast * in_service,
                gpu_hours=hours,
                recorded=recorded,
                in_service=in_service,
                in_progress=in_progress,
            )
        )
        if in_progress:
            continue
        income.months_missing += in_service - recorded
        if month_rows:
            income.server_months += recorded
            income.total_actual += actual or Decimal("0")
            if forecast is not None:
                income.total_forecast = (income.total_forecast or Decimal("0")) + forecast * recorded
            total_hours = None if total_hours is None or hours is None else total_hours + hours
    for server in servers:
        months = {month: items for month, items in by_server.get(server.pk, {}).items() if month < this_month}
        count = len(months)
        income.servers.append(
            ServerIncome(
                server_id=server.pk,
                hostname=server.hostname,
                start=starts.get(server.pk),
                months_recorded=count,
                actual=sum((row.amount for items in months.values() for row in items), Decimal("0.00")),
                forecast=None if forecast is None else forecast * count,
            )
        )
    if assessment is None:
        income.problem = NO_ASSESSMENT
        return income
    income.forecast_payback_date = payback_date(
        income.start, float(assessment.payback_months) if assessment.payback_months is not None else None
    )
    if not income.server_months:
        return income
    income.mean_actual = (income.total_actual / income.server_months).quantize(Decimal("0.01"))
    income.utilization_from_hours = total_hours is not None
    result, utilization, price, error = _estimate(
        assessment,
        mean=income.total_actual / income.server_months,
        hours=total_hours,
        server_months=income.server_months,
    )
    income.observed_utilization, income.observed_price, income.estimate_error = utilization, price, error
    income.estimate = result
    if result is not None and result.pays_back:
        income.payback_months = result.payback_months
        income.payback_date = payback_date(income.start, result.payback_months)
    return income


def _assessment(order: Order, assessment: ROIAssessment | Literal["latest"] | None) -> ROIAssessment | None:
    return latest_assessment(order=order) if assessment == "latest" else assessment


def _servers_income(
    servers: list[Server],
    earnings: list[PlatformEarning],
    *,
    order: Order,
    assessment: ROIAssessment | Literal["latest"] | None,
) -> Income:
    if not earnings:
        return Income(currency="", assessment=None, problem=NO_EARNINGS)
    return _compute(
        servers=servers,
        assessment=_assessment(order, assessment),
        earnings=earnings,
        deployed=_deploy_months([server.pk for server in servers]),
    )


def order_income(*, order: Order, assessment: ROIAssessment | Literal["latest"] | None = "latest") -> Income:
    """The income of an order's deployed servers against its forecast (module docstring).

    Pass the order's assessment where the caller has read it already. The queries do not grow with the
    servers or the months: one (the earnings) when none are recorded, else the earnings, the servers, their
    deployment rows and (unless passed) the assessment.
    """
    earnings = list(
        PlatformEarning.objects.filter(server__order=order, server__status__in=DEPLOYED_OR_LATER).order_by(
            "server_id", "month"
        )
    )
    servers = (
        list(
            Server.objects.filter(order=order, status__in=DEPLOYED_OR_LATER)
            .only("pk", "hostname", "status", "order_id")
            .order_by("sequence")
        )
        if earnings
        else []
    )
    return _servers_income(servers, earnings, order=order, assessment=assessment)


def server_income(
    *, server: Server, assessment: ROIAssessment | Literal["latest"] | None = "latest"
) -> Income:
    """One server's income against its forecast: the assessment is per server, so the forecast is the
    assessment's revenue per month. Nothing for a server that was never deployed."""
    earnings = (
        list(PlatformEarning.objects.filter(server=server).order_by("month"))
        if server.status in DEPLOYED_OR_LATER
        else []
    )
    return _servers_income([server], earnings, order=server.order, assessment=assessment)
