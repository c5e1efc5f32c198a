"""Server-side SVG charts of a server's health history after the handover (`burnin.health`, issue 25).

The time line puts every run of the server on one date axis, a lane per purpose; per GPU, one small chart
per figure draws its baseline as a line and each field check and post-repair run as a point. Like the
telemetry charts (`burnin.charts`, whose axis steps they share) they need no JavaScript, print, and tell
things apart by shape as well as colour; their words go through gettext.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.utils import timezone
from django.utils.formats import number_format
from django.utils.html import escape
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

from burnin.charts import nice_step
from burnin.choices import ReportPurpose

if TYPE_CHECKING:
    from burnin.health import GpuFigures, GpuHistory, HealthHistory, HealthRun


#: The time line: one lane per purpose, a marker per run.
TIMELINE_W, TIMELINE_LEFT, TIMELINE_RIGHT, TIMELINE_TOP, TIMELINE_LANE = 760, 150, 24, 52, 30
#: A GPU's small chart of one figure: its baseline as a line, each field run as a point.
METRIC_W, METRIC_H = 244, 156
METRIC_LEFT, METRIC_RIGHT, METRIC_TOP, METRIC_BOTTOM = 46, 12, 34, 30
PASS_COLOUR, FAIL_COLOUR, INCOMPLETE_COLOUR, POINT_COLOUR = "#1a7f37", "#cf222e", "#9a6700", "#0072B2"
#: Decimals of each figure as the history prints it.
METRIC_DECIMALS = {"h2d_gbps": 1, "tflops": 1, "peak_temp_c": 0}


def _day(moment: datetime) -> str:
    """A run's date in the site's time zone, as the pages give their dates."""
    return timezone.localtime(moment).strftime("%Y-%m-%d")


def _purpose_label(purpose: str) -> str:
    return str(ReportPurpose(purpose).label) if purpose in ReportPurpose.values else purpose


def _result_label(result: str) -> str:
    from burnin.health import RESULT_LABELS

    return str(RESULT_LABELS.get(result, result))


def _date_ticks(start: datetime, end: datetime) -> list[datetime]:
    """Midnights (site time) a reader counts in: days, weeks or the first of each month."""
    span_days = (end - start).total_seconds() / 86400
    first = timezone.localtime(start).replace(hour=0, minute=0, second=0, microsecond=0)
    if span_days > 70:
        tick = first.replace(day=1)
        ticks = []
        every = max(1, math.ceil(span_days / 30 / 8))  # at most about 8 labels
        month = 0
        while tick <= end:
            if tick >= start and month % every == 0:
                ticks.append(tick)
            month += 1
            year, mon = divmod(tick.month, 12)
            tick = tick.replace(year=tick.year + year, month=mon + 1)
        return ticks
    step = 1 if span_days <= 10 else 7 if span_days <= 63 else 14
    ticks, tick = [], first
    while tick <= end:
        if tick >= start:
            ticks.append(tick)
        tick += timedelta(days=step)
    return ticks


def health_timeline_svg(history: HealthHistory) -> str:
    """Every run of the server on one time axis, a lane per purpose: a filled circle passed, a diamond
    failed, a hollow circle incomplete (shape and colour, never colour alone); a ring marks a run accepted
    as baseline, and a red count above a run its unwaived drift faults. The axis runs to today, so the gap
    since the last field check shows. "" without runs."""
    runs = history.runs
    if not runs:
        return ""
    lanes = [ReportPurpose.BURN_IN, ReportPurpose.FIELD_CHECK, ReportPurpose.POST_REPAIR]
    lane_of = {purpose.value: position for position, purpose in enumerate(lanes)}
    plot_h = TIMELINE_LANE * len(lanes)
    height = TIMELINE_TOP + plot_h + 34
    plot_w = TIMELINE_W - TIMELINE_LEFT - TIMELINE_RIGHT
    start = min(run.started_at for run in runs)
    end = max(max(run.started_at for run in runs), history.now)
    pad = max((end - start) * 0.03, timedelta(hours=12))
    start, end = start - pad, end + pad
    span = (end - start).total_seconds()

    def x(moment: datetime) -> float:
        return TIMELINE_LEFT + plot_w * (moment - start).total_seconds() / span

    def y(purpose: str) -> float:
        return TIMELINE_TOP + TIMELINE_LANE * (lane_of.get(purpose, 0) + 0.5)

    field_runs = len(history.field_runs)
    title = _("Runs over time")  # outside the f-string, where makemessages finds it
    label = escape(
        _(
            "Health history: %(runs)s runs from %(first)s to %(last)s, %(field)s of them field checks or post-repair runs"  # noqa: E501 - one msgid, as makemessages reads it
        )
        % {
            "runs": len(runs),
            "first": _day(runs[0].started_at),
            "last": _day(runs[-1].started_at),
            "field": field_runs,
        }
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {TIMELINE_W} {height}" width="{TIMELINE_W}" '
        f'height="{height}" role="img" aria-label="{label}" class="health-timeline">',
        f"<title>{label}</title>",
        f'<rect x="0" y="0" width="{TIMELINE_W}" height="{height}" fill="#fff"/>',
        f'<text x="{TIMELINE_LEFT}" y="16" font-size="13" font-weight="600">{escape(title)}</text>',
        _timeline_legend(),
    ]
    for purpose in lanes:
        ly = y(purpose)
        parts.append(
            f'<line x1="{TIMELINE_LEFT}" x2="{TIMELINE_LEFT + plot_w}" y1="{ly:.1f}" y2="{ly:.1f}" '
            'stroke="#d0d7de"/>'
            f'<text x="{TIMELINE_LEFT - 8}" y="{ly + 4:.1f}" text-anchor="end" font-size="11">'
            f"{escape(_purpose_label(purpose))}</text>"
        )
    axis_y = TIMELINE_TOP + plot_h
    parts.append(
        f'<line x1="{TIMELINE_LEFT}" x2="{TIMELINE_LEFT + plot_w}" y1="{axis_y}" y2="{axis_y}" '
        'stroke="#333"/>'
    )
    for tick in _date_ticks(start, end):
        tx = x(tick)
        parts.append(
            f'<line x1="{tx:.1f}" x2="{tx:.1f}" y1="{axis_y}" y2="{axis_y + 4}" stroke="#333"/>'
            f'<text x="{tx:.1f}" y="{axis_y + 16}" text-anchor="middle" font-size="11">'
            f"{escape(_day(tick))}</text>"
        )
    today = x(history.now)
    today_label = _("today")
    parts.append(
        f'<line class="today" x1="{today:.1f}" x2="{today:.1f}" y1="{TIMELINE_TOP - 4}" y2="{axis_y}" '
        f'stroke="#57606a" stroke-dasharray="3 3"/>'
        f'<text x="{today:.1f}" y="{axis_y + 30}" text-anchor="middle" font-size="11" fill="#57606a">'
        f"{escape(today_label)}</text>"
    )
    # A year of weekly checks side by side: the markers shrink so that neighbours stay apart.
    radius = max(2.5, min(5.5, plot_w * 7 * 86400 / span / 2.4))
    for run in runs:
        parts.append(_run_marker(run, x(run.started_at), y(run.purpose), r=radius))
    parts.append("</svg>")
    return "".join(parts)


def _marker(result: str, cx: float, cy: float, r: float = 5.5) -> str:
    """A passed run is a filled circle, a failed one a diamond, an incomplete one a hollow circle."""
    if result == "fail":
        return (
            f'<path d="M{cx:.1f},{cy - r - 1:.1f} L{cx + r + 1:.1f},{cy:.1f} L{cx:.1f},{cy + r + 1:.1f} '
            f'L{cx - r - 1:.1f},{cy:.1f} Z" fill="{FAIL_COLOUR}" stroke="#fff" stroke-width="1"/>'
        )
    if result == "pass":
        return (
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" fill="{PASS_COLOUR}" stroke="#fff" '
            'stroke-width="1"/>'
        )
    return (
        f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r - 1}" fill="#fff" stroke="{INCOMPLETE_COLOUR}" '
        f'stroke-width="2"/>'
    )


def _run_marker(run: HealthRun, cx: float, cy: float, *, r: float = 5.5) -> str:
    words = [f"{_purpose_label(run.purpose)} {_day(run.started_at)}: {_result_label(run.result)}"]
    if run.is_baseline:
        words.append(_("accepted as baseline"))
    if run.drift_fails:
        words.append(
            ngettext("%(count)s drift fault", "%(count)s drift faults", run.drift_fails)
            % {"count": run.drift_fails}
        )
    flags = (" data-baseline" if run.is_baseline else "") + (
        f' data-drift-fails="{run.drift_fails}"' if run.drift_fails else ""
    )
    parts = [
        f'<g class="run" data-run="{run.id}" data-purpose="{escape(run.purpose)}" '
        f'data-result="{escape(run.result)}"{flags}><title>{escape(", ".join(words))}</title>'
    ]
    if run.is_baseline:
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="10" fill="none" stroke="#1f2328" stroke-width="2"/>'
        )
    if run.drift_fails:
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="9" fill="none" stroke="{FAIL_COLOUR}" stroke-width="2"/>'
            f'<text x="{cx:.1f}" y="{cy - 12:.1f}" text-anchor="middle" font-size="10" font-weight="700" '
            f'fill="{FAIL_COLOUR}">{run.drift_fails}</text>'
        )
    parts.append(_marker(run.result, cx, cy, r))
    parts.append("</g>")
    return "".join(parts)


def _timeline_legend() -> str:
    entries = [
        (_marker("pass", 0, 0), pgettext("run marker", "passed")),
        (_marker("fail", 0, 0), pgettext("run marker", "failed")),
        (_marker("incomplete", 0, 0), pgettext("run marker", "incomplete")),
        ('<circle cx="0" cy="0" r="8" fill="none" stroke="#1f2328" stroke-width="2"/>', _("baseline")),
        (
            f'<circle cx="0" cy="0" r="8" fill="none" stroke="{FAIL_COLOUR}" stroke-width="2"/>',
            _("drift faults"),
        ),
    ]
    parts = ['<g class="health-legend" font-size="11">']
    lx = TIMELINE_LEFT + 8
    for shape, text in entries:
        parts.append(
            f'<g transform="translate({lx},33)">{shape}</g>'
            f'<text x="{lx + 13}" y="37">{escape(str(text))}</text>'
        )
        lx += 26 + 7 * len(str(text))
    parts.append("</g>")
    return "".join(parts)


def _figure(metric: str, value: float | None) -> str:
    """A figure in the reader's language ("27,7" on a German page), to its metric's decimals."""
    if value is None:
        return "—"
    return number_format(round(value, METRIC_DECIMALS.get(metric, 1)), METRIC_DECIMALS.get(metric, 1))


def _tick(value: float) -> str:
    """An axis label in the reader's language: "2,5", "30"."""
    rounded = float(f"{value:.6g}")
    return number_format(int(rounded) if rounded.is_integer() else rounded)


def _raw(metric: str, value: float) -> str:
    """A figure as a machine reads it (the points' data-value)."""
    return f"{value:.{METRIC_DECIMALS.get(metric, 1)}f}"


#: The plot area of a GPU's small chart, inside its margins.
METRIC_PLOT_W, METRIC_PLOT_H = METRIC_W - METRIC_LEFT - METRIC_RIGHT, METRIC_H - METRIC_TOP - METRIC_BOTTOM

#: A field run's figure of one metric: the run's figures, and the value of that metric in them.
MetricPoint = tuple["GpuFigures", float | None]


@dataclass(frozen=True)
class _ValueScale:
    """The value axis of a GPU's small chart: round ticks around its figures and its baseline."""

    low: float
    high: float
    step: float

    @classmethod
    def around(
        cls, values: Sequence[float], *, reference: float | None = None, band: float = 0.0
    ) -> _ValueScale:
        """Ticks around `values`, never narrower than `band` either side of `reference` (the baseline): a
        run within the noise of its baseline draws as level with it, not as a fall."""
        low, high = min(values), max(values)
        pad = (high - low) * 0.12 or max(abs(high) * 0.08, 1.0)
        low, high = low - pad, high + pad
        if reference is not None and band > 0:
            low, high = min(low, reference - band), max(high, reference + band)
        step = nice_step(high - low, ticks=3)
        return cls(math.floor(low / step) * step, math.ceil(high / step) * step, step)

    def y(self, value: float) -> float:
        return METRIC_TOP + METRIC_PLOT_H * (self.high - value) / (self.high - self.low)


@dataclass(frozen=True)
class _DateScale:
    """The date axis of a GPU's small chart, from its first field run to its last; one run sits in the
    middle."""

    first: datetime
    last: datetime

    @property
    def span(self) -> float:
        return (self.last - self.first).total_seconds()

    def x(self, moment: datetime) -> float:
        if self.span <= 0:
            return METRIC_LEFT + METRIC_PLOT_W / 2
        return METRIC_LEFT + 10 + (METRIC_PLOT_W - 20) * (moment - self.first).total_seconds() / self.span


#: The least a small chart shows either side of a GPU's baseline: the drift rules' own thresholds (H2D
#: −10 %, TFLOPS −5 %, peak +5 °C, `burnin.rules.DriftThresholds`) with room to spare, so a point at the
#: threshold sits well inside the plot and run-to-run noise (~1 %) stays a flat line.
_BAND_SHARE = {"h2d_gbps": 0.15, "tflops": 0.08}
_BAND_ABSOLUTE = {"peak_temp_c": 8.0}


def _band(metric: str, baseline: float | None) -> float:
    if baseline is None:
        return 0.0
    return _BAND_ABSOLUTE.get(metric) or abs(baseline) * _BAND_SHARE.get(metric, 0.0)


def health_metric_svg(gpu: GpuHistory, metric: str) -> str:
    """One figure of one GPU: its baseline as a horizontal line, each field check (circle) and post-repair
    run (square) as a point at its date; a point an unwaived drift fault marks is red and larger, so a
    fallen figure stands out below the line (above it for the temperature)."""
    from burnin.health import METRIC_LABELS

    name, unit = METRIC_LABELS[metric]
    baseline = gpu.baseline.value(metric) if gpu.baseline is not None else None
    points: list[MetricPoint] = [(p, p.value(metric)) for p in gpu.points if p.value(metric) is not None]
    parts = [_metric_header(gpu, metric, name=str(name), unit=unit, baseline=baseline, points=points)]
    values = [v for _p, v in points if v is not None] + ([baseline] if baseline is not None else [])
    if not values:
        no_data = _("not measured")
        parts.append(
            f'<text x="{METRIC_W / 2:.0f}" y="{METRIC_H / 2:.0f}" text-anchor="middle" font-size="11" '
            f'fill="#57606a">{escape(no_data)}</text></svg>'
        )
        return "".join(parts)
    scale = _ValueScale.around(values, reference=baseline, band=_band(metric, baseline))
    parts.append(_metric_grid(scale))
    if baseline is not None:
        parts.append(_baseline_line(metric, baseline, scale))
    if not points:
        none_yet = _("no field run yet")
        parts.append(
            f'<text x="{METRIC_LEFT + METRIC_PLOT_W / 2:.0f}" y="{METRIC_TOP + METRIC_PLOT_H - 8}" '
            f'text-anchor="middle" font-size="10" fill="#57606a">{escape(none_yet)}</text></svg>'
        )
        return "".join(parts)
    dates = _DateScale(points[0][0].started_at, points[-1][0].started_at)
    parts.append(_date_labels(dates))
    parts.append(_metric_points(points, metric, unit=unit, baseline=baseline, scale=scale, dates=dates))
    parts.append(_newest_fallen_label(points[-1], metric, scale=scale, dates=dates))
    parts.append("</svg>")
    return "".join(parts)


def _metric_header(
    gpu: GpuHistory,
    metric: str,
    *,
    name: str,
    unit: str,
    baseline: float | None,
    points: Sequence[MetricPoint],
) -> str:
    """The chart's opening: its summary in words (aria-label and title), white ground and heading."""
    newest = points[-1] if points else None
    summary = _("GPU %(index)s (%(serial)s), %(name)s in %(unit)s: baseline %(baseline)s") % {
        "index": gpu.index,
        "serial": gpu.serial or "—",
        "name": name,
        "unit": unit,
        "baseline": _figure(metric, baseline),
    }
    if newest is not None:
        summary += ", " + _("newest %(value)s on %(date)s") % {
            "value": _figure(metric, newest[1]),
            "date": _day(newest[0].started_at),
        }
    label = escape(summary)
    css = f"health-metric health-{metric.replace('_', '-')}"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {METRIC_W} {METRIC_H}" width="{METRIC_W}" '
        f'height="{METRIC_H}" role="img" aria-label="{label}" class="{css}" data-metric="{metric}">'
        f"<title>{label}</title>"
        f'<rect x="0" y="0" width="{METRIC_W}" height="{METRIC_H}" fill="#fff"/>'
        f'<text x="6" y="15" font-size="12" font-weight="600">{escape(f"{name} ({unit})")}</text>'
    )


def _metric_grid(scale: _ValueScale) -> str:
    """The value ticks with their grid lines, then the two axes."""
    parts = []
    tick = scale.low
    while tick <= scale.high + scale.step / 2:
        ty = scale.y(tick)
        parts.append(
            f'<line x1="{METRIC_LEFT}" x2="{METRIC_LEFT + METRIC_PLOT_W}" y1="{ty:.1f}" y2="{ty:.1f}" '
            'stroke="#eee"/>'
            f'<text x="{METRIC_LEFT - 4}" y="{ty + 4:.1f}" text-anchor="end" font-size="10">'
            f"{escape(_tick(tick))}</text>"
        )
        tick += scale.step
    axis_y = METRIC_TOP + METRIC_PLOT_H
    parts.append(
        f'<line x1="{METRIC_LEFT}" x2="{METRIC_LEFT + METRIC_PLOT_W}" y1="{axis_y}" y2="{axis_y}" '
        'stroke="#333"/>'
        f'<line x1="{METRIC_LEFT}" x2="{METRIC_LEFT}" y1="{METRIC_TOP}" y2="{axis_y}" stroke="#333"/>'
    )
    return "".join(parts)


def _baseline_line(metric: str, baseline: float, scale: _ValueScale) -> str:
    """The baseline as a dashed line across the plot, labelled with its figure."""
    by = scale.y(baseline)
    base_label = _("baseline %(value)s") % {"value": _figure(metric, baseline)}
    return (
        f'<line class="baseline" x1="{METRIC_LEFT}" x2="{METRIC_LEFT + METRIC_PLOT_W}" y1="{by:.1f}" '
        f'y2="{by:.1f}" stroke="#1f2328" stroke-width="1.5" stroke-dasharray="6 3">'
        f"<title>{escape(base_label)}</title></line>"
        f'<text x="{METRIC_LEFT + METRIC_PLOT_W}" y="{by - 5:.1f}" text-anchor="end" font-size="10" '
        f'fill="#1f2328" stroke="#fff" stroke-width="3" paint-order="stroke">'
        f"{escape(base_label)}</text>"
    )


def _date_labels(dates: _DateScale) -> str:
    """The first field run's date under the axis' left end, the last one's under its right end."""
    axis_y = METRIC_TOP + METRIC_PLOT_H
    return f'<text x="{METRIC_LEFT}" y="{axis_y + 14}" font-size="10">{escape(_day(dates.first))}</text>' + (
        f'<text x="{METRIC_LEFT + METRIC_PLOT_W}" y="{axis_y + 14}" text-anchor="end" font-size="10">'
        f"{escape(_day(dates.last))}</text>"
        if dates.span > 0
        else ""
    )


def _metric_points(
    points: Sequence[MetricPoint],
    metric: str,
    *,
    unit: str,
    baseline: float | None,
    scale: _ValueScale,
    dates: _DateScale,
) -> str:
    """The field runs joined by a thin line, each a point with its figure (and change) in words."""
    parts = []
    if len(points) > 1:
        line = " L".join(f"{dates.x(p.started_at):.1f},{scale.y(v):.1f}" for p, v in points if v is not None)
        parts.append(f'<path d="M{line}" fill="none" stroke="#8c959f" stroke-width="1"/>')
    # Many points (a year of weekly checks) are drawn smaller, so that they stay points and not a bar.
    dot = max(1.4, min(3.5, (METRIC_PLOT_W - 20) / max(len(points), 1) / 2.6))
    for point, value in points:
        if value is None:
            continue
        fallen = metric in point.fallen
        px, py = dates.x(point.started_at), scale.y(value)
        words = f"{_purpose_label(point.purpose)} {_day(point.started_at)}: {_figure(metric, value)} {unit}"
        if baseline:
            words += " (" + _("baseline %(value)s") % {"value": _figure(metric, baseline)}
            change = 100 * (value - baseline) / baseline
            words += f", {'+' if change >= 0 else '−'}{number_format(abs(round(change, 1)), 1)} %)"
        if fallen:
            words += " · " + _("drift fault")
        colour, r = (FAIL_COLOUR, 5.0) if fallen else (POINT_COLOUR, dot)
        shape = (
            f'<rect x="{px - r:.1f}" y="{py - r:.1f}" width="{2 * r}" height="{2 * r}" fill="{colour}"/>'
            if point.purpose == ReportPurpose.POST_REPAIR
            else f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{r}" fill="{colour}"/>'
        )
        parts.append(
            f'<g class="point{" fallen" if fallen else ""}" data-run="{point.run_id}" '
            f'data-value="{_raw(metric, value)}"><title>{escape(words)}</title>{shape}</g>'
        )
    return "".join(parts)


def _newest_fallen_label(newest: MetricPoint, metric: str, *, scale: _ValueScale, dates: _DateScale) -> str:
    """The newest figure written beside its point where a drift fault marks it; "" otherwise."""
    point, value = newest
    if metric not in point.fallen or value is None:
        return ""
    nx, ny = dates.x(point.started_at), scale.y(value)
    anchor = "end" if nx > METRIC_LEFT + METRIC_PLOT_W / 2 else "start"
    dx = -8 if anchor == "end" else 8
    return (
        f'<text x="{nx + dx:.1f}" y="{ny + 4:.1f}" text-anchor="{anchor}" font-size="11" font-weight="700" '
        f'fill="{FAIL_COLOUR}">{_figure(metric, value)}</text>'
    )
