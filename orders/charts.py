"""Server-side SVG charts for the PM pages and the customer portal: no JavaScript, printable, testable as text.

Its words go through gettext: the portal shows the chart in the customer's language."""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.html import escape
from django.utils.translation import gettext as _

WIDTH, HEIGHT = 720, 320
LEFT, RIGHT, TOP, BOTTOM = 84, 16, 16, 40


def _nice_step(span: float) -> float:
    raw = span / 5 if span > 0 else 1
    magnitude = 10 ** len(str(int(raw))) / 10
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude


def cashflow_svg(*, cashflows: Sequence[float], breakeven_month: int | None, currency: str) -> str:
    """The cumulative cash flow per month (month 0 = −capex) as an SVG line, break-even month marked."""
    months = len(cashflows) - 1
    low, high = min(0.0, *cashflows), max(0.0, *cashflows)
    span = (high - low) or 1.0

    def x(month: float) -> float:
        return LEFT + (WIDTH - LEFT - RIGHT) * month / max(months, 1)

    def y(value: float) -> float:
        return TOP + (HEIGHT - TOP - BOTTOM) * (high - value) / span

    points = " ".join(f"{x(month):.1f},{y(value):.1f}" for month, value in enumerate(cashflows))
    # Outside the f-strings, where makemessages finds them.
    title = _("Cumulative cash flow over %(months)s months") % {"months": months}
    x_label = _("month (H = 730 h)")
    y_label = _("cumulative cash (%(currency)s)") % {"currency": currency}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{escape(title)}" '
        'class="cashflow-chart">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
    ]
    step = _nice_step(span)
    tick = (low // step) * step
    while tick <= high + step / 2:
        if tick >= low - 1e-9:
            parts.append(
                f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#e5e5e5"/>'
                f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" font-size="11">'
                f"{tick:,.0f}</text>"
            )
        tick += step
    for month in range(0, months + 1, 6 if months > 24 else 3):
        parts.append(
            f'<text x="{x(month):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" font-size="11">{month}</text>'
        )
    parts.append(
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle" font-size="12">'
        f"{escape(x_label)}</text>"
        f'<text x="14" y="{(TOP + HEIGHT - BOTTOM) / 2:.0f}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2:.0f})">'
        f"{escape(y_label)}</text>"
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#333" stroke-width="1"/>'
        f'<polyline class="cashflow" points="{points}" fill="none" stroke="#1f6feb" stroke-width="2"/>'
    )
    if breakeven_month is not None:
        breakeven = _("break-even month %(month)s") % {"month": breakeven_month}
        bx = x(breakeven_month)
        anchor = "end" if breakeven_month > months * 0.8 else "start"
        offset = -4 if anchor == "end" else 4
        parts.append(
            f'<line class="breakeven" x1="{bx:.1f}" x2="{bx:.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" '
            f'stroke="#1a7f37" stroke-dasharray="4 3"/>'
            f'<circle cx="{bx:.1f}" cy="{y(cashflows[breakeven_month]):.1f}" r="4" fill="#1a7f37"/>'
            f'<text x="{bx + offset:.1f}" y="{TOP + 12}" font-size="12" fill="#1a7f37" text-anchor="{anchor}">'
            f"{escape(breakeven)}</text>"
        )
    else:
        no_breakeven = _("no break-even within %(months)s months") % {"months": months}
        parts.append(
            f'<text x="{WIDTH - RIGHT}" y="{TOP + 12}" font-size="12" fill="#cf222e" text-anchor="end">'
            f"{escape(no_breakeven)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)
