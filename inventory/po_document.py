"""The purchase order as the supplier reads it: one A4 PDF (reportlab), in English and German side by side
(a supplier has no language of its own here), rendered when the PO is sent and kept on it
(`inventory.services.po_documents`).

It prints what the supplier needs to deliver and invoice: our PO number and date, the supplier, where the
goods go (a partner's workshop or our warehouse), the lines with MPN, quantity, unit price and total, the
order's note, and the requests of seed 000: one production lot per line where possible, and the warranty
papers in the customer's name (the lot code and date code are booked at receiving).
"""

from __future__ import annotations

import io
from decimal import Decimal
from xml.sax.saxutils import escape

from reportlab.lib import colors
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.platypus import Paragraph, SimpleDocTemplate, Spacer, Table, TableStyle

from inventory.models import PurchaseOrder
from werkbank.pdf_fonts import vera_fonts

GRID, HEAD = colors.HexColor("#b8bec6"), colors.HexColor("#e8ecf0")


def _money(value: Decimal, currency: str) -> str:
    return f"{value:,.2f} {currency}"


def render_po_pdf(po: PurchaseOrder) -> bytes:
    """The PO's PDF; the same PO gives the same bytes (reportlab's invariant mode)."""
    regular, bold = vera_fonts()
    body = ParagraphStyle("body", fontName=regular, fontSize=9, leading=12)
    small = ParagraphStyle(
        "small", parent=body, fontSize=7.5, leading=9.5, textColor=colors.HexColor("#555b63")
    )
    title = ParagraphStyle("title", parent=body, fontName=bold, fontSize=18, leading=23, spaceAfter=6)
    cell = ParagraphStyle("cell", parent=body, fontSize=8, leading=10)
    supplier = po.supplier
    when = po.sent_at or po.created_at
    destination = (
        f"Workshop / Werkstatt {po.deliver_to.name}" if po.deliver_to else "Our warehouse / Unser Lager"
    )
    story: list = [
        Paragraph(f"Purchase order / Bestellung {escape(po.number)}", title),
        Paragraph(f"Date / Datum: {when:%Y-%m-%d}", body),
        Spacer(1, 4 * mm),
        Table(
            [
                [
                    Paragraph("<b>Supplier / Lieferant</b>", body),
                    Paragraph("<b>Deliver to / Lieferung an</b>", body),
                ],
                [
                    Paragraph(
                        "<br/>".join(
                            escape(line)
                            for line in (
                                supplier.name,
                                f"{supplier.country}"
                                + (f" · VAT ID / USt-IdNr. {supplier.vat_id}" if supplier.vat_id else ""),
                                supplier.contact_name,
                                supplier.contact_email,
                            )
                            if line
                        ),
                        body,
                    ),
                    Paragraph(escape(destination), body),
                ],
            ],
            colWidths=[87 * mm, 87 * mm],
            style=TableStyle([("VALIGN", (0, 0), (-1, -1), "TOP"), ("LEFTPADDING", (0, 0), (-1, -1), 0)]),
        ),
        Spacer(1, 5 * mm),
    ]
    rows = [
        [
            Paragraph(f"<b>{text}</b>", cell)
            for text in ("#", "MPN", "Part / Teil", "Qty / Menge", "Unit price / Stückpreis", "Total / Summe")
        ]
    ]
    total = Decimal("0")
    lines = list(po.lines.select_related("part").order_by("pk"))
    for number, line in enumerate(lines, start=1):
        amount = line.unit_price * line.quantity
        total += amount
        rows.append(
            [
                Paragraph(str(number), cell),
                Paragraph(escape(line.part.mpn), cell),
                Paragraph(escape(f"{line.part.manufacturer} {line.part.name}"), cell),
                Paragraph(str(line.quantity), cell),
                Paragraph(_money(line.unit_price, po.currency), cell),
                Paragraph(_money(amount, po.currency), cell),
            ]
        )
    rows.append(
        [
            "",
            "",
            Paragraph("<b>Total / Gesamt</b>", cell),
            "",
            "",
            Paragraph(f"<b>{_money(total, po.currency)}</b>", cell),
        ]
    )
    table = Table(rows, colWidths=[8 * mm, 34 * mm, 56 * mm, 18 * mm, 29 * mm, 29 * mm], repeatRows=1)
    table.setStyle(
        TableStyle(
            [
                ("GRID", (0, 0), (-1, -2), 0.4, GRID),
                ("BACKGROUND", (0, 0), (-1, 0), HEAD),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LINEABOVE", (0, -1), (-1, -1), 0.8, colors.black),
            ]
        )
    )
    story += [table, Spacer(1, 5 * mm)]
    if po.notes:
        story.append(Paragraph(f"<b>Note / Hinweis:</b> {escape(po.notes)}", body))
        story.append(Spacer(1, 3 * mm))
    story += _terms(small)
    buffer = io.BytesIO()
    SimpleDocTemplate(
        buffer,
        pagesize=A4,
        leftMargin=18 * mm,
        rightMargin=18 * mm,
        topMargin=16 * mm,
        bottomMargin=18 * mm,
        title=f"Purchase order {po.number}",
        author="Werkbank",
        creator="Werkbank",
        invariant=True,
    ).build(story)
    return buffer.getvalue()


def _terms(small: ParagraphStyle) -> list:
    """Seed 000's requests: one production lot per line, the warranty papers in the customer's name."""
    return [
        Paragraph(
            "Please deliver each line from one production lot where possible and print the lot code and "
            "date code on the packing list, one serial per unit. The warranty is registered in our "
            "customer's name: please send the warranty papers with the goods.",
            small,
        ),
        Paragraph(
            "Bitte liefern Sie jede Position möglichst aus einem Fertigungslos und geben Sie Loscode und "
            "Datumscode auf dem Lieferschein an, eine Seriennummer je Stück. Die Garantie wird auf den Namen "
            "unseres Kunden registriert: bitte legen Sie die Garantieunterlagen der Lieferung bei.",
            small,
        ),
    ]
