"""Server-side SVG charts of a burn-in run's telemetry: no JavaScript, printable, testable as text.

Their words go through gettext: the burn-in page and the portal show them in the reader's language.

Three charts share one time axis: temperature with the slowdown point, power with the power limit, and the
SM clock. One line per GPU, told apart by colour AND dash pattern AND a label in the legend (never colour
alone); throttle periods (HW slowdown, thermal slowdown, power brake) are shaded with a hatch on every chart.
They draw what `burnin.selectors.telemetry_series` returns, already downsampled in the database.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils import formats, timezone
from django.utils.html import escape
from django.utils.translation import gettext as _

from burnin.selectors import Telemetry

if TYPE_CHECKING:
    pass

WIDTH, HEIGHT = 760, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 96, 46, 44

#: Okabe & Ito's colour-blind-safe palette (yellow swapped for a dark grey, which reads on white).
COLOURS = ("#000000", "#E69F00", "#0072B2", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#6E6E6E")
#: One dash pattern per GPU: the lines differ even in grey print and for any colour vision.
DASHES = ("", "9 4", "2 3", "10 3 2 3", "5 5", "1 4", "14 4 4 4", "4 2 1 2 1 2")

#: A gap in the samples longer than this many buckets (or sampling steps) breaks the line.
GAP_FACTOR = 3.0


@dataclass(frozen=True)
class Guide:
    """A horizontal reference line, e.g. the slowdown point or the power limit."""

    value: float
    label: str


@dataclass(frozen=True)
class Span:
    """A stretch of time (seconds since start) in which the listed GPUs were throttled."""

    start_s: float
    end_s: float
    gpus: tuple[int, ...]

    def describe(self) -> str:
        """'GPU 0, GPU 3 from 12 h 30 min to 12 h 34 min 20 s' (the page lists the spans in words too)."""
        gpus = ", ".join(f"GPU {i}" for i in self.gpus)
        return _("%(gpus)s from %(start)s to %(end)s") % {
            "gpus": gpus,
            "start": elapsed(self.start_s),
            "end": elapsed(self.end_s),
        }


def elapsed(t_s: float) -> str:
    """Seconds since the start as '3 h 05 min', '4 min 20 s' or '12 s'."""
    total = round(t_s)
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {seconds:02d} s" if seconds else f"{minutes} min"
    return f"{seconds} s"


def line_style(position: int) -> tuple[str, str]:
    """(colour, dash pattern) of the n-th GPU line."""
    return COLOURS[position % len(COLOURS)], DASHES[position % len(DASHES)]


def throttle_spans(telemetry: Telemetry) -> list[Span]:
    """The buckets in which any GPU was throttled, merged into consecutive spans."""
    width = telemetry.interval_s
    throttled: dict[int, set[int]] = {}
    for index, gpu in telemetry.series.items():
        for bucket, flag in zip(gpu.bucket, gpu.throttled, strict=True):
            if flag:
                throttled.setdefault(bucket, set()).add(index)
    spans: list[Span] = []
    for bucket in sorted(throttled):
        gpus = throttled[bucket]
        last = spans[-1] if spans else None
        if last is not None and math.isclose(last.end_s, bucket * width):
            spans[-1] = Span(last.start_s, (bucket + 1) * width, tuple(sorted({*last.gpus, *gpus})))
        else:
            spans.append(Span(bucket * width, (bucket + 1) * width, tuple(sorted(gpus))))
    return [Span(s.start_s, min(s.end_s, telemetry.span_s), s.gpus) for s in spans]


def slowdown_guides(telemetry: Telemetry) -> list[Guide]:
    """The slowdown point each GPU reported (temperature + margin), one line per distinct value."""
    points: dict[float, list[int]] = {}
    for index, gpu in sorted(telemetry.series.items()):
        slowdown = gpu.slowdown_c()
        if slowdown is not None:
            points.setdefault(round(slowdown), []).append(index)
    if len(points) == 1:
        [(value, _gpus)] = points.items()
        return [Guide(value, _("slowdown %(value)s °C") % {"value": f"{value:.0f}"})]
    return [
        Guide(
            value,
            _("slowdown %(value)s °C (GPU %(gpus)s)")
            % {"value": f"{value:.0f}", "gpus": ", ".join(map(str, gpus))},
        )
        for value, gpus in sorted(points.items())
    ]


def power_guides(power_limits_w: dict[int, float]) -> list[Guide]:
    """The power limit of the GPUs, one line per distinct value."""
    limits: dict[float, list[int]] = {}
    for index, limit in sorted(power_limits_w.items()):
        limits.setdefault(round(limit), []).append(index)
    if len(limits) == 1:
        [(value, _gpus)] = limits.items()
        return [Guide(value, _("limit %(value)s W") % {"value": f"{value:.0f}"})]
    return [
        Guide(
            value,
            _("limit %(value)s W (GPU %(gpus)s)")
            % {"value": f"{value:.0f}", "gpus": ", ".join(map(str, gpus))},
        )
        for value, gpus in sorted(limits.items())
    ]


def temperature_svg(telemetry: Telemetry) -> str:
    return telemetry_chart_svg(
        telemetry,
        field="temp_c",
        title=_("GPU temperature"),
        unit="°C",
        axis=_("temperature (°C)"),
        guides=slowdown_guides(telemetry),
        css="temperature-chart",
    )


def power_svg(telemetry: Telemetry, *, power_limits_w: dict[int, float] | None = None) -> str:
    return telemetry_chart_svg(
        telemetry,
        field="power_w",
        title=_("GPU power"),
        unit="W",
        axis=_("power (W)"),
        guides=power_guides(power_limits_w or {}),
        css="power-chart",
        floor=0.0,
    )


def clock_svg(telemetry: Telemetry) -> str:
    return telemetry_chart_svg(
        telemetry,
        field="sm_mhz",
        title=_("SM clock"),
        unit="MHz",
        axis=_("SM clock (MHz)"),
        css="clock-chart",
    )


def nice_step(span: float, *, ticks: int = 5) -> float:
    """A round step (1, 2, 2.5 or 5 × 10^n) that cuts `span` into about `ticks` parts."""
    raw = span / ticks if span > 0 else 1.0
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * magnitude:
            return factor * magnitude
    return 10 * magnitude  # pragma: no cover - the loop ends at 10


#: Time steps a reader counts in: seconds, minutes, hours, days.
TIME_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def time_step(span_s: float, *, ticks: int = 8) -> float:
    return next(
        (step for step in TIME_STEPS_S if span_s / step <= ticks), 86400 * math.ceil(span_s / 86400 / ticks)
    )


def time_label(t_s: float, step_s: float) -> str:
    if step_s >= 3600:
        return f"{t_s / 3600:g} h"
    if step_s >= 60:
        return f"{t_s / 60:g} min"
    return f"{t_s:g} s"


def _segments(
    t_s: Sequence[float], values: Sequence[float | None], max_gap_s: float
) -> list[list[tuple[float, float]]]:
    """Split a series into runs of points: a missing value or a gap longer than `max_gap_s` breaks it."""
    segments: list[list[tuple[float, float]]] = []
    current: list[tuple[float, float]] = []
    previous_t: float | None = None
    for t, value in zip(t_s, values, strict=True):
        if value is None or (previous_t is not None and t - previous_t > max_gap_s):
            if current:
                segments.append(current)
            current = []
        if value is not None:
            current.append((t, value))
        previous_t = t
    if current:
        segments.append(current)
    return segments


def _typical_step(t_s: Sequence[float]) -> float:
    """The median time between a GPU's points: its sampling step, or the bucket width once downsampled."""
    steps = sorted(b - a for a, b in itertools.pairwise(t_s))
    return steps[len(steps) // 2] if steps else 0.0


def _tick(value: float) -> str:
    """An axis label as Python's `,.6g` writes it ("1,250", "0.5"), with the active language's separators
    (German "1.250", "0,5")."""
    marks = {",": formats.get_format("THOUSAND_SEPARATOR"), ".": formats.get_format("DECIMAL_SEPARATOR")}
    return "".join(marks.get(char, char) for char in f"{value:,.6g}")


def _throttle_rects(
    telemetry: Telemetry, *, x: Callable[[float], float], height: float, hatch: str
) -> list[str]:
    """The shaded spans in which a GPU was throttled, each titled with its GPUs and times."""
    rects = []
    for span in throttle_spans(telemetry):
        x0, x1 = x(span.start_s), x(span.end_s)
        gpus = ", ".join(f"GPU {i}" for i in span.gpus)
        title = _("throttled: %(span)s") % {"span": span.describe()}
        rects.append(
            f'<rect class="throttle" x="{x0:.1f}" y="{TOP}" width="{max(x1 - x0, 4):.1f}" height="{height}" '
            f'fill="url(#{hatch})" stroke="#cf222e" stroke-width="0.5" data-gpus="{escape(gpus)}">'
            f"<title>{escape(title)}</title></rect>"
        )
    return rects


def telemetry_chart_svg(
    telemetry: Telemetry,
    *,
    field: str,
    title: str,
    unit: str,
    axis: str,
    css: str,
    guides: Sequence[Guide] = (),
    floor: float | None = None,
) -> str:
    """One series of every GPU against time, with the throttle spans shaded and horizontal guides.

    Returns "" when no GPU has a value of this series (the page then says so in words).
    """
    series = dict(sorted(telemetry.series.items()))
    values = [v for gpu in series.values() for v in getattr(gpu, field) if v is not None]
    if not values:
        return ""
    low = min(values + [g.value for g in guides])
    high = max(values + [g.value for g in guides])
    pad = (high - low) * 0.08 or max(abs(high) * 0.05, 1.0)
    low, high = low - pad, high + pad
    if floor is not None:
        low = max(low, floor)
    step = nice_step(high - low)
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    span_s = telemetry.span_s or max((gpu.t_s[-1] for gpu in series.values() if gpu.t_s), default=1.0) or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(t: float) -> float:
        return LEFT + plot_w * min(max(t / span_s, 0.0), 1.0)

    def y(value: float) -> float:
        return TOP + plot_h * (high - value) / (high - low)

    hatch = f"{escape(css)}-hatch"
    label = escape(
        _("%(title)s of %(count)s GPUs over %(hours)s h, in %(unit)s")
        % {
            "title": title,
            "count": len(series),
            "hours": formats.number_format(f"{span_s / 3600:.1f}", 1),
            "unit": unit,
        }
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
        f'height="{HEIGHT}" role="img" aria-label="{label}" class="telemetry-chart {escape(css)}">',
        f"<title>{label}</title>",
        f'<defs><pattern id="{hatch}" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffebe9"/>'
        '<line x1="0" y1="0" x2="0" y2="6" stroke="#cf222e" stroke-width="2"/></pattern></defs>',
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
        f'<text x="{LEFT}" y="16" font-size="13" font-weight="600">{escape(title)}</text>',
    ]
    # Throttle spans first, under the grid and the lines.
    parts += _throttle_rects(telemetry, x=x, height=plot_h, hatch=hatch)
    tick = low
    while tick <= high + step / 2:
        parts.append(
            f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#e5e5e5"/>'
            f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" font-size="11">{_tick(tick)}</text>'
        )
        tick += step
    t_step = time_step(span_s)
    t = 0.0
    while t <= span_s + 1e-9:
        parts.append(
            f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{TOP + plot_h}" y2="{TOP + plot_h + 4}" stroke="#333"/>'
            f'<text x="{x(t):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle" font-size="11">'
            f"{escape(time_label(t, t_step))}</text>"
        )
        t += t_step
    # In the site's time zone, as the page around the chart gives its times.
    started = timezone.localtime(telemetry.started_at).strftime("%Y-%m-%d %H:%M %Z")
    time_axis = _("time since start (%(started)s)") % {"started": started}
    parts.append(
        f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{TOP + plot_h}" y2="{TOP + plot_h}" stroke="#333"/>'
        f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + plot_h}" stroke="#333"/>'
        f'<text x="{LEFT + plot_w / 2:.0f}" y="{HEIGHT - 6}" text-anchor="middle" font-size="12">'
        f"{escape(time_axis)}</text>"
        f'<text x="14" y="{TOP + plot_h / 2:.0f}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {TOP + plot_h / 2:.0f})">{escape(axis)}</text>'
    )
    for guide in guides:
        gy = y(guide.value)
        parts.append(
            f'<line class="guide" x1="{LEFT}" x2="{LEFT + plot_w}" y1="{gy:.1f}" y2="{gy:.1f}" '
            f'stroke="#cf222e" stroke-width="1.5" stroke-dasharray="6 3"/>'
            f'<text class="guide-label" x="{LEFT + plot_w + 4}" y="{gy + 4:.1f}" font-size="11" fill="#a40e26">'
            f"{escape(guide.label)}</text>"
        )
    for position, (index, gpu) in enumerate(series.items()):
        colour, dash = line_style(position)
        d = " ".join(
            "M" + " L".join(f"{x(t):.1f},{y(v):.1f}" for t, v in segment)
            for segment in _segments(
                gpu.t_s, getattr(gpu, field), GAP_FACTOR * max(telemetry.interval_s, _typical_step(gpu.t_s))
            )
        )
        if not d:
            continue  # this GPU recorded nothing of this series: the legend says so
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<path class="series" data-gpu="{index}" d="{d}" fill="none" stroke="{colour}" '
            f'stroke-width="1.6"{dash_attr}><title>GPU {index}</title></path>'
        )
    parts.append(
        _legend(
            {index: any(v is not None for v in getattr(gpu, field)) for index, gpu in series.items()},
            hatch=hatch,
        )
    )
    parts.append("</svg>")
    return "".join(parts)


def _legend(drawn: dict[int, bool], *, hatch: str) -> str:
    """A row above the plot: a line sample and 'GPU n' per GPU ('no data' where it has no line), then the
    throttle hatch."""
    parts = ['<g class="legend" font-size="11">']
    x = LEFT
    for position, (index, has_line) in enumerate(drawn.items()):
        colour, dash = line_style(position)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        if has_line:
            parts.append(
                f'<line x1="{x}" x2="{x + 26}" y1="32" y2="32" stroke="{colour}" stroke-width="2"{dash_attr}/>'
                f'<text x="{x + 30}" y="36">GPU {index}</text>'
            )
        else:
            no_data = _("GPU %(index)s: no data") % {"index": index}
            parts.append(f'<text x="{x}" y="36" fill="#57606a">{escape(no_data)}</text>')
        x += 76
    throttled = _("throttled")  # outside the f-string, where makemessages finds it
    parts.append(
        f'<rect x="{x}" y="26" width="14" height="12" fill="url(#{hatch})" stroke="#cf222e"/>'
        f'<text x="{x + 18}" y="36">{escape(throttled)}</text>'
    )
    parts.append("</g>")
    return "".join(parts)
