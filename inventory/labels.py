"""Serial labels: a PDF of QR-code stickers, one per serial, on A4 sheets of 3 × 8 labels of 70 × 37 mm.

Sheet geometry (A4 portrait, 210 × 297 mm): 3 columns × 8 rows of 70 × 37 mm labels with no gaps between
them, centred on the page. The labels fill the width exactly (no side margin) and leave 0.5 mm at the top
and the bottom (297 − 8 × 37 = 1 mm). Inside each label everything keeps :data:`SAFE_MM` from its edges:
office printers cannot print the outer ~4 mm of a sheet, and a label's edge is the sheet's edge for the
outer columns and rows. Change the ``*_MM`` constants for another sheet.

Each label: the QR code on the left (symbol :data:`QR_MM` square, vertically centred; the white padding
around it is its quiet zone), and on the right the serial in bold (the largest text, shrunk to fit, down
to 7 pt), the part name (wrapped onto up to three lines), the lot, the purchase order and an optional small
line. Every line that is still too wide is cut with an ellipsis. All of it is real PDF text in the
standard Helvetica fonts, so it can be searched and extracted; characters those fonts lack (CJK, for
one) print as black boxes.

The QR code carries :func:`qr_payload`::

    WB1|S:<serial>|P:<mpn or part>|L:<lot>|PO:<po>

``WB1`` names the format and its version. Fields are separated by ``|``, each a tag, ``:`` and the value;
``%``, ``|``, control and non-ASCII characters in a value are percent-encoded (UTF-8), so a value never
contains the separator and :func:`parse_qr_payload` reads it back exactly. The ``P`` field is the label's
MPN: ``Label.mpn``, else the text in the trailing parentheses of ``Label.part`` (as ``Part.__str__``
writes it, ``"Manufacturer Name (MPN)"``), else the whole part text.

QR codes are encoded by segno (error correction level M, 15 %, never boosted, so a code's size depends on
its payload alone) with the fixed data mask :data:`QR_MASK`, and the module matrix is drawn as one filled
path of rectangles. Measured here (2 cores, loaded): reportlab's QR widget took about 15 ms a code, segno
choosing the best of the eight masks about 8 ms, and segno with one fixed mask about 2 ms: 85 % of segno's
time is scoring the eight masks. Any mask is a valid code (the mask number is in the format information
every reader decodes first); the scoring only keeps finder-like patterns and large flat areas out of the
symbol. Mask 2 is the one segno chose most often (45 of 100) for payloads like ours; the tests decode the
drawn codes with a real reader. 1,000 labels render in about 2 s, which `make bench` reports beside the old
encoder's time.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote, unquote

import segno
from reportlab.lib.colors import Color, black
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

PAYLOAD_PREFIX = "WB1"
AUTHOR = "Werkbank"

LABEL_WIDTH_MM = 70
LABEL_HEIGHT_MM = 37
COLUMNS = 3
ROWS = 8
LABELS_PER_PAGE = COLUMNS * ROWS
SAFE_MM = 5  # blank padding inside each label: the printable area of office printers, and the quiet zone
QR_MM = 27  # the QR symbol itself; the white around it (5 mm, 2.5 mm towards the text) is its quiet zone
GAP_MM = 2.5  # between the QR symbol and the text

PAGE_WIDTH, PAGE_HEIGHT = A4
LABEL_WIDTH = LABEL_WIDTH_MM * mm
LABEL_HEIGHT = LABEL_HEIGHT_MM * mm
MARGIN_X = (PAGE_WIDTH - COLUMNS * LABEL_WIDTH) / 2
MARGIN_Y = (PAGE_HEIGHT - ROWS * LABEL_HEIGHT) / 2

_FONT = "Helvetica"
_BOLD = "Helvetica-Bold"
_SERIAL_SIZE = 12.0
_SERIAL_MIN_SIZE = 7.0
_TEXT_SIZE = 7.0
_TEXT_LEADING = 8.4
_EXTRA_SIZE = 6.5
_ELLIPSIS = "…"
_GREY = Color(0.3, 0.3, 0.3)
_OUTLINE = Color(0.75, 0.75, 0.75)
_QR_EC_LEVEL = "M"
QR_MASK = 2  # fixed data mask: see the module docstring

_SAFE_CHARS = "".join(chr(code) for code in range(0x20, 0x7F) if chr(code) not in "%|")
_TO_MODULE_BYTES = bytes.maketrans(b"\x00\x01", b"\xff\x00")
_TRAILING_MPN = re.compile(r"\(([^()]+)\)\s*\Z")
_PAYLOAD_FIELDS = {"S": "serial", "P": "part", "L": "lot", "PO": "po"}


@dataclass(frozen=True)
class Label:
    """What one sticker shows: the serial, its part, lot and purchase order."""

    serial: str
    part: str  # e.g. "NVIDIA RTX PRO 6000 Blackwell 96 GB (RTXPRO6000-BW-96G)"
    lot: str
    po: str  # e.g. "PO-2026-0007"
    extra: str = ""  # a small last line, e.g. date code and country of origin: "DC 2526 · TW"
    mpn: str = ""  # for the QR code; when empty, taken from the trailing "(MPN)" of ``part``


def _label_mpn(label: Label) -> str:
    if label.mpn.strip():
        return label.mpn.strip()
    match = _TRAILING_MPN.search(label.part)
    return match.group(1).strip() if match else label.part.strip()


def _escape(value: str) -> str:
    return quote(value, safe=_SAFE_CHARS)


def qr_payload(label: Label) -> str:
    """The text the label's QR code carries: ``WB1|S:<serial>|P:<mpn or part>|L:<lot>|PO:<po>``."""
    fields = (("S", label.serial), ("P", _label_mpn(label)), ("L", label.lot), ("PO", label.po))
    return "|".join([PAYLOAD_PREFIX, *(f"{tag}:{_escape(value)}" for tag, value in fields)])


def parse_qr_payload(payload: str) -> dict[str, str]:
    """Read a :func:`qr_payload` back: ``{"serial", "part", "lot", "po"}``; ValueError if it is not one."""
    prefix, *fields = payload.split("|")
    if prefix != PAYLOAD_PREFIX:
        raise ValueError(f"not a Werkbank label: the payload does not start with {PAYLOAD_PREFIX}|")
    values: dict[str, str] = {}
    for field in fields:
        tag, colon, value = field.partition(":")
        if not colon or tag not in _PAYLOAD_FIELDS or _PAYLOAD_FIELDS[tag] in values:
            raise ValueError(f"not a Werkbank label: unexpected field {field!r}")
        values[_PAYLOAD_FIELDS[tag]] = unquote(value, errors="strict")
    missing = [name for name in _PAYLOAD_FIELDS.values() if name not in values]
    if missing:
        raise ValueError(f"not a Werkbank label: missing {', '.join(missing)}")
    return values


def qr_modules(payload: str) -> tuple[int, bytes]:
    """Encode ``payload`` as a QR code: its size in modules and one byte per module, row by row, 0 = dark."""
    rows = _qr_rows(payload)
    return len(rows), b"".join(rows).translate(_TO_MODULE_BYTES)


def _qr_rows(payload: str) -> tuple[bytearray, ...]:
    """The symbol (no quiet zone) as segno builds it: one bytearray per row, one byte per module, 1 = dark."""
    return segno.make_qr(payload, error=_QR_EC_LEVEL, boost_error=False, mask=QR_MASK).matrix


def _dark_runs(rows: Sequence[bytes | bytearray]) -> str:
    """One ``col row width 1 re`` per horizontal run of dark modules: the path of the whole code."""
    runs = []
    for row, line in enumerate(rows):
        col = 0
        # Splitting a row at its light modules leaves the dark runs: twice as fast as a regex over the row.
        for run in bytes(line).split(b"\x00"):
            if run:
                runs.append(f"{col} {row} {len(run)} 1 re")
            col += len(run) + 1
    return "\n".join(runs)


def _draw_qr(canvas: Canvas, payload: str, *, x: float, y: float, size: float) -> None:
    """Draw the code's dark modules as one filled path in the square at (x, y) with side ``size``."""
    rows = _qr_rows(payload)
    count = len(rows)
    canvas.saveState()
    canvas.translate(x, y + size)
    canvas.scale(size / count, -size / count)  # module units, rows counted downwards from the top
    canvas.setFillColor(black)
    # One literal path of integer rectangles: drawing them through reportlab's path API costs about
    # 10 µs a rectangle in number formatting alone, and a code has about 300.
    canvas.addLiteral(_dark_runs(rows) + "\nf")
    canvas.restoreState()


@lru_cache(maxsize=4096)  # the labels of one PO line repeat part, lot and PO: measure them once
def _fit(text: str, *, font: str, size: float, width: float) -> str:
    """``text`` as it is when it fits in ``width``, else its longest prefix that fits with an ellipsis."""
    if stringWidth(text, font, size) <= width:
        return text
    low, high = 0, len(text)  # the longest prefix that fits lies in [low, high)
    while low < high - 1:
        middle = (low + high) // 2
        if stringWidth(text[:middle].rstrip() + _ELLIPSIS, font, size) <= width:
            low = middle
        else:
            high = middle
    return text[:low].rstrip() + _ELLIPSIS


@lru_cache(maxsize=1024)
def _wrap(text: str, *, font: str, size: float, width: float, lines: int) -> tuple[str, ...]:
    """Break ``text`` at spaces onto at most ``lines`` lines; the last one is cut with an ellipsis."""
    words = text.split()
    result: list[str] = []
    while words and len(result) < lines - 1:
        taken = 0
        while taken < len(words) and stringWidth(" ".join(words[: taken + 1]), font, size) <= width:
            taken += 1
        if taken == 0:
            break  # a single word wider than the line: cut it below rather than break it
        result.append(" ".join(words[:taken]))
        words = words[taken:]
    if words:
        result.append(_fit(" ".join(words), font=font, size=size, width=width))
    return tuple(result)


def _draw_label(canvas: Canvas, label: Label, *, x: float, y: float, outline: bool) -> None:
    """Draw one label with its lower left corner at (x, y)."""
    safe = SAFE_MM * mm
    qr_size = QR_MM * mm
    if outline:
        canvas.setStrokeColor(_OUTLINE)
        canvas.setLineWidth(0.25)
        canvas.rect(x, y, LABEL_WIDTH, LABEL_HEIGHT, stroke=1, fill=0)
    _draw_qr(canvas, qr_payload(label), x=x + safe, y=y + (LABEL_HEIGHT - qr_size) / 2, size=qr_size)

    text_x = x + safe + qr_size + GAP_MM * mm
    width = x + LABEL_WIDTH - safe - text_x
    serial_size = max(
        _SERIAL_MIN_SIZE, min(_SERIAL_SIZE, width / max(stringWidth(label.serial, _BOLD, 1), 1e-6))
    )
    baseline = y + LABEL_HEIGHT - safe - 0.72 * serial_size  # the top of the capitals on the padding
    canvas.setFillColor(black)
    canvas.setFont(_BOLD, serial_size)
    canvas.drawString(text_x, baseline, _fit(label.serial, font=_BOLD, size=serial_size, width=width))

    po = label.po if label.po.upper().startswith("PO") else f"PO {label.po}"  # "PO PO-2026-0007" stutters
    lines = [*_wrap(label.part, font=_FONT, size=_TEXT_SIZE, width=width, lines=3), f"Lot {label.lot}", po]
    baseline -= 0.5 * serial_size + _TEXT_LEADING
    canvas.setFont(_FONT, _TEXT_SIZE)
    for line in lines:
        canvas.drawString(text_x, baseline, _fit(line, font=_FONT, size=_TEXT_SIZE, width=width))
        baseline -= _TEXT_LEADING
    if label.extra.strip():
        canvas.setFillColor(_GREY)
        canvas.setFont(_FONT, _EXTRA_SIZE)
        canvas.drawString(
            text_x, baseline, _fit(label.extra.strip(), font=_FONT, size=_EXTRA_SIZE, width=width)
        )


def label_origin(index: int) -> tuple[int, float, float]:
    """Where label ``index`` (0-based) goes: its page (0-based) and lower left corner, filling rows first."""
    page, slot = divmod(index, LABELS_PER_PAGE)
    row, column = divmod(slot, COLUMNS)
    x = MARGIN_X + column * LABEL_WIDTH
    y = PAGE_HEIGHT - MARGIN_Y - (row + 1) * LABEL_HEIGHT
    return page, x, y


def render_labels(
    labels: Sequence[Label],
    *,
    title: str = "",
    outline: bool = False,
    on_page: Callable[[int], None] | None = None,
) -> bytes:
    """Render one label per serial onto A4 sheets of 3 × 8 labels of 70 × 37 mm; returns the PDF.

    Labels fill each sheet row by row, left to right; there are ceil(len(labels) / 24) pages. ``title``
    goes into the PDF metadata (the author is "Werkbank"). ``outline`` draws a thin cut line around each
    label, for printing on plain paper. ``on_page`` is called with the number of labels drawn after each
    full page (a task's progress). Raises ValueError for an empty list.
    """
    if not labels:
        raise ValueError("no labels")
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=A4, pageCompression=1)
    canvas.setTitle(title or "Serial labels")
    canvas.setAuthor(AUTHOR)
    canvas.setCreator(AUTHOR)
    sheet = f"{LABEL_WIDTH_MM} × {LABEL_HEIGHT_MM} mm, {COLUMNS} × {ROWS} per A4 sheet"
    canvas.setSubject(f"{len(labels)} serial labels, {sheet}")
    page = 0
    for index, label in enumerate(labels):
        label_page, x, y = label_origin(index)
        if label_page != page:
            canvas.showPage()
            page = label_page
            if on_page is not None:
                on_page(index)
        _draw_label(canvas, label, x=x, y=y, outline=outline)
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


# --- Single labels for a 62 mm label printer ------------------------------------------------------------
#
# One label per PDF page of 62 × 29 mm: the die-cut labels of 62 mm continuous-tape printers (Brother QL
# "DK-11209"-style 62 × 29 mm). The printer prints to about 1.5 mm of the edge, so everything keeps
# SINGLE_SAFE_MM inside it; the QR symbol is 25 mm square on the left (the 2 mm around it is its quiet
# zone, as on the A4 sheet's 27 mm symbol), the text on the right: a bold first line (the serial or the
# asset tag), shrunk to fit down to 7 pt, then up to five smaller lines.

SINGLE_WIDTH_MM = 62
SINGLE_HEIGHT_MM = 29
SINGLE_SAFE_MM = 2
SINGLE_QR_MM = 25
SINGLE_GAP_MM = 2
_SINGLE_TITLE_SIZE = 11.0
_SINGLE_LINES = 5


def render_single_label(
    *, payload: str, title: str, lines: Sequence[str], document_title: str = "", subject: str = ""
) -> bytes:
    """One 62 × 29 mm label as a one-page PDF: the QR code of ``payload``, ``title`` in bold, ``lines``.

    The primitive under :func:`render_component_label` and the apps above that label what inventory does
    not know (a server, in builds). Long lines are cut with an ellipsis; at most five lines are printed.
    """
    width, height = SINGLE_WIDTH_MM * mm, SINGLE_HEIGHT_MM * mm
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pagesize=(width, height), pageCompression=1)
    canvas.setTitle(document_title or title)
    canvas.setAuthor(AUTHOR)
    canvas.setCreator(AUTHOR)
    canvas.setSubject(subject or f"Label of {SINGLE_WIDTH_MM} × {SINGLE_HEIGHT_MM} mm")
    safe = SINGLE_SAFE_MM * mm
    qr_size = SINGLE_QR_MM * mm
    _draw_qr(canvas, payload, x=safe, y=(height - qr_size) / 2, size=qr_size)

    text_x = safe + qr_size + SINGLE_GAP_MM * mm
    text_width = width - safe - text_x
    title_size = max(
        _SERIAL_MIN_SIZE, min(_SINGLE_TITLE_SIZE, text_width / max(stringWidth(title, _BOLD, 1), 1e-6))
    )
    baseline = height - safe - 0.72 * title_size
    canvas.setFillColor(black)
    canvas.setFont(_BOLD, title_size)
    canvas.drawString(text_x, baseline, _fit(title, font=_BOLD, size=title_size, width=text_width))
    baseline -= 0.5 * title_size + _TEXT_LEADING
    canvas.setFont(_FONT, _TEXT_SIZE)
    for line in [line for line in lines if line.strip()][:_SINGLE_LINES]:
        canvas.drawString(text_x, baseline, _fit(line, font=_FONT, size=_TEXT_SIZE, width=text_width))
        baseline -= _TEXT_LEADING
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def render_component_label(label: Label) -> bytes:
    """One component's 62 × 29 mm label: the sheet label's QR payload (:func:`qr_payload`) and texts."""
    text_width = (SINGLE_WIDTH_MM - 2 * SINGLE_SAFE_MM - SINGLE_QR_MM - SINGLE_GAP_MM) * mm
    po = label.po if label.po.upper().startswith("PO") else f"PO {label.po}"
    lines = [
        *_wrap(label.part, font=_FONT, size=_TEXT_SIZE, width=text_width, lines=2),
        f"Lot {label.lot}",
        po,
        label.extra.strip(),
    ]
    return render_single_label(
        payload=qr_payload(label),
        title=label.serial,
        lines=lines,
        document_title=f"Label {label.serial}",
        subject=f"Serial label, {SINGLE_WIDTH_MM} × {SINGLE_HEIGHT_MM} mm",
    )
