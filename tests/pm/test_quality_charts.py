"""The quality page's chart (pm.quality.charts): months without a failure are drawn at zero, across a year's
end; each lot's line is told apart by more than colour; labels are escaped; no point, no chart."""

from __future__ import annotations

from datetime import date

from pm.quality.charts import Series, failures_svg, month_table, months_of


def test_every_month_between_the_first_and_last_failure_is_a_row_at_zero_where_none_failed():
    series = [
        Series("Lot A", [(date(2025, 11, 1), 2), (date(2026, 2, 1), 1)]),
        Series("Lot B", [(date(2025, 12, 1), 3)]),
    ]
    assert months_of(series) == [date(2025, 11, 1), date(2025, 12, 1), date(2026, 1, 1), date(2026, 2, 1)]
    assert month_table(series) == [
        (date(2025, 11, 1), [2, 0]),
        (date(2025, 12, 1), [0, 3]),
        (date(2026, 1, 1), [0, 0]),
        (date(2026, 2, 1), [1, 0]),
    ]


def test_the_svg_has_a_line_a_marker_shape_and_a_dash_per_lot_and_escapes_labels():
    series = [
        Series("Lot <A>", [(date(2026, 1, 1), 1), (date(2026, 3, 1), 2)]),
        Series("Lot B", [(date(2026, 2, 1), 1)]),
    ]
    svg = failures_svg(series)
    assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and svg.endswith("</svg>")
    assert 'role="img"' in svg and 'aria-label="Failed units per month, per lot"' in svg
    assert svg.count('<g class="series"') == 2
    assert "Lot &lt;A&gt;" in svg and "<A>" not in svg
    first, second = svg.split('data-series="0"', 1)[1], svg.split('data-series="1"', 1)[1]
    assert "<circle" in first.split("</g>", 1)[0] and "stroke-dasharray" not in first.split("</g>", 1)[0]
    assert "<rect" in second.split("</g>", 1)[0] and 'stroke-dasharray="9 4"' in second.split("</g>", 1)[0]
    for month in ("2026-01", "2026-02", "2026-03"):
        assert f">{month}</text>" in svg


def test_no_failure_no_chart():
    assert failures_svg([]) == "" and failures_svg([Series("Lot A", [])]) == ""
    assert month_table([Series("Lot A", [])]) == []
