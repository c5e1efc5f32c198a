"""The income chart: each month's recorded earnings as bars against the forecast as a dashed line with
square markers, a server-side SVG like orders.charts (no JavaScript, printable, testable as text).

Actual and forecast differ by shape (bar against line and marker) and by colour (Okabe & Ito's palette, as
burnin.charts uses it), never by colour alone; the page prints the same figures as a table beside it, the
chart's text alternative. A month in progress is drawn lighter and named so in the table. The
re-estimated cumulative cash flow reuses `orders.charts.cashflow_svg` with the ROI formulas' cash flows.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.utils import formats
from django.utils.html import escape
from django.utils.translation import gettext as _

from deployment.income import IncomeMonth

WIDTH, HEIGHT = 720, 300
LEFT, RIGHT, TOP, BOTTOM = 72, 16, 34, 40
ACTUAL, FORECAST = "#0072B2", "#D55E00"


def _step(span: float) -> float:
    """A round tick step giving about five ticks over `span`."""
    raw = span / 5 if span > 0 else 1.0
    magnitude = 10 ** (len(str(int(raw))) - 1)
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10.0 * magnitude


def income_svg(*, months: Sequence[IncomeMonth], currency: str) -> str:
    """Bars of the recorded earnings per month, the forecast as a line; empty when there are no months."""
    if not months:
        return ""
    values = [float(m.actual) for m in months if m.actual is not None]
    values += [float(m.forecast) for m in months if m.forecast is not None]
    high = max([1.0, *values]) * 1.1
    step = _step(high)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / len(months)

    def y(value: float) -> float:
        return TOP + plot_h * (1 - value / high)

    # Outside the f-strings, where makemessages finds them.
    title = _("Earnings per month against the forecast (%(currency)s)") % {"currency": currency}
    actual_label, forecast_label = _("recorded earnings"), _("forecast (ROI assessment)")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="{escape(title)}" class="income-chart">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
    ]
    tick = 0.0
    while tick <= high:
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#e5e5e5"/>'
            f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" font-size="11">{tick:,.0f}</text>'
        )
        tick += step
    label_every = max(1, round(len(months) / 12))
    points = []
    for index, month in enumerate(months):
        centre = LEFT + slot * (index + 0.5)
        bar_w = max(slot * 0.6, 2.0)
        if month.actual is not None:
            top = y(float(month.actual))
            opacity = ' fill-opacity="0.4"' if month.in_progress else ""
            parts.append(
                f'<rect class="actual" x="{centre - bar_w / 2:.1f}" y="{top:.1f}" width="{bar_w:.1f}" '
                f'height="{y(0) - top:.1f}" fill="{ACTUAL}"{opacity}/>'
            )
        if month.forecast is not None:
            points.append((centre, y(float(month.forecast))))
        if index % label_every == 0:
            name = formats.date_format(month.month, "YEAR_MONTH_FORMAT")
            parts.append(
                f'<text x="{centre:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" font-size="11">'
                f"{escape(name)}</text>"
            )
    if points:
        line = " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
        parts.append(
            f'<polyline class="forecast" points="{line}" fill="none" stroke="{FORECAST}" stroke-width="2" '
            'stroke-dasharray="6 4"/>'
        )
        parts.extend(
            f'<rect x="{px - 4:.1f}" y="{py - 4:.1f}" width="8" height="8" fill="{FORECAST}"/>'
            for px, py in points
        )
    parts.append(
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#333"/>'
        f'<rect x="{LEFT}" y="8" width="12" height="12" fill="{ACTUAL}"/>'
        f'<text x="{LEFT + 18}" y="18" font-size="12">{escape(actual_label)}</text>'
        f'<line x1="{LEFT + 200}" x2="{LEFT + 230}" y1="14" y2="14" stroke="{FORECAST}" stroke-width="2" '
        'stroke-dasharray="6 4"/>'
        f'<rect x="{LEFT + 211}" y="10" width="8" height="8" fill="{FORECAST}"/>'
        f'<text x="{LEFT + 238}" y="18" font-size="12">{escape(forecast_label)}</text>'
        "</svg>"
    )
    return "".join(parts)
