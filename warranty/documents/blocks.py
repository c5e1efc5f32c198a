"""The building blocks of the pack's documents: tables (chunked, or `GridRows` drawn straight onto the
canvas), key/value pairs, the QR code and the telemetry charts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from django.utils.translation import gettext as _
from reportlab.graphics.barcode.qr import QrCodeWidget
from reportlab.graphics.charts.lineplots import LinePlot
from reportlab.graphics.shapes import Drawing, String
from reportlab.lib import colors
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.platypus import Flowable, Paragraph, Table, TableStyle

from burnin.selectors import GpuSeries
from warranty.documents.frame import FAIL, GRID, HEAD, _esc, _styles
from werkbank.pdf_fonts import FONT, FONT_BOLD

#: Rows per chunk of a table of paragraphs (`_table`, for cells that wrap): a chunk rarely spans a page,
#: so reportlab seldom splits one (a split re-measures every remaining row). Long tables of short facts
#: are `GridRows`, which bench/bench_handover.py compares with one split Table.
TABLE_CHUNK = 40


def _table(
    header: Sequence[str],
    rows: Sequence[Sequence[Any]],
    widths: Sequence[float],
    *,
    highlight: Callable[[int, Sequence[Any]], colors.Color | None] | None = None,
    chunk: int = TABLE_CHUNK,
) -> list[Flowable]:
    """A table as chunks of `chunk` rows, each repeating the header (one chunk never spans pages)."""
    st = _styles()
    head = [Paragraph(f"<b>{_esc(text)}</b>", st.cell) for text in header]
    cells = [[c if isinstance(c, Flowable) else Paragraph(_esc(c), st.cell) for c in row] for row in rows]
    if not cells:
        return [Paragraph(_esc(_("None.")), st.body)]
    style = [
        ("GRID", (0, 0), (-1, -1), 0.4, GRID),
        ("BACKGROUND", (0, 0), (-1, 0), HEAD),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("TOPPADDING", (0, 0), (-1, -1), 1.5),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
    ]
    parts: list[Flowable] = []
    for start in range(0, len(cells), chunk):
        part = cells[start : start + chunk]
        chunk_style = list(style)
        if highlight is not None:
            for offset, row in enumerate(rows[start : start + chunk], start=1):
                color = highlight(start + offset - 1, row)
                if color is not None:
                    chunk_style.append(("TEXTCOLOR", (0, offset), (-1, offset), color))
        table = Table([head, *part], colWidths=[w * mm for w in widths], repeatRows=1)
        table.setStyle(TableStyle(chunk_style))
        parts.append(table)
    return parts


class GridRows(Flowable):
    """A table of one-line rows drawn straight onto the canvas: a header, then rows of equal height, each
    cell clipped with "…" to its column, except the columns in `whole` (serials, connector names): those are
    never cut, but condensed horizontally to fit, so the text layer still holds every character and a search
    for a serial finds it. It splits between any two rows (repeating the header) without
    measuring anything again, which is what makes long tables cheap: reportlab's Table measures every cell
    of every row on each split (bench/bench_handover.py compares the two). For tables whose cells are
    short facts (serials, dates, terms); prose with wrapping stays in `_table`."""

    def __init__(
        self,
        header: Sequence[str],
        rows: Sequence[Sequence[Any]],
        widths: Sequence[float],
        *,
        font_size: float = 7.5,
        emphasis: Callable[[Sequence[str]], bool] | None = None,
        as_text: bool = True,
        whole: frozenset[int] = frozenset(),
    ) -> None:
        super().__init__()
        self.whole = whole
        self.header = [str(text) for text in header]
        # A split hands on rows that are text already: converting them again would make a long table's
        # pages cost the square of its rows.
        self.rows = [["" if c is None else str(c) for c in row] for row in rows] if as_text else rows
        self.widths = list(widths)  # points
        self.font_size = font_size
        self.row_height = font_size * 1.55
        self.emphasis = emphasis

    def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
        self.width = sum(self.widths)
        self.height = (len(self.rows) + 1) * self.row_height
        return self.width, self.height

    def split(self, available_width: float, available_height: float) -> list[Flowable]:
        fits = int(available_height // self.row_height) - 1  # less the header
        if fits < 1 or fits >= len(self.rows):
            return [] if fits < 1 else [self]
        first, rest = self.rows[:fits], self.rows[fits:]
        return [
            GridRows(
                self.header,
                part,
                self.widths,
                font_size=self.font_size,
                emphasis=self.emphasis,
                as_text=False,
                whole=self.whole,
            )
            for part in (first, rest)
        ]

    def draw(self) -> None:
        canvas, h, size = self.canv, self.row_height, self.font_size
        width, height = sum(self.widths), self.height
        canvas.setFillColor(HEAD)
        canvas.rect(0, height - h, width, h, stroke=0, fill=1)
        canvas.setStrokeColor(GRID)
        canvas.setLineWidth(0.4)
        lines = [(0, height - n * h, width, height - n * h) for n in range(len(self.rows) + 2)]
        x = 0.0
        for column in [0.0, *self.widths]:
            x += column
            lines.append((x, 0, x, height))
        canvas.lines(lines)
        # One text object for the whole table: a drawString per cell would start one each.
        text = canvas.beginText()
        for number, row in enumerate([self.header, *self.rows]):
            baseline = height - (number + 1) * h + (h - size) / 2 + 1.2
            bold = number == 0 or (self.emphasis is not None and self.emphasis(row))
            font = FONT_BOLD if bold else FONT
            text.setFont(font, size)
            text.setFillColor(FAIL if number and bold else colors.black)
            x = 0.0
            for index, (cell, column) in enumerate(zip(row, self.widths, strict=False)):
                text.setTextOrigin(x + 2, baseline)
                if index in self.whole:
                    _condensed(text, cell, column - 4, font, size)
                else:
                    text.textOut(_fit(cell, column - 4, font, size))
                x += column
        canvas.drawText(text)


def _condensed(text: Any, cell: str, room: float, font: str, size: float) -> None:
    """Write `cell` whole, condensed horizontally when it is wider than `room`."""
    width = pdfmetrics.stringWidth(cell, font, size)
    if width <= room:
        text.textOut(cell)
        return
    text.setHorizScale(100 * room / width)
    text.textOut(cell)
    text.setHorizScale(100)


@lru_cache(maxsize=20_000)
def _fit(text: str, room: float, font: str, size: float) -> str:
    """`text`, cut with "…" to fit `room` points. Cached: a long table repeats most of its cells (the part,
    the term, the dates), and measuring a TrueType string is reportlab's slowest step here."""
    if pdfmetrics.stringWidth(text, font, size) <= room:
        return text
    while text and pdfmetrics.stringWidth(text + "…", font, size) > room:
        text = text[: max(len(text) - max(len(text) // 8, 1), 0)]
    return text + "…"


def _pairs(rows: Sequence[tuple[str, Any]], widths: tuple[float, float] = (45, 129)) -> Table:
    """A two-column key/value table without a header."""
    st = _styles()
    data = [[Paragraph(f"<b>{_esc(k)}</b>", st.cell), Paragraph(_esc(v), st.cell)] for k, v in rows]
    table = Table(data, colWidths=[w * mm for w in widths])
    table.setStyle(
        TableStyle(
            [
                ("LINEBELOW", (0, 0), (-1, -1), 0.3, GRID),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 1.5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
            ]
        )
    )
    return table


def _qr(text: str, size_mm: float = 34) -> Drawing:
    widget = QrCodeWidget(text, barLevel="M")
    x0, y0, x1, y1 = widget.getBounds()
    size = size_mm * mm
    drawing = Drawing(size, size, transform=[size / (x1 - x0), 0, 0, size / (y1 - y0), 0, 0])
    drawing.add(widget)
    return drawing


def _chart(series: GpuSeries, *, values: list[float | None], title: str, unit: str) -> Drawing:
    """One line chart over the run's span (hours); a gap where a bucket has no value."""
    width, height = 84 * mm, 42 * mm
    drawing = Drawing(width, height)
    points = [(t / 3600, v) for t, v in zip(series.t_s, values, strict=True) if v is not None]
    drawing.add(String(2, height - 9, f"{title} ({unit})", fontName=FONT_BOLD, fontSize=7.5))
    if len(points) < 2:
        drawing.add(String(2, height / 2, _("No telemetry."), fontName=FONT, fontSize=7.5))
        return drawing
    plot = LinePlot()
    plot.x, plot.y = 28, 18
    plot.width, plot.height = width - 36, height - 32
    plot.data = [points]
    plot.lines[0].strokeColor = colors.HexColor("#1f5f99")
    plot.lines[0].strokeWidth = 0.6
    plot.joinedLines = 1
    lows = [v for _, v in points]
    plot.yValueAxis.valueMin = min(lows) - 2
    plot.yValueAxis.valueMax = max(lows) + 2
    for axis in (plot.xValueAxis, plot.yValueAxis):
        axis.labels.fontName = FONT
        axis.labels.fontSize = 6.5
        axis.strokeWidth = 0.4
    plot.xValueAxis.valueMin = 0
    plot.xValueAxis.valueMax = max(points[-1][0], 0.01)
    plot.yValueAxis.labelTextFormat = "%.0f"
    plot.xValueAxis.labelTextFormat = "%.0f"
    drawing.add(plot)
    return drawing
