"""The quality page's chart: failures over time per lot, a server-side SVG like orders.charts and
burnin.charts (no JavaScript, printable, testable as text).

Months run along x (every month from the first failure to the last, months without one at zero), the
distinct failed units of each month up y, one line per lot. Lots are told apart by colour AND dash pattern
AND a marker shape AND their name in the legend, never by colour alone; the page prints the same figures as a
table beside it (`month_table`), the chart's text alternative.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from django.utils.html import escape
from django.utils.translation import gettext as _

WIDTH, HEIGHT = 720, 300
LEFT, RIGHT, TOP, BOTTOM = 48, 16, 16, 44
#: Space between the axis' ends and the first and last month.
INSET = 24
#: Height of one legend line under the plot.
LEGEND_LINE = 18

#: Okabe & Ito's colour-blind-safe palette ("Color Universal Design", 2008), as burnin.charts uses it.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#000000")
#: One dash pattern per series: the lines differ in grey print and for any colour vision.
DASHES = ("", "9 4", "2 3", "10 3 2 3", "5 5")


@dataclass(frozen=True)
class Series:
    """One lot's line: its label and the distinct failed units per month (first of the month)."""

    label: str
    points: Sequence[tuple[date, int]]


def _first_of_month(day: date) -> date:
    return day.replace(day=1)


def _next_month(day: date) -> date:
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


def months_of(series: Sequence[Series]) -> list[date]:
    """Every month from the earliest to the latest point of any series, each as its first day."""
    days = [_first_of_month(day) for line in series for day, _count in line.points]
    if not days:
        return []
    months, month, last = [], min(days), max(days)
    while month <= last:
        months.append(month)
        month = _next_month(month)
    return months


def month_table(series: Sequence[Series]) -> list[tuple[date, list[int]]]:
    """The chart's figures as rows: each month with the count of every series, in the series' order."""
    counts = [_sum_by_month(line) for line in series]
    return [(month, [by_month.get(month, 0) for by_month in counts]) for month in months_of(series)]


def _sum_by_month(line: Series) -> dict[date, int]:
    totals: dict[date, int] = {}
    for day, count in line.points:
        month = _first_of_month(day)
        totals[month] = totals.get(month, 0) + count
    return totals


def _marker(shape: int, x: float, y: float, colour: str) -> str:
    """A filled circle, square, triangle, diamond or cross: the fourth way to tell the lines apart."""
    if shape == 0:
        return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>'
    if shape == 1:
        return f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" fill="{colour}"/>'
    corners: tuple[tuple[float, float], ...]
    if shape == 2:
        corners = ((x, y - 4), (x + 4, y + 3.5), (x - 4, y + 3.5))
    elif shape == 3:
        corners = ((x, y - 4.5), (x + 4.5, y), (x, y + 4.5), (x - 4.5, y))
    else:
        return (
            f'<path d="M{x - 4:.1f},{y - 4:.1f} L{x + 4:.1f},{y + 4:.1f} M{x - 4:.1f},{y + 4:.1f} '
            f'L{x + 4:.1f},{y - 4:.1f}" stroke="{colour}" stroke-width="2"/>'
        )
    path = " L".join(f"{cx:.1f},{cy:.1f}" for cx, cy in corners)
    return f'<path d="M{path} Z" fill="{colour}"/>'


def failures_svg(series: Sequence[Series]) -> str:
    """Failures per month of up to five lots as one SVG; an empty string when no series has a point."""
    series = list(series)[: len(COLOURS)]
    table = month_table(series)
    if not table:
        return ""
    months = [month for month, _counts in table]
    peak = max(1, *(count for _month, counts in table for count in counts))
    plot_bottom = HEIGHT - BOTTOM
    height = HEIGHT + LEGEND_LINE * len(series)

    def x(index: int) -> float:
        # Inset by INSET from both ends, so that the first and last month's labels fit.
        if len(months) == 1:
            return (LEFT + WIDTH - RIGHT) / 2
        return LEFT + INSET + (WIDTH - LEFT - RIGHT - 2 * INSET) * index / (len(months) - 1)

    def y(count: float) -> float:
        return TOP + (plot_bottom - TOP) * (peak - count) / peak

    # Outside the f-strings, where makemessages finds them.
    title = _("Failed units per month, per lot")
    y_label = _("failed units")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" role="img" aria-label="{escape(title)}" class="failures-chart">',
        f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#fff"/>',
    ]
    step = max(1, -(-peak // 5))  # at most about five whole-number gridlines
    for tick in range(0, peak + 1, step):
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#e5e5e5"/>'
            f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" font-size="11">{tick}</text>'
        )
    every = max(1, -(-len(months) // 12))  # at most about twelve month labels
    for index in range(0, len(months), every):
        parts.append(
            f'<text x="{x(index):.1f}" y="{plot_bottom + 16}" text-anchor="middle" font-size="11">'
            f"{months[index]:%Y-%m}</text>"
        )
    parts.append(
        f'<text x="14" y="{(TOP + plot_bottom) / 2:.0f}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {(TOP + plot_bottom) / 2:.0f})">{escape(y_label)}</text>'
        f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{plot_bottom}" y2="{plot_bottom}" stroke="#333"/>'
    )
    for number, line in enumerate(series):
        colour, dash = COLOURS[number], DASHES[number]
        points = [(x(index), y(counts[number])) for index, (_month, counts) in enumerate(table)]
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<g class="series" data-series="{number}">'
            f'<polyline points="{" ".join(f"{px:.1f},{py:.1f}" for px, py in points)}" fill="none" '
            f'stroke="{colour}" stroke-width="2"{dashed}/>'
            + "".join(_marker(number, px, py, colour) for px, py in points)
            + "</g>"
        )
        legend_y = HEIGHT + LEGEND_LINE * number
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + 36}" y1="{legend_y - 4}" y2="{legend_y - 4}" stroke="{colour}" '
            f'stroke-width="2"{dashed}/>'
            + _marker(number, LEFT + 18, legend_y - 4, colour)
            + f'<text x="{LEFT + 44}" y="{legend_y}" font-size="12">{escape(line.label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
