"""The pack's sections about where the server runs: rack placement and circuits, network and BMC (never a
secret), monitoring access and platform onboarding.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from reportlab.lib.units import mm
from reportlab.platypus import Flowable, KeepTogether, Paragraph, Spacer

from warranty.documents.blocks import _pairs, _table
from warranty.documents.frame import _date, _esc, _label, _num, _styles
from warranty.selectors import PackData


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
            # The phase(s) of the feed this server's PSU group draws from (issue #28).
            f"{load.feed.name} ({load.phase_of(data.server.pk)})",
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
            _("never printed: the customer's members reveal them on the portal's server page")
            if network.has_bmc_credentials
            else _("not recorded"),
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
