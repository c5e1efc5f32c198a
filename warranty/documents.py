"""The handover pack's documents: the PDF (reportlab platypus), the ZIP with its manifest, and the warranty
certificate of an order. Pure rendering: the data comes from `warranty.selectors.pack_data`, the storing and
the status from `warranty.services.packs`.

The PDF follows issue #12's order: cover (with a QR code of the asset tag), configuration and every serial
by connector, PCIe per GPU, the burn-in summary, temperature and power charts per GPU (downsampled by
burn-in's selector, drawn as vector graphics), every finding with the waived ones and their reasons,
interrupted stages, blacklisted connectors ("never to be used"), rack placement and circuits, network and
BMC addresses (never a secret: the BMC credentials are not decrypted, the pack only says whether they were
handed over), monitoring access (where and under which account, never a password), platform onboarding,
the warranty per serial, and the sign-off. Every page carries "page n of m" and the document revision.

Text is real text in Bitstream Vera (bundled with reportlab, embedded as a subset), which has every glyph
of German (ä ö ü ß) and the units used here (°, ×); the standard PDF fonts would need WinAnsi and cover
less. The strings go through Django's gettext under `translation.override(language)`.

The ZIP holds `handover.pdf`, `telemetry.csv` (every sample of the run, as stored), `probe-report.json`
(the raw report the probe uploaded, uncompressed), `manifest.json`, which lists each of the others with
its SHA-256 and size, and names the issuer, server, revision, language and generation time, and
`manifest.sig.json`, the Ed25519 signature over the manifest's exact bytes (warranty/signing.py), so that
whoever rewrites a file and re-hashes the manifest is caught. `verify_zip` checks a ZIP's files against its
manifest; `check_pack` (behind `manage.py verify-pack` and the public page /verify/) checks the signature
too. Manifests of format 1 come from before packs were signed: they have no signature and say so.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache, lru_cache
from pathlib import Path
from typing import IO, Any

import reportlab
from django.utils import formats, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext
from reportlab.graphics.barcode.qr import QrCodeWidget
from reportlab.graphics.charts.lineplots import LinePlot
from reportlab.graphics.shapes import Drawing, String
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import (
    CondPageBreak,
    Flowable,
    KeepTogether,
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

from builds.choices import ConnectorKind
from burnin.choices import StageStatus
from burnin.gates import PASSED_BURN_IN
from burnin.hardware import has_serial
from burnin.selectors import GpuSeries
from inventory.choices import PartCategory
from warranty.choices import RecordKind
from warranty.selectors import PackData, WarrantyRow
from warranty.signing import PublicKey, SignatureCheck, SignatureStatus, sign, verify

FONT, FONT_BOLD = "WerkbankVera", "WerkbankVera-Bold"
PDF_NAME, CSV_NAME, REPORT_NAME, MANIFEST_NAME = (
    "handover.pdf",
    "telemetry.csv",
    "probe-report.json",
    "manifest.json",
)
SIGNATURE_NAME = "manifest.sig.json"
#: 2: the manifest is signed (SIGNATURE_NAME); 1: packs made before signing, which have no signature.
MANIFEST_FORMAT = 2
ISSUER = "Werkbank"
#: A manifest lists a handful of files: anything larger is not one, and is not parsed.
MAX_MANIFEST_BYTES = 1024 * 1024
#: Rows per chunk of a table of paragraphs (`_table`, for cells that wrap): a chunk rarely spans a page,
#: so reportlab seldom splits one (a split re-measures every remaining row). Long tables of short facts
#: are `GridRows`, which bench/bench_handover.py compares with one split Table.
TABLE_CHUNK = 40
GRID = colors.HexColor("#b8bec6")
HEAD = colors.HexColor("#e8ecf0")
MUTED = colors.HexColor("#555b63")
WARN = colors.HexColor("#a15c00")
FAIL = colors.HexColor("#b00020")


#: The labels of builds' connector kinds and inventory's part categories, translated for the pack (their
#: choices are English: the API and the admin speak English).
CONNECTOR_KINDS = {
    ConnectorKind.CHASSIS: gettext_lazy("Chassis"),
    ConnectorKind.BOARD: gettext_lazy("Mainboard mount"),
    ConnectorKind.CPU_SOCKET: gettext_lazy("CPU socket"),
    ConnectorKind.PCIE_SLOT: gettext_lazy("PCIe slot"),
    ConnectorKind.RISER_PORT: gettext_lazy("Riser port"),
    ConnectorKind.GPU_POWER: gettext_lazy("GPU power cable"),
    ConnectorKind.DIMM_SLOT: gettext_lazy("DIMM slot"),
    ConnectorKind.NVME_BAY: gettext_lazy("NVMe bay"),
    ConnectorKind.PSU_BAY: gettext_lazy("PSU bay"),
}
PART_CATEGORIES = {
    PartCategory.GPU: gettext_lazy("GPU"),
    PartCategory.CPU: gettext_lazy("CPU"),
    PartCategory.MEMORY: gettext_lazy("Memory"),
    PartCategory.STORAGE: gettext_lazy("Storage"),
    PartCategory.MOTHERBOARD: gettext_lazy("Motherboard"),
    PartCategory.CHASSIS: gettext_lazy("Chassis"),
    PartCategory.PSU: gettext_lazy("Power supply"),
    PartCategory.NIC: gettext_lazy("Network card"),
    PartCategory.RISER: gettext_lazy("Riser / cable"),
    PartCategory.COOLING: gettext_lazy("Cooling"),
    PartCategory.OTHER: gettext_lazy("Other"),
}
#: The other English labels the pack prints, by their stored value.
LABELS = {
    "pass": gettext_lazy("Pass"),
    "fail": gettext_lazy("Fail"),
    "incomplete": gettext_lazy("Incomplete"),
    "unverified": gettext_lazy("Unverified"),
    "verified": gettext_lazy("Verified"),
    "deverified": gettext_lazy("Deverified"),
    "colocation": gettext_lazy("Colocation"),
    "customer_room": gettext_lazy("Customer's own room"),
    "front": gettext_lazy("Front"),
    "rear": gettext_lazy("Rear"),
    "measured": gettext_lazy("measured at the outlet"),
    "burn_in": gettext_lazy("burn-in GPU power + host overhead"),
    "budget": gettext_lazy("configuration budget (TDP)"),
}


def _label(value: str, fallback: str) -> str:
    return str(LABELS.get(value, fallback))


@cache
def _fonts() -> tuple[str, str]:
    """Register Vera (reportlab's bundled TrueType fonts) once per process."""
    folder = Path(reportlab.__file__).parent / "fonts"
    pdfmetrics.registerFont(TTFont(FONT, str(folder / "Vera.ttf")))
    pdfmetrics.registerFont(TTFont(FONT_BOLD, str(folder / "VeraBd.ttf")))
    pdfmetrics.registerFontFamily(FONT, normal=FONT, bold=FONT_BOLD, italic=FONT, boldItalic=FONT_BOLD)
    return FONT, FONT_BOLD


@dataclass(frozen=True)
class Styles:
    body: ParagraphStyle
    small: ParagraphStyle
    cell: ParagraphStyle
    h1: ParagraphStyle
    h2: ParagraphStyle
    title: ParagraphStyle
    right: ParagraphStyle


@cache
def _styles() -> Styles:
    regular, bold = _fonts()
    body = ParagraphStyle("body", fontName=regular, fontSize=9, leading=12)
    return Styles(
        body=body,
        small=ParagraphStyle("small", parent=body, fontSize=7.5, leading=9.5, textColor=MUTED),
        cell=ParagraphStyle("cell", parent=body, fontSize=7.5, leading=9.5),
        h1=ParagraphStyle(
            "h1", parent=body, fontName=bold, fontSize=13, leading=17, spaceBefore=4, spaceAfter=6
        ),
        h2=ParagraphStyle(
            "h2", parent=body, fontName=bold, fontSize=10, leading=13, spaceBefore=6, spaceAfter=3
        ),
        title=ParagraphStyle("title", parent=body, fontName=bold, fontSize=22, leading=27, spaceAfter=10),
        right=ParagraphStyle("right", parent=body, alignment=TA_RIGHT),
    )


def _esc(value: Any) -> str:
    """Text for a Paragraph: its mini-markup escaped."""
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _num(value: float | int | None, digits: int = 1, unit: str = "") -> str:
    """A number in the active language's format ('1.234,5' in German), '—' when unknown."""
    if value is None:
        return "—"
    text = formats.number_format(value, decimal_pos=digits, use_l10n=True, force_grouping=True)
    return f"{text} {unit}".rstrip()


def _date(value: date | datetime | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return value.isoformat()


# --- page frame --------------------------------------------------------------------------------------------


def _numbered_canvas(footer: Callable[[int, int], str]) -> type[Canvas]:
    """A canvas that holds its pages back until the end, so that each can say "page n of m"."""

    class NumberedCanvas(Canvas):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._saved: list[dict[str, Any]] = []

        def showPage(self) -> None:
            self._saved.append(dict(self.__dict__))
            self._startPage()

        def save(self) -> None:
            total = len(self._saved)
            for state in self._saved:
                self.__dict__.update(state)
                self.setFont(FONT, 7.5)
                self.setFillColor(MUTED)
                self.drawString(18 * mm, 10 * mm, footer(self._pageNumber, total))
                super().showPage()
            super().save()

    return NumberedCanvas


def _render(story: list[Flowable], *, title: str, footer: Callable[[int, int], str]) -> bytes:
    buffer = io.BytesIO()
    document = SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=16 * mm,
        bottomMargin=18 * mm,
        title=title,
        author="Werkbank",
        creator="Werkbank",
        invariant=True,  # no creation time or random id: the same data gives the same bytes
    )
    document.build(story, canvasmaker=_numbered_canvas(footer))
    return buffer.getvalue()


# --- building blocks ---------------------------------------------------------------------------------------


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


# --- the pack's sections ----------------------------------------------------------------------------


def _cover(data: PackData, *, revision: int, generated_at: datetime) -> list[Flowable]:
    st = _styles()
    server, order = data.server, data.order
    run = data.run
    facts = [
        (_("Customer"), order.customer.name),
        (pgettext("a customer's order", "Order"), order.reference),
        (_("Configuration"), order.configuration.name),
        (_("Server"), server.hostname),
        (_("Hostname"), server.hostname),
        (_("Asset tag"), server.asset_tag),
        (_("Chassis serial"), server.chassis_serial or "—"),
        (_("Ordered"), _date(order.created_at.date())),
        (_("Burn-in"), f"{_date(run.started_at)} – {_date(run.ended_at)}" if run else "—"),
        (_("Placed in the rack"), _date(data.placement.placed_at) if data.placement else "—"),
        (_("Warranty term"), _("%(months)s months") % {"months": order.warranty_months}),
        (_("Document revision"), str(revision)),
        (_("Generated"), _date(generated_at)),
    ]
    qr = Table(
        [[_qr(server.asset_tag)], [Paragraph(_esc(server.asset_tag), st.small)]],
        colWidths=[40 * mm],
    )
    cover = Table([[_pairs(facts, (38, 92)), qr]], colWidths=[132 * mm, 42 * mm])
    cover.setStyle(TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP")]))
    return [
        Paragraph(_esc(_("Handover pack")), st.title),
        Paragraph(_esc(f"{server.hostname} · {order.customer.name}"), st.h2),
        Spacer(1, 4 * mm),
        cover,
        Spacer(1, 6 * mm),
        Paragraph(
            _esc(
                _(
                    "This pack documents the server as it was built, tested and placed: every serial by "
                    "connector, the burn-in results, the rack placement, the addresses and the warranty "
                    "per serial. It contains no passwords."
                )
            ),
            st.body,
        ),
    ]


def _configuration(data: PackData) -> list[Flowable]:
    st = _styles()
    lines = [
        (
            line.quantity,
            str(PART_CATEGORIES.get(line.part.category, line.part.get_category_display())),
            f"{line.part.manufacturer} {line.part.name}",
            line.part.mpn,
        )
        for line in data.configuration_lines
    ]
    states = {"occupied": _("installed"), "free": _("free"), "blacklisted": _("blacklisted")}
    cells = [
        (
            c["name"],
            str(CONNECTOR_KINDS.get(c["kind"], c["kind_label"])),
            c["serial"] or "—",
            c["part_mpn"] or "—",
            states[c["state"]],
        )
        for c in data.connectors
    ]
    return [
        Paragraph(_esc(_("Configuration and serials")), st.h1),
        Paragraph(_esc(_("Bill of materials")), st.h2),
        *_table([_("Qty"), _("Category"), _("Part"), _("MPN")], lines, (12, 28, 90, 44)),
        Paragraph(_esc(_("Every serial by connector")), st.h2),
        GridRows(
            [_("Connector"), _("Kind"), _("Serial"), _("Part (MPN)"), _("State")],
            cells,
            [w * mm for w in (28, 32, 46, 44, 24)],
            emphasis=lambda row: row[4] == states["blacklisted"],
            whole=frozenset({0, 2}),
        ),
    ]


def _pcie(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("PCIe per GPU")), st.h1)]
    if data.detail is None:
        return [*flowables, Paragraph(_esc(_("No burn-in run was recorded.")), st.body)]
    rows = []
    for row in data.detail.gpu_rows:
        result = row.result
        rows.append(
            (
                result.index,
                _gpu_name(result),
                row.expected_link,
                row.load_link,
                _num(result.h2d_gbps, 1, "GB/s"),
                _num(result.d2h_gbps, 1, "GB/s"),
            )
        )

    def degraded(_i: int, row: Sequence[Any]) -> colors.Color | None:
        return FAIL if row[2] != row[3] and row[3] != "—" else None

    return [
        *flowables,
        Paragraph(
            _esc(_("Expected link against the link measured under load, with the host-to-device bandwidth.")),
            st.small,
        ),
        *_table(
            [_("GPU"), _("Serial"), _("Expected"), _("Measured"), _("H2D"), _("D2H")],
            rows,
            (12, 44, 28, 28, 31, 31),
            highlight=degraded,
        ),
    ]


def _gpu_name(result: Any) -> str:
    """A GPU by its serial; a card without one (GeForce) is bound by its UUID, and named by it."""
    return result.serial if has_serial(result.serial) else (result.uuid or "—")


def _gate_label(data: PackData) -> str:
    """What the gate decided on the run the pack prints: passed, passed on waivers, or not yet."""
    if data.server.status not in PASSED_BURN_IN:
        return _("Not passed yet")
    if data.detail is not None and any(
        finding.waived for _key, _name, group in data.detail.findings_by_severity for finding in group
    ):
        return _("Passed, with findings waived by a project manager (below, with their reasons)")
    return pgettext("burn-in result", "Passed")


def _burnin(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Burn-in summary")), st.h1)]
    run, detail = data.run, data.detail
    if run is None or detail is None:
        return [*flowables, Paragraph(_esc(_("No burn-in run was recorded.")), st.body)]
    results = [row.result for row in detail.gpu_rows]
    hours = ((run.ended_at - run.started_at).total_seconds() / 3600) if run.ended_at else None
    matmuls = sum(r.matmuls or 0 for r in results)
    errors = sum((r.mismatches or 0) + (r.nans or 0) for r in results)
    peaks = [r.peak_temp_c for r in results if r.peak_temp_c is not None]
    margins = [r.min_margin_c for r in results if r.min_margin_c is not None]
    powers = [r.mean_power_w for r in results if r.mean_power_w is not None]
    summary = [
        (_("Run"), f"{_date(run.started_at)} – {_date(run.ended_at)}"),
        (_("Duration"), _num(hours, 1, "h")),
        (
            _("Full load under all GPUs"),
            _num(run.full_load_h, 1, "h") if run.full_load_s is not None else "—",
        ),
        (_("Burn-in promised"), _num(run.target_h, 0, "h") if run.target_s else "—"),
        (_("Result of the analysis"), _label(run.result, run.get_result_display())),
        (_("Burn-in gate"), _gate_label(data)),
        (_("Matmuls checked"), _num(matmuls, 0)),
        (_("Compute errors (mismatches + NaN)"), _num(errors, 0)),
        (_("Peak temperature"), _num(max(peaks), 1, "°C") if peaks else "—"),
        (_("Lowest thermal margin"), _num(min(margins), 1, "°C") if margins else "—"),
        (_("Mean board power, all GPUs"), _num(sum(powers), 0, "W") if powers else "—"),
        (_("Probe"), f"{run.probe_version} · {_('rules')} {run.rules_version}"),
    ]
    rows = [
        (
            r.index,
            _gpu_name(r),
            _num(r.tflops, 1),
            _num(r.vram_gbps, 0),
            _num(r.peak_temp_c, 1),
            _num(r.min_margin_c, 1),
            _num(r.mean_power_w, 0),
            row.errors or "—",
        )
        for row, r in zip(detail.gpu_rows, results, strict=True)
    ]
    return [
        *flowables,
        _pairs(summary, (62, 112)),
        Spacer(1, 3 * mm),
        *_table(
            [
                _("GPU"),
                _("Serial"),
                _("TFLOPS"),
                _("VRAM GB/s"),
                _("Peak °C"),
                _("Margin °C"),
                _("Power W"),
                _("Errors"),
            ],
            rows,
            (11, 41, 19, 21, 19, 20, 19, 24),
        ),
    ]


def _charts(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Temperature and power per GPU")), st.h1)]
    telemetry = data.telemetry
    if telemetry is None or not telemetry.series:
        return [*flowables, Paragraph(_esc(_("No telemetry was recorded.")), st.body)]
    flowables.append(
        Paragraph(
            _esc(
                _(
                    "Means over %(seconds)s s buckets of the run's samples, over the hours since its start; "
                    "every sample is in %(csv)s."
                )
                % {"seconds": _num(telemetry.interval_s, 0), "csv": CSV_NAME}
            ),
            st.small,
        )
    )
    for gpu_index, series in sorted(telemetry.series.items()):
        pair = Table(
            [
                [
                    _chart(
                        series,
                        values=series.temp_c,
                        title=_("GPU %(n)s temperature") % {"n": gpu_index},
                        unit="°C",
                    ),
                    _chart(
                        series, values=series.power_w, title=_("GPU %(n)s power") % {"n": gpu_index}, unit="W"
                    ),
                ]
            ],
            colWidths=[87 * mm, 87 * mm],
        )
        flowables.append(pair)
    return flowables


def _findings(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Findings")), st.h1)]
    if data.detail is None:
        return [*flowables, Paragraph(_esc(_("No burn-in run was recorded.")), st.body)]
    not_waived = _("Not waived")
    labels = {"fail": _("Fail"), "warn": _("Warning"), "info": _("Info")}
    rows = []
    for key, _label, members in data.detail.findings_by_severity:
        label = labels.get(key, key)
        for finding in members:
            waiver = (
                _("Waived on %(date)s: %(reason)s")
                % {"date": _date(finding.waived_at.date()), "reason": finding.waiver_reason}
                if finding.waived
                else not_waived
            )
            rows.append((label, finding.subject_text, finding.text, waiver))

    def color(_i: int, row: Sequence[Any]) -> colors.Color | None:
        return FAIL if row[3] == not_waived and row[0] == labels["fail"] else None

    return [
        *flowables,
        Paragraph(_esc(_("Every finding of the burn-in analysis, with the waived ones and why.")), st.small),
        *_table(
            [_("Severity"), _("Subject"), _("Finding"), _("Waiver")], rows, (17, 27, 75, 55), highlight=color
        ),
    ]


def _stages(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Interrupted stages")), st.h1)]
    if data.detail is None:
        return [*flowables, Paragraph(_esc(_("No burn-in run was recorded.")), st.body)]
    incomplete = data.detail.incomplete_stages
    if not incomplete:
        return [*flowables, Paragraph(_esc(_("Every stage of the burn-in ran to its end.")), st.body)]
    for stage in incomplete:
        text = (
            _("The stage “%(name)s” was interrupted and did not finish: %(reason)s")
            if stage.status == StageStatus.INTERRUPTED
            else _("The stage “%(name)s” failed: %(reason)s")
        ) % {"name": stage.name, "reason": stage.reason or _("no reason was recorded")}
        flowables.append(Paragraph(_esc(text), st.body))
    return flowables


def _blacklist(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Blacklisted connectors")), st.h1)]
    if not data.blacklist:
        return [*flowables, Paragraph(_esc(_("No connector of this server is blacklisted.")), st.body)]
    flowables.append(
        Paragraph(
            f"<b>{_esc(_('These connectors are never to be used, for the whole life of the machine.'))}</b>",
            st.body,
        )
    )
    rows = [
        (entry.connector.name, entry.reason, _date(entry.created_at.date()), _("never to be used"))
        for entry in data.blacklist
    ]
    return [
        *flowables,
        Spacer(1, 2 * mm),
        *_table([_("Connector"), _("Reason"), _("Blacklisted on"), _("Use")], rows, (28, 90, 26, 30)),
    ]


def _placement(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Rack placement and circuits")), st.h1)]
    placement = data.placement
    if placement is None:
        return [*flowables, Paragraph(_esc(_("The server has no rack placement.")), st.body)]
    rack, site = placement.rack, placement.rack.site
    facts = [
        (_("Site"), f"{site.name} ({_label(site.kind, site.get_kind_display())}, {site.country})"),
        (_("Address"), site.address),
        (_("Rack"), rack.name),
        (
            _("Position"),
            f"U{placement.lowest_u}–U{placement.top_u} "
            f"({_label(placement.face, placement.get_face_display())})",
        ),
        (
            _("Wall power"),
            f"{_num(data.power.wall_w, 0, 'W')} ({_label(data.power.source, data.power.source_label)})"
            if data.power
            else "—",
        ),
    ]
    rows = [
        (
            load.feed.name,
            load.feed.leg,
            f"{load.feed.voltage_v} V × {load.feed.current_a} A × {load.feed.phases}",
            _num(load.limit_w, 0, "W"),
            _num(load.load_w, 0, "W"),
            _num(load.percent_of_limit, 1, "%"),
        )
        for load in data.feeds
    ]
    return [
        *flowables,
        _pairs(facts),
        Spacer(1, 3 * mm),
        KeepTogether(
            [
                Paragraph(_esc(_("Circuits feeding this server")), st.h2),
                *_table(
                    [_("Feed"), _("Leg"), _("Rating"), _("Continuous limit"), _("Load"), _("Of limit")],
                    rows,
                    (26, 12, 46, 32, 30, 28),
                ),
            ]
        ),
    ]


def _network(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Network and BMC")), st.h1)]
    network = data.network
    if network is None:
        return [*flowables, Paragraph(_esc(_("No network record.")), st.body)]
    facts = [
        (_("Management IP"), network.management_ip),
        (_("BMC IP"), network.bmc_ip),
        (_("BMC MAC"), network.bmc_mac),
        (
            _("BMC credentials"),
            _("handed over separately, never printed") if network.has_bmc_credentials else _("not recorded"),
        ),
    ]
    return [*flowables, _pairs(facts)]


def _monitoring(data: PackData) -> list[Flowable]:
    st = _styles()
    access = data.monitoring
    facts = [
        (_("Werkbank portal"), access.portal_url),
        (_("Portal accounts"), ", ".join(access.portal_accounts) or _("none yet")),
        (_("Platform"), access.platform or _("not listed")),
    ]
    if access.platform:
        facts += [
            (_("Machine id"), access.platform_machine_id or "—"),
            (_("Platform account"), access.platform_account or "—"),
        ]
    if access.bmc_url:
        facts.append((_("BMC web interface"), access.bmc_url))
    return [
        Paragraph(_esc(_("Monitoring access")), st.h1),
        Paragraph(
            _esc(
                _(
                    "Where you watch this server, and under which account. Passwords are never part of "
                    "this document."
                )
            ),
            st.small,
        ),
        _pairs(facts),
    ]


def _onboarding(data: PackData) -> list[Flowable]:
    st = _styles()
    flowables: list[Flowable] = [Paragraph(_esc(_("Platform onboarding")), st.h1)]
    listing = data.listing
    if listing is None:
        return [*flowables, Paragraph(_esc(_("The server is not listed on a platform.")), st.body)]
    facts = [
        (_("Platform"), listing.get_platform_display()),
        (_("Machine id"), listing.machine_id or "—"),
        (_("Verification"), _label(listing.verification, listing.get_verification_display())),
        (_("Listed on"), _date(listing.listed_on)),
        (_("Verified on"), _date(listing.verified_on)),
        (_("Reliability"), _num(listing.reliability, 4) if listing.reliability is not None else "—"),
    ]
    return [*flowables, _pairs(facts)]


def _warranty_table(rows: list[WarrantyRow], *, with_server: bool) -> list[Flowable]:
    if not rows:
        return [Paragraph(_esc(_("None.")), _styles().body)]
    from_handover = _("from handover")
    kinds = {RecordKind.SERVER: _("Server"), RecordKind.COMPONENT: _("Component")}
    cells = [
        (
            *((row.hostname,) if with_server else ()),
            kinds.get(row.kind, row.kind),
            row.serial,
            row.description,
            _("%(months)s months") % {"months": row.term_months},
            _date(row.start) if row.start else from_handover,
            _date(row.end) if row.end else "—",
        )
        for row in rows
    ]
    header = [_("Kind"), _("Serial"), _("Description"), _("Term"), _("Start"), _("End")]
    widths: tuple[float, ...] = (23, 30, 57, 20, 22, 22)
    if with_server:
        header = [_("Server"), *header]
        widths = (24, 22, 28, 44, 18, 19, 19)
    serial = header.index(_("Serial"))
    return [GridRows(header, cells, [w * mm for w in widths], whole=frozenset({serial}))]


def _warranty(data: PackData) -> list[Flowable]:
    st = _styles()
    return [
        Paragraph(_esc(_("Warranty per serial")), st.h1),
        Paragraph(
            _esc(
                _("Every serial of this server, warranted in the name of %(customer)s.")
                % {"customer": data.order.customer.name}
            ),
            st.small,
        ),
        *_warranty_table(data.warranty, with_server=False),
    ]


def _signoff(data: PackData) -> list[Flowable]:
    st = _styles()
    line = "_" * 34
    table = Table(
        [
            [
                Paragraph(_esc(_("Handed over by (builder)")), st.cell),
                Paragraph(_esc(_("Received by (customer)")), st.cell),
            ],
            [Spacer(1, 14 * mm), Spacer(1, 14 * mm)],
            [Paragraph(line, st.cell), Paragraph(line, st.cell)],
            [
                Paragraph(_esc(_("Name, date, signature")), st.small),
                Paragraph(_esc(_("Name, date, signature")), st.small),
            ],
        ],
        colWidths=[87 * mm, 87 * mm],
    )
    return [
        KeepTogether(
            [
                Paragraph(_esc(_("Sign-off")), st.h1),
                Paragraph(
                    _esc(
                        _("%(customer)s receives the server %(hostname)s (%(tag)s) as documented here.")
                        % {
                            "customer": data.order.customer.name,
                            "hostname": data.server.hostname,
                            "tag": data.server.asset_tag,
                        }
                    ),
                    st.body,
                ),
                Spacer(1, 4 * mm),
                table,
            ]
        )
    ]


def pack_pdf(data: PackData, *, revision: int, language: str, generated_at: datetime) -> bytes:
    """The handover pack of one server as a PDF, in `language` (en or de)."""
    with translation.override(language):
        story: list[Flowable] = [*_cover(data, revision=revision, generated_at=generated_at), PageBreak()]
        for section in (
            _configuration,
            _pcie,
            _burnin,
            _charts,
            _findings,
            _stages,
            _blacklist,
            _placement,
            _network,
            _monitoring,
            _onboarding,
            _warranty,
            _signoff,
        ):
            story += [CondPageBreak(40 * mm), *section(data), Spacer(1, 4 * mm)]
        label = _("Handover pack")
        footer_text = _("%(label)s %(tag)s · revision %(revision)s · page %(page)s of %(pages)s")
        tag = data.server.asset_tag

        def footer(page: int, pages: int) -> str:
            return footer_text % {
                "label": label,
                "tag": tag,
                "revision": revision,
                "page": page,
                "pages": pages,
            }

        return _render(story, title=f"{label} {tag} r{revision}", footer=footer)


def certificate_pdf(order: Any, rows: list[WarrantyRow], *, language: str, issued_on: date) -> bytes:
    """The warranty certificate of an order: the customer, the order and every serial with start and end."""
    with translation.override(language):
        st = _styles()
        title = _("Warranty certificate")
        facts = [
            (_("Customer"), order.customer.name),
            (pgettext("a customer's order", "Order"), order.reference),
            (_("Warranty term"), _("%(months)s months") % {"months": order.warranty_months}),
            (_("Servers"), str(len({row.server_id for row in rows}))),
            (_("Serials"), str(len(rows))),
            (_("Issued on"), _date(issued_on)),
        ]
        story: list[Flowable] = [
            Paragraph(_esc(title), st.title),
            _pairs(facts),
            Spacer(1, 4 * mm),
            Paragraph(
                _esc(
                    _(
                        "We warrant every serial below in the name of %(customer)s for the term shown. A "
                        "warranty starts at the server's handover; a serial replaced under warranty keeps "
                        "the remaining term of the one it replaced."
                    )
                    % {"customer": order.customer.name}
                ),
                st.body,
            ),
            Spacer(1, 4 * mm),
            *_warranty_table(rows, with_server=True),
        ]
        footer_text = _("%(label)s %(order)s · page %(page)s of %(pages)s")

        def footer(page: int, pages: int) -> str:
            return footer_text % {"label": title, "order": order.reference, "page": page, "pages": pages}

        return _render(story, title=f"{title} {order.reference}", footer=footer)


def table_pdf(rows: list[WarrantyRow], *, grid: bool = True) -> bytes:
    """A document of only the warranty table, as the pack draws it (`grid`), or as a reportlab Table of
    paragraphs split page by page: the bench's measure of table pages per second."""
    _fonts()
    if grid:
        story = _warranty_table(rows, with_server=True)
    else:
        story = _table(
            ["Server", "Kind", "Serial", "Description", "Term", "Start", "End"],
            [(r.hostname, r.kind, r.serial, r.description, r.term_months, r.start, r.end) for r in rows],
            (24, 22, 28, 44, 18, 19, 19),
            chunk=len(rows) or 1,
        )
    return _render(story, title="table", footer=lambda page, pages: f"page {page} of {pages}")


# --- the ZIP ------------------------------------------------------------------------------------------------


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def probe_report_json(run: Any) -> bytes | None:
    """The raw report the probe uploaded (stored gzip-compressed by burn-in), or None when it is missing."""
    if run is None or not run.report:
        return None
    try:
        with run.report.open("rb") as stored:
            raw = stored.read()
    except (FileNotFoundError, OSError):
        return None
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def pack_zip(
    *,
    pdf: bytes,
    telemetry_csv: bytes,
    report: bytes | None,
    server: Any,
    revision: int,
    language: str,
    generated_at: datetime,
) -> bytes:
    """The ZIP of a pack: the PDF, the telemetry CSV, the raw report (when stored), manifest.json, and the
    manifest's signature by this installation's newest key (manifest.sig.json)."""
    files = [(PDF_NAME, pdf), (CSV_NAME, telemetry_csv)]
    if report is not None:
        files.append((REPORT_NAME, report))
    manifest = {
        "format": MANIFEST_FORMAT,
        "issuer": ISSUER,
        "server": server.asset_tag,
        "hostname": server.hostname,
        "revision": revision,
        "language": language,
        "generated_at": generated_at.isoformat(),
        "files": [
            {"name": name, "sha256": _sha256(content), "size": len(content)} for name, content in files
        ],
    }
    if report is None:
        manifest["missing"] = {REPORT_NAME: "The probe's raw report is not stored for this run."}
    manifest_bytes = json.dumps(manifest, indent=2).encode()
    # Over the exact bytes stored: a verifier hashes what it reads, never a re-serialised manifest.
    signature = json.dumps(sign(manifest_bytes), indent=2).encode()
    buffer = io.BytesIO()
    stamp = generated_at.timetuple()[:6]
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in [*files, (MANIFEST_NAME, manifest_bytes), (SIGNATURE_NAME, signature)]:
            info = zipfile.ZipInfo(name, date_time=stamp)
            # The PDF's streams are compressed already; the CSV and JSON shrink about tenfold.
            info.compress_type = zipfile.ZIP_STORED if name == PDF_NAME else zipfile.ZIP_DEFLATED
            archive.writestr(info, content, compresslevel=6)
    return buffer.getvalue()


#: What reading a damaged or hostile member can raise: a bad CRC or header, a broken deflate stream, a
#: truncated file, an encrypted entry, a compression method zipfile lacks.
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError)


@dataclass(frozen=True)
class PackCheck:
    """What `check_pack` found: whether the ZIP and its manifest could be read, the manifest (when it could),
    each problem with the files against the manifest, and the signature's check.

    `verified` is the one answer that says "this pack is as Werkbank issued it": every file as the manifest
    says and the manifest signed by a given key.
    """

    readable: bool
    manifest: dict[str, Any] | None
    problems: list[str]
    signature: SignatureCheck

    @property
    def files_match(self) -> bool:
        return self.readable and not self.problems

    @property
    def verified(self) -> bool:
        return self.files_match and self.signature.valid


def _digest(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[str, int]:
    """SHA-256 and size of one member, read in chunks: a large telemetry CSV never sits whole in memory."""
    digest, size = hashlib.sha256(), 0
    with archive.open(info) as member:
        while chunk := member.read(1024 * 1024):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _unreadable(problem: str) -> PackCheck:
    return PackCheck(False, None, [problem], SignatureCheck(SignatureStatus.MALFORMED, message=problem))


def check_pack(
    source: str | Path | IO[bytes],
    *,
    keys: Sequence[PublicKey],
    max_unpacked_bytes: int | None = None,
) -> PackCheck:
    """Check a pack's ZIP: the manifest's signature against `keys`, and every file against the manifest.

    Every file the manifest lists must be there once with its SHA-256 and size, and nothing else may be but
    the manifest and its signature. A format-2 manifest without its signature fails (the signature was
    removed); a format-1 manifest is an old, unsigned pack. `max_unpacked_bytes` bounds what an untrusted
    upload may unpack to (by the sizes the ZIP declares, which zipfile never reads past), so that a small
    ZIP cannot make the server inflate gigabytes.
    """
    try:
        archive = zipfile.ZipFile(source)
    except (*_UNREADABLE, ValueError) as error:
        return _unreadable(f"Not a readable ZIP file: {error}")
    with archive:
        infos = archive.infolist()
        counts: dict[str, int] = {}
        for info in infos:
            counts[info.filename] = counts.get(info.filename, 0) + 1
        duplicated = sorted(name for name, count in counts.items() if count > 1)
        if duplicated:
            return _unreadable(f"{', '.join(duplicated)}: more than once in the ZIP.")
        unpacked = sum(info.file_size for info in infos)
        if max_unpacked_bytes is not None and unpacked > max_unpacked_bytes:
            return _unreadable(
                f"The ZIP unpacks to {unpacked:,} bytes, more than the {max_unpacked_bytes:,} a handover "
                "pack may have here."
            )
        by_name = {info.filename: info for info in infos}
        if MANIFEST_NAME not in by_name:
            return _unreadable(f"{MANIFEST_NAME} is missing.")
        if by_name[MANIFEST_NAME].file_size > MAX_MANIFEST_BYTES:
            return _unreadable(f"{MANIFEST_NAME} is larger than {MAX_MANIFEST_BYTES:,} bytes.")
        try:
            manifest_bytes = archive.read(MANIFEST_NAME)
            manifest = json.loads(manifest_bytes)
            listed = {entry["name"]: entry for entry in manifest["files"]}
            if not all(isinstance(name, str) and isinstance(entry, dict) for name, entry in listed.items()):
                raise TypeError("every file is an object with a name")
        except (*_UNREADABLE, ValueError, KeyError, TypeError) as error:
            return _unreadable(f"{MANIFEST_NAME} cannot be read: {error}")
        signature = _check_signature(archive, by_name, manifest_bytes, manifest, keys)
        problems = []
        for name, entry in sorted(listed.items()):
            if name not in by_name:
                problems.append(f"{name}: listed in the manifest but missing from the ZIP.")
                continue
            try:
                sha256, size = _digest(archive, by_name[name])
            except _UNREADABLE as error:
                problems.append(f"{name}: cannot be read from the ZIP: {error}")
                continue
            if size != entry.get("size"):
                problems.append(f"{name}: {size} bytes, the manifest says {entry.get('size')}.")
            if sha256 != entry.get("sha256"):
                problems.append(f"{name}: SHA-256 {sha256} does not match the manifest's.")
        for name in sorted(set(by_name) - set(listed) - {MANIFEST_NAME, SIGNATURE_NAME}):
            problems.append(f"{name}: not listed in the manifest.")
        return PackCheck(True, manifest, problems, signature)


def _check_signature(
    archive: zipfile.ZipFile,
    by_name: dict[str, zipfile.ZipInfo],
    manifest_bytes: bytes,
    manifest: Any,
    keys: Sequence[PublicKey],
) -> SignatureCheck:
    info = by_name.get(SIGNATURE_NAME)
    if info is None:
        signed_format = isinstance(manifest, dict) and manifest.get("format") != 1
        if signed_format:
            return SignatureCheck(
                SignatureStatus.INVALID,
                message=f"{SIGNATURE_NAME} is missing, but this manifest's format is always signed: "
                "the signature was removed",
            )
        return verify(data=manifest_bytes, signature=None, keys=keys)
    if info.file_size > MAX_MANIFEST_BYTES:
        return SignatureCheck(SignatureStatus.MALFORMED, message=f"{SIGNATURE_NAME} is too large")
    try:
        content = archive.read(info)
    except _UNREADABLE as error:
        return SignatureCheck(SignatureStatus.MALFORMED, message=f"{SIGNATURE_NAME} cannot be read: {error}")
    return verify(data=manifest_bytes, signature=content, keys=keys)


def verify_zip(source: str | Path | IO[bytes]) -> list[str]:
    """What is wrong with a pack ZIP's files against its manifest, one sentence per file; empty when they
    match. The signature is `check_pack`'s; this is the check that needs no key."""
    return check_pack(source, keys=()).problems
