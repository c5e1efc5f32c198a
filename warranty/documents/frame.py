"""The pack's page frame and styles: the fonts, colours, paragraph styles, translated labels, the text
helpers, and the canvas that numbers the pages "n of m".
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import Any

from django.utils import formats
from django.utils.translation import gettext_lazy
from reportlab.lib import colors
from reportlab.lib.enums import TA_RIGHT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import Flowable, SimpleDocTemplate

from builds.choices import ConnectorKind
from inventory.choices import PartCategory
from werkbank.pdf_fonts import FONT, vera_fonts

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
    regular, bold = vera_fonts()
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
