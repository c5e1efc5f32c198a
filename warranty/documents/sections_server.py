"""The pack's sections about the server as built: the cover, the configuration with every serial by
connector, and the blacklisted connectors.
"""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext as _
from django.utils.translation import pgettext
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Paragraph, Spacer, Table, TableStyle

from warranty.documents.blocks import GridRows, _pairs, _qr, _table
from warranty.documents.frame import CONNECTOR_KINDS, PART_CATEGORIES, _date, _esc, _styles
from warranty.selectors import PackData


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
            c.name,
            str(CONNECTOR_KINDS.get(c.kind, c.kind_label)),
            c.serial or "—",
            c.part_mpn or "—",
            states[c.state],
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
