"""The income section as plain values for a page: the PM order page uses it as it is, the portal wraps each
part in its PAGE_FIELDS row (portal/customer.py). No model instance reaches a template through it."""

from __future__ import annotations

from typing import Any

from django.utils.safestring import mark_safe

from deployment.income import Income
from deployment.income_chart import income_svg
from orders.charts import cashflow_svg


def income_month_values(income: Income) -> list[dict[str, Any]]:
    return [
        {
            "month": month.month,
            "actual": month.actual,
            "forecast": month.forecast,
            "difference": month.difference,
            "gpu_hours": month.gpu_hours,
            "recorded": month.recorded,
            "in_service": month.in_service,
            "in_progress": month.in_progress,
        }
        for month in income.months
    ]


def income_server_values(income: Income) -> list[dict[str, Any]]:
    return [
        {
            "hostname": line.hostname,
            "start": line.start,
            "months_recorded": line.months_recorded,
            "actual": line.actual,
            "forecast": line.forecast,
        }
        for line in income.servers
    ]


def income_values(income: Income) -> dict[str, Any]:
    """The section's figures and its two charts (SVG built with escape() from our own data)."""
    assessment = income.assessment
    estimate = income.estimate
    chart = income_svg(months=income.months, currency=income.currency) if income.months else ""
    cashflow = (
        cashflow_svg(
            cashflows=estimate.cashflows, breakeven_month=estimate.breakeven_month, currency=income.currency
        )
        if estimate is not None
        else ""
    )
    return {
        "problem": income.problem,
        "currency": income.currency,
        "currencies": ", ".join(income.currencies),
        "converted": sorted(income.converted.items()),
        "start": income.start,
        "server_months": income.server_months,
        "months_missing": income.months_missing,
        "total_actual": income.total_actual,
        "total_forecast": income.total_forecast,
        "ratio_percent": None if income.ratio is None else income.ratio * 100,
        "mean_actual": income.mean_actual,
        "forecast_month": assessment.revenue_month if assessment is not None else None,
        "utilization_percent": (
            None if income.observed_utilization is None else income.observed_utilization * 100
        ),
        "observed_price": income.observed_price,
        "utilization_from_hours": income.utilization_from_hours,
        "net_month": estimate.net_month if estimate is not None else None,
        "forecast_net_month": assessment.net_month if assessment is not None else None,
        "payback_months": income.payback_months,
        "payback_date": income.payback_date,
        "forecast_payback_months": assessment.payback_months if assessment is not None else None,
        "forecast_payback_date": income.forecast_payback_date,
        "estimate_error": income.estimate_error,
        "breakeven_month": estimate.breakeven_month if estimate is not None else None,
        # Built with escape() from our own data (deployment.income_chart, orders.charts).
        "chart": mark_safe(chart),
        "cashflow_chart": mark_safe(cashflow),
        "months": income_month_values(income),
        "servers": income_server_values(income),
    }
