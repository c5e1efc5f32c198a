"""A rack's front elevation as a server-side SVG, in the manner of NetBox's rack elevations.

U numbers run down both sides, U1 at the bottom. Each placed server is a block over its U range: a server
the viewer may see carries its hostname and its status, as a colour AND as words (never colour alone), and
links to its deployment page; a server the viewer may not see is drawn only as "occupied", hatched, with no
name, status, asset tag or link (`selectors.elevation_slots` decides which is which). Free U are empty
slots. Below the rack, one bar per power feed: its load against the rating (V × A × phases), a marker at the
continuous limit (0.8 × the rating), and the numbers as text; a three-phase feed adds each phase's load
against its own limit (0.8 × V × A) and the imbalance between them (`deployment.phases`).

No JavaScript; every text is escaped, and the result parses as XML. For a PM's placing form the free U
become targets (`placing_face`) that a static script (deployment/static/deployment/rack_placing.js) reads.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from django.utils.html import escape
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from deployment.choices import RackFace
from deployment.models import Rack
from deployment.phases import figure
from deployment.selectors import ElevationSlot, FeedLoad, elevation_slots, feed_loads

U_H = 20  # px per U
NUMBERS_W = 30  # the U number columns, left and right
RACK_W = 300  # the rack's inner width
RAIL = 8  # the rack's frame around the slots
PAD = 10
TITLE_H = 26
FEED_TITLE_H = 22
FEED_ROW_H = 44
FEED_PHASE_H = 14  # the phase line under a three-phase feed
WIDTH = PAD * 2 + NUMBERS_W * 2 + RAIL * 2 + RACK_W

#: Server status → (fill, stroke). Built on the palette of the other pages (the badges of site.css,
#: builds.drawing); the status is always written out too, so the colour is never the only sign.
STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "planned": ("#f6f8fa", "#8c959f"),
    "assembling": ("#ddf4ff", "#0969da"),
    "assembled": ("#ddf4ff", "#0550ae"),
    "burn_in": ("#fff8c5", "#bf8700"),
    "burn_in_passed": ("#dafbe1", "#1a7f37"),
    "burn_in_failed": ("#ffebe9", "#cf222e"),
    "deployed": ("#aceebb", "#116329"),
    "handed_over": ("#fbefff", "#8250df"),
}
DEFAULT_COLOURS = ("#f6f8fa", "#57606a")
OK_FILL, NEAR_FILL, OVER_FILL, LIMIT_STROKE = "#2da44e", "#bf8700", "#cf222e", "#1f2328"
#: From this share of the continuous limit on, a feed's bar is drawn as near its limit.
NEAR_LIMIT_PERCENT = 90.0


def _e(value: Any) -> str:
    return str(escape(str(value)))


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def feed_caption(load: FeedLoad) -> str:
    """E.g. "A1 · 2,900 W of 2,944 W continuous (98.5 %) · 3,680 W rated"."""
    return _("%(feed)s · %(load)s W of %(limit)s W continuous (%(percent)s %%) · %(rated)s W rated") % {
        "feed": load.feed.name,
        "load": figure(load.load_w),
        "limit": figure(load.limit_w),
        "percent": figure(load.percent_of_limit, 1),
        "rated": figure(load.rated_w),
    }


def phase_caption(load: FeedLoad) -> str:
    """Each phase of a three-phase feed with its load and share of its limit, and the imbalance, e.g.
    "L1 5,687 W (96.6 %) · L2 5,806 W (98.6 %) · L3 0 W (0.0 %) · imbalance 151.5 %"; a phase over its
    limit says so. Empty for a single-phase feed (its one phase is the feed)."""
    if load.feed.phases < 2:
        return ""
    parts = []
    for phase in load.phase_loads:
        values = {
            "phase": phase.line,
            "load": figure(phase.load_w),
            "percent": figure(phase.percent_of_limit, 1),
        }
        if phase.ok:
            parts.append(_("%(phase)s %(load)s W (%(percent)s %%)") % values)
        else:
            parts.append(_("%(phase)s %(load)s W (%(percent)s %%, OVER)") % values)
    imbalance = load.imbalance_percent
    if imbalance is not None:
        parts.append(_("imbalance %(percent)s %%") % {"percent": figure(imbalance, 1)})
    return " · ".join(parts)


def _feed_height(load: FeedLoad) -> int:
    return FEED_ROW_H + (FEED_PHASE_H if load.feed.phases > 1 else 0)


def _slot_svg(slot: ElevationSlot, *, x: float, y_of: Any, hatch: str) -> str:
    top, bottom = y_of(slot.top_u), y_of(slot.lowest_u) + U_H
    height = bottom - top
    span = f"U{slot.lowest_u}" if slot.height_u == 1 else f"U{slot.lowest_u}–U{slot.top_u}"
    if not slot.visible:
        # Outside the f-strings, where makemessages finds them.
        occupied_title, occupied = _("Occupied (%(span)s)") % {"span": span}, _("occupied")
        return (
            f'<g class="slot slot-occupied" data-lowest-u="{slot.lowest_u}" data-top-u="{slot.top_u}">'
            f"<title>{_e(occupied_title)}</title>"
            f'<rect x="{x + 1}" y="{top + 1}" width="{RACK_W - 2}" height="{height - 2}" rx="3" '
            f'fill="url(#{hatch})" stroke="#6e7781" stroke-width="1.5"/>'
            f'<text x="{x + RACK_W / 2}" y="{top + height / 2 + 4}" text-anchor="middle" font-size="12" '
            f'fill="#57606a" font-style="italic">{_e(occupied)}</text></g>'
        )
    fill, stroke = STATUS_COLOURS.get(slot.status, DEFAULT_COLOURS)
    one_u = slot.height_u == 1
    name = _shorten(slot.hostname, 30 if one_u else 40)
    if one_u:
        texts = (
            f'<text x="{x + 14}" y="{top + 14}" font-size="11" fill="#1f2328">'
            f'<tspan class="srv-hostname" font-weight="600">{_e(name)}</tspan>'
            f'<tspan class="srv-status" dx="6" fill="{stroke}">{_e(slot.status_label)}</tspan></text>'
        )
    else:
        middle = top + height / 2
        texts = (
            f'<text class="srv-hostname" x="{x + 14}" y="{middle - 2}" font-size="13" font-weight="600" '
            f'fill="#1f2328">{_e(name)}</text>'
            f'<text class="srv-status" x="{x + 14}" y="{middle + 14}" font-size="11" fill="#1f2328">'
            f"{_e(slot.status_label)} · {_e(span)}</text>"
        )
    url = reverse("deployment:server", args=[slot.server_id])
    asset_tag = _("asset tag %(tag)s") % {"tag": slot.asset_tag}
    return (
        f'<a class="slot slot-server" href="{_e(url)}" data-server="{slot.server_id}" '
        f'data-status="{_e(slot.status)}" '
        f'data-lowest-u="{slot.lowest_u}" data-top-u="{slot.top_u}">'
        f"<title>{_e(slot.hostname)} · {_e(slot.status_label)} · {_e(asset_tag)} · "
        f"{_e(span)}</title>"
        f'<rect x="{x + 1}" y="{top + 1}" width="{RACK_W - 2}" height="{height - 2}" rx="3" fill="{fill}" '
        f'stroke="{stroke}" stroke-width="1.5"/>'
        f'<rect x="{x + 1}" y="{top + 1}" width="6" height="{height - 2}" fill="{stroke}"/>'
        f"{texts}</a>"
    )


def _feed_svg(load: FeedLoad, *, y: float) -> str:
    x, width = PAD + NUMBERS_W, RACK_W + RAIL * 2
    scale_w = max(load.rated_w, load.load_w) or 1
    filled = min(load.load_w, scale_w) / scale_w * width
    limit_x = x + load.limit_w / scale_w * width
    # `word` names the CSS class; `label` and `state` are what the reader sees.
    if not load.ok:
        colour, word, label, state = OVER_FILL, "over", _("over"), _("OVER the continuous limit")
    elif load.percent_of_limit >= NEAR_LIMIT_PERCENT:
        colour, word, label, state = NEAR_FILL, "near", _("near"), _("near the continuous limit")
    else:
        colour, word, label, state = OK_FILL, "ok", _("ok"), _("within the continuous limit")
    feed = load.feed
    circuit = ngettext(
        "Leg %(leg)s · %(volts)s V × %(amps)s A × %(phases)s phase · %(state)s",
        "Leg %(leg)s · %(volts)s V × %(amps)s A × %(phases)s phases · %(state)s",
        feed.phases,
    ) % {
        "leg": feed.leg,
        "volts": feed.voltage_v,
        "amps": feed.current_a,
        "phases": feed.phases,
        "state": state,
    }
    return (
        f'<g class="feed feed-{word}" data-feed="{_e(feed.name)}" '
        f'data-load-w="{load.load_w:.0f}" data-limit-w="{load.limit_w:.0f}" data-rated-w="{load.rated_w}">'
        f"<title>{_e(load.sentence())}</title>"
        f'<text class="caption" x="{PAD}" y="{y + 12}" font-size="11" fill="#1f2328">'
        f"{_e(feed_caption(load))}</text>"
        f'<rect x="{x}" y="{y + 18}" width="{width}" height="12" fill="#eaeef2" stroke="#8c959f"/>'
        f'<rect class="load" x="{x}" y="{y + 18}" width="{filled:.1f}" height="12" fill="{colour}"/>'
        f'<line class="limit" x1="{limit_x:.1f}" x2="{limit_x:.1f}" y1="{y + 15}" y2="{y + 33}" '
        f'stroke="{LIMIT_STROKE}" stroke-width="2"/>'
        f'<text x="{PAD}" y="{y + 28}" font-size="10" fill="#57606a">{_e(feed.leg)}</text>'
        f'<text x="{x + width + 4}" y="{y + 28}" font-size="10" fill="{colour}">'
        f"{_e(label)}</text>"
        f'<text x="{x}" y="{y + 42}" font-size="9" fill="#57606a">{_e(circuit)}</text>'
        f"{_phases_svg(load, x=x, y=y + 42 + FEED_PHASE_H)}</g>"
    )


def _phases_svg(load: FeedLoad, *, x: float, y: float) -> str:
    """The phase line of a three-phase feed, each phase also as a data attribute; nothing for one phase."""
    caption = phase_caption(load)
    if not caption:
        return ""
    data = " ".join(f'data-{phase.line.lower()}-w="{phase.load_w:.0f}"' for phase in load.phase_loads)
    over = any(not phase.ok for phase in load.phase_loads)
    return (
        f'<text class="phases" x="{x}" y="{y}" font-size="9" fill="{OVER_FILL if over else "#1f2328"}" '
        f"{data}>{_e(caption)}</text>"
    )


def _free_svg(u: int, *, x: float, y: float, face: str | None) -> str:
    """A free U; on the placing form's elevations (`face` given) a target a PM clicks, or focuses and
    presses Enter, to place the chosen server with its lowest U here (deployment/static/deployment/
    rack_placing.js). The rect's class stays "slot slot-free" either way."""
    shape = f'x="{x + 1}" y="{y + 1}" width="{RACK_W - 2}" height="{U_H - 2}" fill="#ffffff" stroke="#d0d7de"'
    if face is None:
        return f'<rect class="slot slot-free" data-u="{u}" {shape}/>'
    if face == RackFace.REAR:
        label = _("U%(u)s from the rear: place the server here") % {"u": u}
    else:
        label = _("U%(u)s from the front: place the server here") % {"u": u}
    return (
        f'<rect class="slot slot-free" data-u="{u}" data-face="{_e(face)}" tabindex="0" role="button" '
        f'aria-label="{_e(label)}" {shape}><title>{_e(label)}</title></rect>'
    )


def rack_elevation_svg(
    *,
    rack: Rack,
    user: Any,
    slots: list[ElevationSlot] | None = None,
    loads: list[FeedLoad] | None = None,
    placing_face: str | None = None,
) -> str:
    """The front of `rack` as `user` may see it, with its feeds' loads below. A page that has read the
    slots (`elevation_slots(rack=rack, user=user)`) or the loads (`feed_loads(rack=rack)`) already may pass
    them in.

    `placing_face` (the rack page's placing form, PMs only) makes every free U a target for that face; the
    rear (`RackFace.REAR`) is drawn without the feeds, which the front already shows. A server blocks its U
    range from both faces (full depth), so both faces show the same slots."""
    slots = elevation_slots(rack=rack, user=user) if slots is None else slots
    rear = placing_face == RackFace.REAR
    loads = [] if rear else feed_loads(rack=rack) if loads is None else loads
    hatch = f"occupied-{rack.pk}-rear" if rear else f"occupied-{rack.pk}"
    title_id = f"rack-{rack.pk}-rear-title" if rear else f"rack-{rack.pk}-title"
    rack_top = PAD + TITLE_H
    rack_h = rack.height_u * U_H
    slots_x = PAD + NUMBERS_W + RAIL
    feeds_top = rack_top + rack_h + RAIL * 2 + 14
    height = feeds_top + FEED_TITLE_H + max(sum(_feed_height(load) for load in loads), FEED_ROW_H) + PAD
    if rear:
        height = rack_top + rack_h + RAIL * 2 + PAD

    def y_of(u: int) -> float:
        """The top edge of U `u` (U1 at the bottom)."""
        return rack_top + RAIL + (rack.height_u - u) * U_H

    used = {u for slot in slots for u in range(slot.lowest_u, slot.top_u + 1)}
    title = _("Rack %(rack)s (%(height)sU), front") % {"rack": rack.name, "height": rack.height_u}
    heading = _("%(rack)s · front") % {"rack": rack.name}
    if rear:
        title = _("Rack %(rack)s (%(height)sU), rear") % {"rack": rack.name, "height": rack.height_u}
        heading = _("%(rack)s · rear") % {"rack": rack.name}
    feeds_title = _("Power feeds · | marks the continuous limit")
    no_feeds = _("This rack has no power feeds recorded.")
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="rack-elevation" data-rack="{rack.pk}" '
        f'width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" '
        f'role="{"group" if placing_face else "img"}" '
        f'aria-labelledby="{title_id}" font-family="system-ui, sans-serif">',
        f'<title id="{title_id}">{_e(title)}</title>',
        f'<defs><pattern id="{hatch}" width="8" height="8" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="8" height="8" fill="#eaeef2"/>'
        '<rect width="3" height="8" fill="#afb8c1"/></pattern></defs>',
        f'<text x="{WIDTH / 2}" y="{PAD + 14}" text-anchor="middle" font-size="14" font-weight="700" '
        f'fill="#1f2328">{_e(heading)}</text>',
        f'<rect class="frame" x="{PAD + NUMBERS_W}" y="{rack_top}" width="{RACK_W + RAIL * 2}" '
        f'height="{rack_h + RAIL * 2}" rx="4" fill="#424a53"/>',
    ]
    for u in range(rack.height_u, 0, -1):
        y = y_of(u)
        for x, anchor in ((PAD + NUMBERS_W - 4, "end"), (PAD + NUMBERS_W + RAIL * 2 + RACK_W + 4, "start")):
            parts.append(
                f'<text class="u" x="{x}" y="{y + 14}" text-anchor="{anchor}" font-size="10" '
                f'fill="#57606a">{u}</text>'
            )
        if u not in used:
            parts.append(_free_svg(u, x=slots_x, y=y, face=placing_face))
    parts += [_slot_svg(slot, x=slots_x, y_of=y_of, hatch=hatch) for slot in slots]
    if rear:
        return "".join([*parts, "</svg>"])
    parts.append(
        f'<text x="{PAD}" y="{feeds_top + 14}" font-size="12" font-weight="700" fill="#1f2328">'
        f"{_e(feeds_title)}</text>"
    )
    if not loads:
        parts.append(
            f'<text x="{PAD}" y="{feeds_top + FEED_TITLE_H + 14}" font-size="11" fill="#57606a">'
            f"{_e(no_feeds)}</text>"
        )
    feed_y = feeds_top + FEED_TITLE_H
    for load in loads:
        parts.append(_feed_svg(load, y=feed_y))
        feed_y += _feed_height(load)
    parts.append("</svg>")
    return "".join(parts)
