"""The connector map as server-side SVG tiles: no JavaScript, printable, testable as text.

One tile (a small SVG) per connector, grouped by cooling block; the tiles of a block sit in a CSS grid that
is at most the chassis layout's `columns` wide and wraps on a narrow screen (`.connector-map` in the bench
page's styles), so a tile is never drawn smaller than its natural size: on a 390 px phone two tiles stand
side by side and a serial is 15 CSS px tall, where one shrunk 8-wide picture made it about 7 px. A free
tile links to `?connector=<name>`, which preselects it in the scan form: tap the slot, then scan the card.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlencode

from django.utils.html import escape
from django.utils.translation import gettext as _

if TYPE_CHECKING:
    from builds.selectors import ConnectorCell

CELL_W, CELL_H = 132, 74
#: The widest a block's grid is drawn, in tiles (the page's CSS has a class per width up to this).
MAX_COLUMNS = 8

FILL = {"free": "#f6f8fa", "occupied": "#dafbe1", "blacklisted": "#ffebe9"}
STROKE = {"free": "#8c959f", "occupied": "#1a7f37", "blacklisted": "#cf222e"}


def shorten(text: str, limit: int) -> str:
    """Keep the end of a long serial or name: the last characters tell units of one lot apart."""
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def _groups(cells: Sequence[ConnectorCell]) -> list[tuple[str, list[ConnectorCell]]]:
    """Cells grouped by cooling block, in the order the blocks first appear on the map."""
    groups: dict[str, list[ConnectorCell]] = {}
    for cell in sorted(cells, key=lambda cell: cell.position):
        groups.setdefault(cell.cooling_block, []).append(cell)
    return list(groups.items())


def _detail(cell: ConnectorCell) -> str:
    bits = []
    if cell.pcie_gen or cell.pcie_lanes:
        bits.append(
            " ".join(
                bit
                for bit in (
                    f"Gen{cell.pcie_gen}" if cell.pcie_gen else "",
                    f"x{cell.pcie_lanes}" if cell.pcie_lanes else "",
                )
                if bit
            )
        )
    if cell.numa_node is not None:
        bits.append(f"NUMA {cell.numa_node}")
    return " · ".join(bits) or cell.kind_label


def _title(cell: ConnectorCell) -> str:
    head = f"{cell.name} ({cell.kind_label}, {_detail(cell)})"
    if cell.state == "blacklisted":
        held = "; " + _("still holds %(serial)s") % {"serial": cell.serial} if cell.serial else ""
        return f"{head}: " + _("blacklisted: %(reason)s") % {"reason": cell.blacklist_reason} + held
    if cell.state == "occupied":
        return f"{head}: {cell.serial} ({cell.part_mpn})"
    return f"{head}: " + _("free")


def _cell(cell: ConnectorCell) -> str:
    """One connector as its own SVG tile, 132 × 74 user units drawn at (at least) as many CSS px."""
    state = cell.state
    status_text = {
        "free": _("free"),
        "occupied": shorten(cell.serial, 13),
        "blacklisted": _("BLACKLISTED"),
    }[state]
    hatch = f"hatch-{cell.id}"
    x, y = 1, 1
    width, height = CELL_W - 2, CELL_H - 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {CELL_W} {CELL_H}" width="{CELL_W}" '
        f'height="{CELL_H}" class="tile" font-family="system-ui, sans-serif">',
        f'<g id="connector-{cell.id}" class="connector {state}" data-connector="{escape(cell.name)}" '
        f'data-state="{state}" data-serial="{escape(cell.serial)}">',
        f"<title>{escape(_title(cell))}</title>",
        f'<rect x="{x}" y="{y}" width="{width}" height="{height}" rx="6" fill="{FILL[state]}" '
        f'stroke="{STROKE[state]}" stroke-width="{2 if state != "free" else 1}"/>',
    ]
    if state == "blacklisted":
        parts.append(
            f'<defs><pattern id="{hatch}" width="8" height="8" patternUnits="userSpaceOnUse" '
            'patternTransform="rotate(45)"><rect width="3" height="8" fill="#cf222e" opacity="0.25"/>'
            "</pattern></defs>"
            f'<rect x="{x}" y="{y}" width="{width}" height="{height}" rx="6" fill="url(#{hatch})"/>'
            f'<path d="M{x + 4},{y + 4} L{x + width - 4},{y + height - 4} M{x + width - 4},{y + 4} '
            f'L{x + 4},{y + height - 4}" stroke="#cf222e" stroke-width="1.5" opacity="0.55"/>'
        )
    cx = CELL_W / 2
    parts.append(
        f'<text x="{cx}" y="{y + 22}" text-anchor="middle" font-size="18" font-weight="700" '
        f'fill="#1f2328">{escape(shorten(cell.name, 12))}</text>'
        f'<text x="{cx}" y="{y + 44}" text-anchor="middle" font-size="15" '
        f'fill="{"#cf222e" if state == "blacklisted" else "#1f2328"}" '
        f'font-weight="{600 if state != "free" else 400}" '
        f'font-family="ui-monospace, monospace">{escape(status_text)}</text>'
        f'<text x="{cx}" y="{y + 63}" text-anchor="middle" font-size="12" fill="#57606a">'
        f"{escape(_detail(cell))}</text>"
    )
    parts.append("</g></svg>")
    body = "".join(parts)
    if state == "free":
        # Tapping a free slot preselects it in the scan form: a plain link, no script.
        href = "?" + urlencode({"connector": cell.name}) + "#scan"
        aria = _("Scan into %(connector)s") % {"connector": cell.name}
        return f'<a href="{escape(href)}" aria-label="{escape(aria)}">{body}</a>'
    if state == "occupied" and cell.installation_id:
        return f'<a href="#installed-{cell.installation_id}">{body}</a>'
    return f"<span>{body}</span>"


def _block_html(block: str, members: Sequence[ConnectorCell], columns: int) -> str:
    group_columns = max(1, min(columns, len(members), MAX_COLUMNS))
    label = _("Cooling block %(block)s") % {"block": block} if block else _("Connectors")
    head = (
        f'<div class="map-block cooling-block cols-{group_columns}" data-cooling-block="{escape(block)}" '
        f'role="group" aria-label="{escape(label)}"><div class="map-block-title">{escape(label)}</div>'
        if block
        else f'<div class="map-block cols-{group_columns}" role="group" aria-label="{escape(label)}">'
    )
    tiles = "".join(_cell(cell) for cell in members)
    return f'{head}<div class="tiles">{tiles}</div></div>'


def connector_map_svg(*, cells: Sequence[ConnectorCell], columns: int, label: str) -> str:
    """Draw the connectors (from `builds.selectors.connector_map`) as tiles, at most `columns` wide.

    One group per cooling block (connectors without one share a group), each a grid of at most `columns`
    tiles a row, side by side where the screen is wide enough: a 7U chassis's two blocks of four bays stand
    next to each other on a desktop, and on a phone each block wraps to two tiles a row.
    """
    if not cells:
        return ""
    columns = max(1, columns)
    groups = [_block_html(block, members, columns) for block, members in _groups(cells)]
    return f'<div class="connector-map" role="group" aria-label="{escape(label)}">{"".join(groups)}</div>'
