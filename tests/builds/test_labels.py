"""Single labels for a 62 mm label printer: a server's (QR = asset tag) and an installed component's."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfReader
from reportlab.lib.units import mm

from builds.services import server_remove
from inventory.labels import Label, parse_qr_payload, qr_payload, render_component_label
from tests.builds.bench_page_rig import installed, logged_in, make_build
from tests.inventory.test_labels import QR_OPS, decode, modules_from_ops

pytestmark = pytest.mark.django_db


def _page(pdf: bytes) -> tuple[float, float, str, list[str]]:
    """The single page's width and height in mm, its text, and what its QR codes decode to."""
    reader = PdfReader(io.BytesIO(pdf))
    assert len(reader.pages) == 1
    page = reader.pages[0]
    codes = [decode(*modules_from_ops(ops)) for ops in QR_OPS.findall(page.get_contents().get_data())]
    return float(page.mediabox.width) / mm, float(page.mediabox.height) / mm, page.extract_text(), codes


def test_the_server_label_is_62_by_29_mm_with_the_asset_tag_as_qr_code(tenants):
    build = make_build(tenants)
    server = build.server
    response = logged_in(tenants.user_p).get(f"/bench/servers/{server.pk}/label.pdf")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == f'attachment; filename="label-{server.hostname}.pdf"'
    width, height, text, codes = _page(response.content)
    assert (round(width, 2), round(height, 2)) == (62.0, 29.0)
    assert codes == [server.asset_tag]
    for line in (server.asset_tag, server.hostname, server.order.reference):
        assert line in text


def test_the_component_label_carries_the_sheet_labels_payload(tenants):
    build = make_build(tenants)
    installation = installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    url = f"/bench/servers/{build.server.pk}/installations/{installation.pk}/label.pdf"
    response = logged_in(tenants.user_p).get(url)
    assert response.status_code == 200
    width, height, text, [code] = _page(response.content)
    assert (round(width, 2), round(height, 2)) == (62.0, 29.0)
    assert parse_qr_payload(code) == {
        "serial": build.gpu_serials[0],
        "part": "RTX-PRO-6000-MQ-1652",
        "lot": "L-2291",
        "po": installation.component.po_line.purchase_order.number,
    }
    assert build.gpu_serials[0] in text and "Lot L-2291" in text
    html = logged_in(tenants.user_p).get(f"/bench/servers/{build.server.pk}/").content.decode()
    assert f'href="{url}"' in html and f'href="/bench/servers/{build.server.pk}/label.pdf"' in html


def test_labels_of_another_partners_server_or_component_are_404(tenants):
    build = make_build(tenants)
    installation = installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    own = make_build(tenants, partner=tenants.partner_q, prefix="2001")
    for user in (tenants.user_q, tenants.user_a, tenants.outsider):
        client = logged_in(user)
        assert client.get(f"/bench/servers/{build.server.pk}/label.pdf").status_code == 404, user
        url = f"/bench/servers/{build.server.pk}/installations/{installation.pk}/label.pdf"
        assert client.get(url).status_code == 404, user
    # Q's own server, with P's installation id: not an installation of that server.
    url = f"/bench/servers/{own.server.pk}/installations/{installation.pk}/label.pdf"
    assert logged_in(tenants.user_q).get(url).status_code == 404


def test_a_removed_component_has_no_label_on_the_server_any_more(tenants):
    build = make_build(tenants)
    installation = installed(build, build.gpu_serials[0], "GPU1", tenants.user_p)
    server_remove(installation=installation, actor=tenants.user_p, reason="reseat")
    url = f"/bench/servers/{build.server.pk}/installations/{installation.pk}/label.pdf"
    assert logged_in(tenants.user_p).get(url).status_code == 404


def test_render_single_label_cuts_long_lines_and_keeps_the_payload():
    label = Label(serial="SN-" + "9" * 60, part="Very " * 30 + "(MPN-1)", lot="L1", po="PO-1")
    width, height, text, [code] = _page(render_component_label(label))
    assert (round(width, 2), round(height, 2)) == (62.0, 29.0)
    assert code == qr_payload(label)
    assert "…" in text
