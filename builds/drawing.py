"""The connector map as a server-side SVG: no JavaScript, printable, testable as text.

One cell per connector, in the chassis layout's `columns`, grouped by cooling block. A free cell links to
`?connector=<name>`, which preselects it in the scan form: tap the slot, then scan the card.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from django.utils.html import escape

CELL_W, CELL_H, GAP = 132, 74, 8
PAD, GROUP_TITLE = 10, 22
#: The smallest a panel is drawn, as a share of its size: below it the labels would be unreadable.
MIN_SCALE = 0.56

FILL = {"free": "#f6f8fa", "occupied": "#dafbe1", "blacklisted": "#ffebe9"}
STROKE = {"free": "#8c959f", "occupied": "#1a7f37", "blacklisted": "#cf222e"}


def shorten(text: str, limit: int) -> str:
    """Keep the end of a long serial or name: the last characters tell units of one lot apart."""
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def _groups(cells: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Cells grouped by cooling block, in the order the blocks first appear on the map."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for cell in sorted(cells, key=lambda cell: cell["position"]):
        groups.setdefault(cell["cooling_block"], []).append(cell)
    return list(groups.items())


def _detail(cell: dict[str, Any]) -> str:
    bits = []
    if cell["pcie_gen"] or cell["pcie_lanes"]:
        bits.append(
            " ".join(
                bit
                for bit in (
                    f"Gen{cell['pcie_gen']}" if cell["pcie_gen"] else "",
                    f"x{cell['pcie_lanes']}" if cell["pcie_lanes"] else "",
                )
                if bit
            )
        )
    if cell["numa_node"] is not None:
        bits.append(f"NUMA {cell['numa_node']}")
    return " · ".join(bits) or cell["kind_label"]


def _title(cell: dict[str, Any]) -> str:
    head = f"{cell['name']} ({cell['kind_label']}, {_detail(cell)})"
    if cell["state"] == "blacklisted":
        held = f"; still holds {cell['serial']}" if cell["serial"] else ""
        return f"{head}: blacklisted: {cell['blacklist_reason']}{held}"
    if cell["state"] == "occupied":
        return f"{head}: {cell['serial']} ({cell['part_mpn']})"
    return f"{head}: free"


def _cell(cell: dict[str, Any], x: float, y: float, hatch: str) -> str:
    state = cell["state"]
    status_text = {
        "free": "free",
        "occupied": shorten(cell["serial"], 13),
        "blacklisted": "BLACKLISTED",
    }[state]
    parts = [
        f'<g id="connector-{cell["id"]}" class="connector {state}" data-connector="{escape(cell["name"])}" '
        f'data-state="{state}" data-serial="{escape(cell["serial"])}">',
        f"<title>{escape(_title(cell))}</title>",
        f'<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" rx="6" fill="{FILL[state]}" '
        f'stroke="{STROKE[state]}" stroke-width="{2 if state != "free" else 1}"/>',
    ]
    if state == "blacklisted":
        parts.append(
            f'<rect x="{x}" y="{y}" width="{CELL_W}" height="{CELL_H}" rx="6" fill="url(#{hatch})"/>'
            f'<path d="M{x + 4},{y + 4} L{x + CELL_W - 4},{y + CELL_H - 4} M{x + CELL_W - 4},{y + 4} '
            f'L{x + 4},{y + CELL_H - 4}" stroke="#cf222e" stroke-width="1.5" opacity="0.55"/>'
        )
    cx = x + CELL_W / 2
    parts.append(
        f'<text x="{cx}" y="{y + 23}" text-anchor="middle" font-size="18" font-weight="700" '
        f'fill="#1f2328">{escape(shorten(cell["name"], 12))}</text>'
        f'<text x="{cx}" y="{y + 45}" text-anchor="middle" font-size="15" '
        f'fill="{"#cf222e" if state == "blacklisted" else "#1f2328"}" '
        f'font-weight="{600 if state != "free" else 400}" '
        f'font-family="ui-monospace, monospace">{escape(status_text)}</text>'
        f'<text x="{cx}" y="{y + 64}" text-anchor="middle" font-size="12" fill="#57606a">'
        f"{escape(_detail(cell))}</text>"
    )
    parts.append("</g>")
    body = "".join(parts)
    if state == "free":
        # Tapping a free slot preselects it in the scan form: a plain link, no script.
        href = "?" + urlencode({"connector": cell["name"]}) + "#scan"
        return f'<a href="{escape(href)}" aria-label="Scan into {escape(cell["name"])}">{body}</a>'
    if state == "occupied" and cell["installation_id"]:
        return f'<a href="#installed-{cell["installation_id"]}">{body}</a>'
    return body


def _block_svg(block: str, members: Sequence[dict[str, Any]], columns: int, index: int) -> str:
    group_columns = min(columns, len(members))
    rows = -(-len(members) // group_columns)
    title = GROUP_TITLE if block else 0
    width = group_columns * CELL_W + (group_columns - 1) * GAP + 2 * PAD
    height = title + rows * CELL_H + (rows - 1) * GAP + 2 * PAD
    label = f"Cooling block {block}" if block else "Connectors"
    parts = [
        # Shrinks with the screen down to MIN_SCALE; narrower than that, the map scrolls sideways.
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" style="min-width: {width * MIN_SCALE:.0f}px" role="img" '
        f'aria-label="{escape(label)}" font-family="system-ui, sans-serif"'
        + (f' class="cooling-block" data-cooling-block="{escape(block)}">' if block else ">"),
        f'<defs><pattern id="hatch-{index}" width="8" height="8" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="3" height="8" fill="#cf222e" opacity="0.25"/>'
        "</pattern></defs>",
    ]
    if block:
        parts.append(
            f'<rect x="1" y="1" width="{width - 2}" height="{height - 2}" rx="10" fill="none" '
            f'stroke="#0969da" stroke-dasharray="6 4"/>'
            f'<text x="{PAD}" y="{PAD + 13}" font-size="15" font-weight="600" fill="#0969da">'
            f"{escape(label)}</text>"
        )
    for position, cell in enumerate(members):
        column, row = position % group_columns, position // group_columns
        parts.append(
            _cell(cell, PAD + column * (CELL_W + GAP), title + PAD + row * (CELL_H + GAP), f"hatch-{index}")
        )
    parts.append("</svg>")
    return "".join(parts)


def connector_map_svg(*, cells: Sequence[dict[str, Any]], columns: int, label: str) -> str:
    """Draw the connectors (from `builds.selectors.connector_map`) as cells, `columns` wide.

    One SVG panel per cooling block (connectors without one share a panel), each at most `columns` cells
    wide, in a wrapping row: a 7U chassis's two blocks of four bays stand side by side where the screen is
    wide enough and one above the other on a phone, where one 8-wide picture would be unreadably small.
    """
    if not cells:
        return ""
    columns = max(1, columns)
    panels = [
        _block_svg(block, members, columns, index) for index, (block, members) in enumerate(_groups(cells))
    ]
    return f'<div class="connector-map" role="group" aria-label="{escape(label)}">{"".join(panels)}</div>'
