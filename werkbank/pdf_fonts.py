"""The fonts of Werkbank's PDF documents (the handover pack, the certificate, the purchase order): Bitstream
Vera, bundled with reportlab, embedded as a subset; it has every glyph of English and German text (umlauts,
ß, the euro sign), which reportlab's standard Helvetica does not embed."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import reportlab
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

FONT, FONT_BOLD = "WerkbankVera", "WerkbankVera-Bold"


@cache
def vera_fonts() -> tuple[str, str]:
    """Register Vera (regular and bold, as one family) once per process; returns their names."""
    folder = Path(reportlab.__file__).parent / "fonts"
    pdfmetrics.registerFont(TTFont(FONT, str(folder / "Vera.ttf")))
    pdfmetrics.registerFont(TTFont(FONT_BOLD, str(folder / "VeraBd.ttf")))
    pdfmetrics.registerFontFamily(FONT, normal=FONT, bold=FONT_BOLD, italic=FONT, boldItalic=FONT_BOLD)
    return FONT, FONT_BOLD
