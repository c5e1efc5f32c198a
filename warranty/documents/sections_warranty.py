"""The pack's closing sections: the warranty per serial (the certificate's table too) and the sign-off."""

from __future__ import annotations

from django.utils.translation import gettext as _
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, KeepTogether, Paragraph, Spacer, Table

from warranty.choices import RecordKind
from warranty.documents.blocks import GridRows
from warranty.documents.frame import _date, _esc, _styles
from warranty.selectors import PackData, WarrantyRow


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
    whole = {1}  # the serial
    if with_server:
        # The hostname is the certificate's key to its rows: its column holds "wb-2026-0001-01" at full width,
        # and a longer name is condensed, never cut (the description gives up the room).
        header = [_("Server"), *header]
        widths = (33, 19, 30, 36, 17, 22, 17)
        whole = {0, 2}
    return [GridRows(header, cells, [w * mm for w in widths], whole=frozenset(whole))]


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
