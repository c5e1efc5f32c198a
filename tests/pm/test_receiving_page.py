"""The receiving page of a purchase order: the PM's (/pm/purchase-orders/<pk>/receive/) and the bench's
for the partner the PO is delivered to (/bench/purchase-orders/<pk>/receive/). Serials from the scanner
list or a pasted packing list, booked all or nothing by `po_line_receive`; a refusal writes nothing."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.test import Client

from inventory.choices import ComponentStatus, PurchaseOrderStatus
from inventory.models import BatchLot, Component, PurchaseOrder, PurchaseOrderLine, StockMovement
from tests import factories
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _client(user: Any | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _pm_url(po: PurchaseOrder) -> str:
    return f"/pm/purchase-orders/{po.pk}/receive/"


def _bench_url(po: PurchaseOrder) -> str:
    return f"/bench/purchase-orders/{po.pk}/receive/"


def _body(
    line: PurchaseOrderLine, *, scanned: str = "", paste: str = "", scan: str = "", **fields: str
) -> dict:
    prefix = f"line-{line.pk}"
    values = {"lot": "L-2291", "date_code": "2526", "origin": "TW", **fields}
    return {
        "line": str(line.pk),
        **{f"{prefix}-{name}": value for name, value in values.items()},
        f"{prefix}-scanned": scanned,
        f"{prefix}-paste": paste,
        f"{prefix}-scan": scan,
    }


def _snapshot() -> tuple:
    return (
        Component.objects.count(),
        BatchLot.objects.count(),
        StockMovement.objects.count(),
        list(PurchaseOrderLine.objects.values_list("quantity_received", flat=True)),
        AuditEvent.objects.filter(verb="purchase_order.receive").count(),
    )


@pytest.fixture
def po(tenants: Any) -> PurchaseOrder:
    """A sent PO of 8 GPUs, delivered to partner P's workshop."""
    return factories.make_po(deliver_to=tenants.partner_p, quantity=8)


# --- the PM's page ------------------------------------------------------------------------------------------


def test_the_page_lists_the_lines_with_a_receipt_form_per_open_line(tenants, po):
    line = po.lines.get()
    response = _client(tenants.pm).get(_pm_url(po))
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<tr data-line="{line.pk}">' in html
    assert line.part.mpn in html
    assert f'id="receive-line-{line.pk}"' in html and f'name="line-{line.pk}-scan"' in html
    assert 'data-open="8"' in html
    assert "inventory/receive.js" in html and "<script>" not in html  # the script is a static file (CSP)
    assert 'id="no-workshop"' not in html


def test_a_pm_receives_three_serials_from_the_scanner_list(tenants, po):
    line = po.lines.get()
    client = _client(tenants.pm)
    response = client.post(_pm_url(po), _body(line, scanned="SN-0001\nSN-0002\nSN-0003"))
    assert response.status_code == 303 and response["Location"] == _pm_url(po)
    components = Component.objects.filter(lot__lot_code="L-2291").order_by("serial")
    assert [c.serial for c in components] == ["SN-0001", "SN-0002", "SN-0003"]
    assert {c.status for c in components} == {ComponentStatus.IN_STOCK}
    assert {c.holder_id for c in components} == {tenants.partner_p.pk}
    lot = BatchLot.objects.get()
    assert (lot.date_code, lot.country_of_origin, lot.purchase_order_id) == ("2526", "TW", po.pk)
    line.refresh_from_db()
    po.refresh_from_db()
    assert (line.quantity_received, po.status) == (3, PurchaseOrderStatus.PARTIALLY_RECEIVED)
    assert AuditEvent.objects.filter(verb="purchase_order.receive", actor=tenants.pm).count() == 1
    page = client.get(response["Location"]).content.decode()
    assert "Received 3 serials into lot L-2291." in page
    assert 'data-open="5"' in page and '<tr data-lot="L-2291">' in page


def test_the_scan_left_in_the_field_goes_with_the_list(tenants, po):
    # Without the script Enter sends the form: the one scan in the field is booked with the list.
    line = po.lines.get()
    response = _client(tenants.pm).post(_pm_url(po), _body(line, scanned="SN-0001", scan="SN-0002"))
    assert response.status_code == 303
    assert set(Component.objects.values_list("serial", flat=True)) == {"SN-0001", "SN-0002"}


def test_a_pm_receives_three_serials_from_a_pasted_packing_list_csv(tenants, po):
    line = po.lines.get()
    mpn = line.part.mpn
    csv = f"Serial Number;MPN\r\nSN-0101;{mpn}\r\nSN-0102;{mpn}\r\n\r\nSN-0103;{mpn}\r\n"
    response = _client(tenants.pm).post(_pm_url(po), _body(line, paste=csv, lot="L-7", origin="de"))
    assert response.status_code == 303
    assert sorted(Component.objects.filter(lot__lot_code="L-7").values_list("serial", flat=True)) == [
        "SN-0101",
        "SN-0102",
        "SN-0103",
    ]
    assert BatchLot.objects.get().country_of_origin == "DE"


def test_pasted_serials_one_per_line_join_the_scanned_ones(tenants, po):
    line = po.lines.get()
    response = _client(tenants.pm).post(_pm_url(po), _body(line, scanned="SN-1", paste="SN-2\n\nSN-3\n"))
    assert response.status_code == 303
    assert Component.objects.count() == 3


def test_a_duplicate_in_the_list_is_a_400_naming_the_serial_and_writes_nothing(tenants, po):
    line = po.lines.get()
    before = _snapshot()
    response = _client(tenants.pm).post(_pm_url(po), _body(line, scanned="SN-1\nSN-2", paste="sn-1"))
    assert response.status_code == 400
    html = response.content.decode()
    assert "Refused, nothing was booked:" in html
    assert '<tr data-error-serial="sn-1">' in html
    assert "&#x27;sn-1&#x27; is a duplicate of row 1" in html
    assert _snapshot() == before
    # The page keeps what was given, to mend and send again.
    assert f'name="line-{line.pk}-paste"' in html and "sn-1</textarea>" in html


def test_more_serials_than_open_are_refused_and_nothing_is_written(tenants):
    po = factories.make_po(deliver_to=tenants.partner_p, quantity=2)
    line = po.lines.get()
    before = _snapshot()
    response = _client(tenants.pm).post(_pm_url(po), _body(line, scanned="SN-1\nSN-2\nSN-3"))
    assert response.status_code == 409
    assert "3 serials but only 2 of 2" in response.content.decode()
    assert _snapshot() == before


def test_a_serial_on_record_is_a_400_with_its_row(tenants, po):
    factories.receive_stock(deliver_to=tenants.partner_p, lots={"L-1": ["SN-9"]})
    line = po.lines.get()
    before = _snapshot()
    response = _client(tenants.pm).post(_pm_url(po), _body(line, scanned="SN-8\nSN-9"))
    assert response.status_code == 400
    html = response.content.decode()
    assert '<tr data-error-serial="SN-9">' in html and "SN-9 is already known (lot L-1)." in html
    assert _snapshot() == before


@pytest.mark.parametrize(
    ("fields", "fragment"),
    [
        ({"lot": ""}, "This field is required."),
        ({"origin": "XX"}, "must be an ISO 3166-1 alpha-2 country code such as DE; got &#x27;XX&#x27;."),
        ({"origin": "TWN"}, "Ensure this value has at most 2 characters"),
    ],
    ids=["no-lot", "unknown-country", "long-country"],
)
def test_bad_lot_fields_are_a_400_at_their_field(tenants, po, fields, fragment):
    line = po.lines.get()
    before = _snapshot()
    response = _client(tenants.pm).post(_pm_url(po), _body(line, scanned="SN-1", **fields))
    assert response.status_code == 400
    assert fragment in response.content.decode()
    assert _snapshot() == before


def test_no_serials_or_a_csv_beside_scans_is_a_400(tenants, po):
    line = po.lines.get()
    client = _client(tenants.pm)
    empty = client.post(_pm_url(po), _body(line))
    assert empty.status_code == 400 and "Scan or paste at least one serial." in empty.content.decode()
    both = client.post(_pm_url(po), _body(line, scanned="SN-1", paste="serial\nSN-2\n"))
    assert both.status_code == 400 and "not both" in both.content.decode()
    assert Component.objects.count() == 0


def test_the_quality_warnings_of_a_receipt_are_messages(tenants, po, monkeypatch):
    monkeypatch.setattr(
        "inventory.gates._receipt_checks", [lambda part, supplier, lot_code: [f"Lot {lot_code} was flagged."]]
    )
    line = po.lines.get()
    client = _client(tenants.pm)
    response = client.post(_pm_url(po), _body(line, scanned="SN-1"), follow=True)
    html = response.content.decode()
    assert '<li class="success">Received 1 serial into lot L-2291.</li>' in html
    assert '<li class="warning">Lot L-2291 was flagged.</li>' in html


def test_a_po_without_a_workshop_warns_that_no_bench_sees_its_serials(tenants):
    po = factories.make_po(deliver_to=None, quantity=2)
    html = _client(tenants.pm).get(_pm_url(po)).content.decode()
    assert (
        "No delivery workshop: received serials go to the warehouse, where no partner's bench sees them."
        in html
    )
    # The bench never shows it: it is delivered to no partner's workshop.
    assert _client(tenants.pm).get(_bench_url(po)).status_code == 404


def test_a_po_that_cannot_receive_shows_no_form(tenants):
    po = factories.make_po(deliver_to=tenants.partner_p, send=False)
    html = _client(tenants.pm).get(_pm_url(po)).content.decode()
    assert 'id="not-receivable"' in html and "data-open=" not in html
    line = po.lines.get()
    response = _client(tenants.pm).post(_pm_url(po), _body(line, scanned="SN-1"))
    assert response.status_code == 409 and Component.objects.count() == 0


def test_a_line_of_another_po_is_a_404(tenants, po):
    other = factories.make_po(deliver_to=tenants.partner_p).lines.get()
    response = _client(tenants.pm).post(_pm_url(po), _body(other, scanned="SN-1"))
    assert response.status_code == 404
    assert _client(tenants.pm).post(_pm_url(po), {"line": "x"}).status_code == 404
    assert Component.objects.count() == 0


def test_the_admin_change_page_links_the_receiving_page(tenants, po):
    html = _client(tenants.pm).get(f"/admin/inventory/purchaseorder/{po.pk}/change/").content.decode()
    assert f'<a href="{_pm_url(po)}" id="po-receive-link">Receive by lot</a>' in html


# --- who gets there -----------------------------------------------------------------------------------------


def test_only_pms_open_the_pm_page(tenants, po):
    line = po.lines.get()
    anonymous = Client().get(_pm_url(po))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    for user in (tenants.user_p, tenants.user_a, tenants.outsider):
        client = _client(user)
        assert client.get(_pm_url(po)).status_code == 404, user
        assert client.post(_pm_url(po), _body(line, scanned="SN-1")).status_code == 404, user
    assert Component.objects.count() == 0


def test_the_partner_receives_on_its_bench_page(tenants, po):
    line = po.lines.get()
    client = _client(tenants.user_p)
    page = client.get(_bench_url(po))
    assert page.status_code == 200 and 'href="/bench/"' in page.content.decode()
    response = client.post(_bench_url(po), _body(line, scanned="SN-0001\nSN-0002\nSN-0003"))
    assert response.status_code == 303 and response["Location"] == _bench_url(po)
    assert set(Component.objects.values_list("location", flat=True)) == {f"Workshop {tenants.partner_p.name}"}
    event = AuditEvent.objects.get(verb="purchase_order.receive")
    assert event.actor == tenants.user_p
    assert "Received 3 serials into lot L-2291." in client.get(_bench_url(po)).content.decode()


def test_another_partner_a_customer_and_an_outsider_get_a_404_on_the_bench_page(tenants, po):
    line = po.lines.get()
    for user in (tenants.user_q, tenants.user_a, tenants.outsider):
        client = _client(user)
        assert client.get(_bench_url(po)).status_code == 404, user
        assert client.post(_bench_url(po), _body(line, scanned="SN-1")).status_code == 404, user
    assert Component.objects.count() == 0


def test_anonymous_visitors_log_in_for_the_bench_page(po):
    for method in ("get", "post"):
        response = getattr(Client(), method)(_bench_url(po))
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_bench_list_shows_the_partners_deliveries_to_receive(tenants, po):
    done = factories.receive_stock(deliver_to=tenants.partner_p, lots={"L-1": ["SN-1"]})  # nothing open
    elsewhere = factories.make_po(deliver_to=tenants.partner_q)
    html = _client(tenants.user_p).get("/bench/").content.decode()
    assert f'<a href="{_bench_url(po)}" class="mono">{po.number}</a>' in html
    assert done.number not in html and elsewhere.number not in html
    other = _client(tenants.user_q).get("/bench/").content.decode()
    assert elsewhere.number in other and po.number not in other


def test_the_page_costs_the_same_queries_for_one_line_and_four(tenants):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from inventory.packing import parse_scanner
    from inventory.services import po_create, po_line_receive, po_send

    def page_queries(po: PurchaseOrder) -> int:
        client = _client(tenants.pm)
        client.get(_pm_url(po))  # the session and the PM check warm up
        with CaptureQueriesContext(connection) as queries:
            assert client.get(_pm_url(po)).status_code == 200
        return len(queries.captured_queries)

    one = factories.make_po(deliver_to=tenants.partner_p)
    parts = [(factories.PartFactory(), 4, Decimal("100.00")) for _ in range(4)]
    four = po_send(
        po=po_create(actor=tenants.pm, supplier=one.supplier, lines=parts, deliver_to=tenants.partner_p),
        actor=tenants.pm,
    )
    for number, line in enumerate(four.lines.all()[:2]):  # two lines partly received, each into a lot
        packing = parse_scanner(f"SN-{number}")
        po_line_receive(
            line=line,
            actor=tenants.pm,
            lot_code=f"L-{number}",
            date_code="2526",
            origin="TW",
            packing=packing,
        )
    assert page_queries(one) == page_queries(four)
