"""A server's label for a 62 mm label printer, drawn with inventory's label primitive.

Inventory knows parts and serials but no servers, so the server label is composed here: the QR code carries
the asset tag alone, as a plain string, so that scanning it into the bench list's search box opens the
server (an exact asset tag goes straight to its page); the text repeats the asset tag in bold, then the
hostname, the configuration, the order and the chassis serial.
"""

from __future__ import annotations

from builds.models import Server
from inventory.labels import SINGLE_HEIGHT_MM, SINGLE_WIDTH_MM, render_single_label


def server_label_pdf(*, server: Server) -> bytes:
    """One 62 × 29 mm PDF label of the server (already scoped to the user by the caller)."""
    order = server.order
    return render_single_label(
        payload=server.asset_tag,
        title=server.asset_tag,
        lines=[
            server.hostname,
            order.configuration.name,
            f"{order.reference} · {order.customer.name}",
            f"Chassis S/N {server.chassis_serial}" if server.chassis_serial else "",
        ],
        document_title=f"Label {server.hostname} ({server.asset_tag})",
        subject=f"Server label, {SINGLE_WIDTH_MM} × {SINGLE_HEIGHT_MM} mm",
    )
