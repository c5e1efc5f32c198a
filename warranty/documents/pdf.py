"""The documents as PDFs: the handover pack (its sections in issue #12's order), the warranty certificate of
an order, and the bare warranty table the bench measures.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from reportlab.lib.units import mm
from reportlab.platypus import CondPageBreak, Flowable, PageBreak, Paragraph, Spacer

from warranty.documents.blocks import _pairs, _table
from warranty.documents.frame import _date, _esc, _render, _styles
from warranty.documents.sections_burnin import _burnin, _charts, _findings, _pcie, _stages
from warranty.documents.sections_server import _blacklist, _configuration, _cover
from warranty.documents.sections_site import _monitoring, _network, _onboarding, _placement
from warranty.documents.sections_warranty import _signoff, _warranty, _warranty_table
from warranty.selectors import PackData, WarrantyRow
from werkbank.pdf_fonts import vera_fonts


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
    vera_fonts()
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
