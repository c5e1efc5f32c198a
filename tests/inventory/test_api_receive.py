"""Receiving a PO line by lot through the API: CSV or scanner, all or nothing."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import IntegrityError, connection, transaction

from inventory.choices import ComponentStatus, PurchaseOrderStatus
from inventory.models import BatchLot, Component, PurchaseOrder, PurchaseOrderLine, StockMovement
from tests import factories
from tests.tenants_rig import api_client
from werkbank.access import Purpose
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def line(tenants):
    po = factories.make_po(deliver_to=tenants.partner_p, quantity=8)
    return po.lines.get()


def _receive(client, line, *, csv: str | None = None, serials: str | None = None, **extra):
    body = {"lot": "L-2291", "date_code": "2526", "origin": "TW", **extra}
    url = f"/api/v1/inventory/purchase-order-lines/{line.pk}/receive/"
    if csv is not None:
        body["file"] = SimpleUploadedFile("packing.csv", csv.encode(), content_type="text/csv")
        return client.post(url, body, format="multipart")
    body["serials"] = serials
    return client.post(url, body, format="json")


def _snapshot():
    return (
        Component.objects.count(),
        BatchLot.objects.count(),
        StockMovement.objects.count(),
        list(PurchaseOrderLine.objects.values_list("quantity_received", flat=True)),
        AuditEvent.objects.count(),
    )


def test_receive_csv_books_every_serial_under_its_lot(tenants, line):
    csv = "serial,mpn\n" + "".join(f"1652000000{i:03d},{line.part.mpn}\n" for i in range(5))
    response = _receive(api_client(tenants.pm), line, csv=csv)
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["received"], body["line_received"], body["line_quantity"], body["lot_created"]) == (
        5,
        5,
        8,
        True,
    )
    lot = BatchLot.objects.get()
    assert (lot.lot_code, lot.date_code, lot.country_of_origin, lot.supplier) == (
        "L-2291",
        "2526",
        "TW",
        line.purchase_order.supplier,
    )
    components = Component.objects.filter(lot=lot)
    assert components.count() == 5
    assert set(components.values_list("status", flat=True)) == {ComponentStatus.IN_STOCK}
    assert set(components.values_list("location", flat=True)) == {f"Workshop {tenants.partner_p.name}"}
    assert StockMovement.objects.filter(to_status=ComponentStatus.IN_STOCK).count() == 5
    line.purchase_order.refresh_from_db()
    assert line.purchase_order.status == PurchaseOrderStatus.PARTIALLY_RECEIVED

    # The rest arrives from the scanner, into the same lot: the PO is then received.
    rest = "\n".join(f"1652000000{i:03d}" for i in range(5, 8))
    second = _receive(api_client(tenants.pm), line, serials=rest)
    assert second.status_code == 201, second.json()
    assert second.json()["lot_created"] is False
    line.purchase_order.refresh_from_db()
    assert line.purchase_order.status == PurchaseOrderStatus.RECEIVED
    assert Component.objects.filter(lot=lot).count() == 8


def test_serial_lookup(tenants, line):
    _receive(api_client(tenants.pm), line, serials="SN-A1\nSN-A2")
    response = api_client(tenants.pm).get("/api/v1/inventory/components/?serial=SN-A2")
    assert [row["serial"] for row in response.json()["results"]] == ["SN-A2"]
    row = response.json()["results"][0]
    assert (row["lot_code"], row["purchase_order"], row["country_of_origin"]) == (
        "L-2291",
        line.purchase_order.number,
        "TW",
    )
    prefix = api_client(tenants.pm).get("/api/v1/inventory/components/?serial_prefix=SN-A").json()
    assert prefix["count"] == 2


@pytest.mark.parametrize(
    ("csv", "row", "column", "fragment"),
    [
        ("serial,colour\nA1,red\n", None, None, "colour"),
        ("sn;serial\nA1;A2\n", None, None, "serial"),
        ("serial\nA1\n A2\n", 3, "serial", "whitespace"),
        ("serial\nA1\nA\x072\n", 3, "serial", "control character"),
        ("serial\nA1\nA2\nA1\n", 4, "serial", "duplicate of row 2"),
        ("serial,mpn\nA1,WRONG-MPN\n", 2, "mpn", "WRONG-MPN"),
        ("serial,mpn\nA1\n", 2, None, ""),
        ("serial\n", None, None, "no serials"),
    ],
    ids=[
        "wrong-column",
        "duplicate-column",
        "whitespace",
        "control-char",
        "duplicate",
        "mpn",
        "short-row",
        "empty",
    ],
)
def test_bad_csv_is_a_400_naming_row_and_column_and_writes_nothing(tenants, line, csv, row, column, fragment):
    before = _snapshot()
    response = _receive(api_client(tenants.pm), line, csv=csv)
    assert response.status_code == 400, response.json()
    errors = response.json()["rows"]
    assert any(
        error["row"] == row and error["column"] == column and fragment in error["message"] for error in errors
    ), errors
    assert _snapshot() == before


def test_an_empty_upload_is_refused(tenants, line):
    response = _receive(api_client(tenants.pm), line, csv="")
    assert response.status_code == 400
    assert "file" in response.json()
    assert not Component.objects.exists()


def test_known_serial_is_refused_naming_its_row(tenants, line):
    _receive(api_client(tenants.pm), line, serials="K1\nK2")
    before = _snapshot()
    response = _receive(api_client(tenants.pm), line, csv="serial\nK3\nK2\n")
    assert response.status_code == 400
    assert response.json()["rows"] == [
        {"row": 3, "column": "serial", "message": "K2 is already known (lot L-2291)."}
    ]
    assert _snapshot() == before


def test_a_serial_known_in_another_letter_case_is_refused_as_a_duplicate(tenants, line):
    assert _receive(api_client(tenants.pm), line, serials="AB-1").status_code == 201
    before = _snapshot()
    response = _receive(api_client(tenants.pm), line, csv="serial\nAB-2\nab-1\n")
    assert response.status_code == 400
    assert response.json()["rows"] == [
        {
            "row": 3,
            "column": "serial",
            "message": "ab-1 is already known as AB-1 (lot L-2291): serials match in any letter case.",
        }
    ]
    assert _snapshot() == before
    # Another manufacturer may print the same serial: that is another component.
    other = factories.make_po(quantity=1, part=factories.PartFactory(manufacturer="PNY")).lines.get()
    assert _receive(api_client(tenants.pm), other, serials="ab-1").status_code == 201
    received = sorted(Component.objects.values_list("manufacturer", "serial"))
    assert received == [("NVIDIA", "AB-1"), ("PNY", "ab-1")]


def test_the_database_refuses_a_serial_in_another_letter_case(tenants, line):
    _receive(api_client(tenants.pm), line, serials="AB-1")
    known = Component.objects.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        Component.objects.create(
            part=known.part,
            manufacturer=known.manufacturer,
            serial="ab-1",
            lot=known.lot,
            po_line=known.po_line,
            location="x",
        )


def test_over_receiving_is_a_409_with_the_counts(tenants, line):
    _receive(api_client(tenants.pm), line, serials="\n".join(f"O{i}" for i in range(6)))
    before = _snapshot()
    response = _receive(api_client(tenants.pm), line, serials="\n".join(f"P{i}" for i in range(3)))
    assert response.status_code == 409
    assert response.json()["detail"].startswith("3 serials but only 2 of 8")
    assert "6 already received" in response.json()["detail"]
    assert _snapshot() == before


@pytest.mark.parametrize("final_status", ["cancelled", "closed"])
def test_receiving_on_a_cancelled_or_closed_po_is_a_409(tenants, final_status):
    from inventory.services import po_cancel, po_close

    po = factories.make_po(quantity=2)
    line = po.lines.get()
    if final_status == "cancelled":
        po_cancel(po=po, actor=tenants.pm, reason="Supplier cannot deliver")
    else:
        _receive(api_client(tenants.pm), line, serials="C1")
        po_close(po=po, actor=tenants.pm)
    before = _snapshot()
    response = _receive(api_client(tenants.pm), line, serials="C2")
    assert response.status_code == 409
    assert f"is {final_status}" in response.json()["detail"]
    assert _snapshot() == before


def test_a_lot_keeps_its_date_code_and_origin(tenants, line):
    _receive(api_client(tenants.pm), line, serials="D1")
    before = _snapshot()
    response = _receive(api_client(tenants.pm), line, serials="D2", date_code="2601")
    assert response.status_code == 409
    assert "date code 2526 from TW" in response.json()["detail"]
    assert _snapshot() == before


@pytest.mark.parametrize(
    ("extra", "field"),
    [({"lot": ""}, "lot"), ({"origin": "Taiwan"}, "origin"), ({"date_code": ""}, "date_code")],
)
def test_bad_receipt_fields_are_a_400(tenants, line, extra, field):
    response = _receive(api_client(tenants.pm), line, serials="E1", **extra)
    assert response.status_code == 400
    assert field in response.json()
    assert not Component.objects.exists()


def test_either_file_or_serials(tenants, line):
    response = api_client(tenants.pm).post(
        f"/api/v1/inventory/purchase-order-lines/{line.pk}/receive/",
        {"lot": "L", "date_code": "2526", "origin": "TW"},
        format="json",
    )
    assert response.status_code == 400
    assert "serials" in response.json()


def test_the_receiving_partner_books_on_its_own_po_only(tenants, line):
    assert _receive(api_client(tenants.user_p), line, serials="P-1").status_code == 201
    for intruder in (tenants.user_q, tenants.user_a, tenants.outsider):
        assert _receive(api_client(intruder), line, serials="P-2").status_code == 404
    own_warehouse = factories.make_po(quantity=1).lines.get()  # delivered to our warehouse, not to P
    assert _receive(api_client(tenants.user_p), own_warehouse, serials="P-3").status_code == 404
    assert Component.objects.count() == 1


def test_a_partner_receives_only_where_the_po_is_delivered(tenants):
    to_q = factories.make_po(deliver_to=tenants.partner_q, quantity=2).lines.get()
    assert _receive(api_client(tenants.user_p), to_q, serials="Q-1").status_code == 404
    detail = f"/api/v1/inventory/purchase-order-lines/{to_q.pk}/"
    assert api_client(tenants.user_p).get(detail).status_code == 404
    assert not PurchaseOrder.objects.visible_to(tenants.user_p, purpose=Purpose.RECEIVE).exists()
    assert not Component.objects.exists()
    assert _receive(api_client(tenants.user_q), to_q, serials="Q-1").status_code == 201
    assert list(PurchaseOrder.objects.visible_to(tenants.user_q, purpose=Purpose.RECEIVE)) == [
        to_q.purchase_order
    ]


def test_receiving_takes_a_constant_number_of_queries(tenants, django_assert_num_queries):
    # 100 rows stay inside one bulk INSERT on SQLite too (Django caps a statement at 999 parameters there);
    # the benchmark (make bench) receives 1,000 on PostgreSQL.
    for size in (10, 100):
        line = factories.make_po(quantity=size).lines.get()
        client = api_client(get_user_model().objects.get(pk=tenants.pm.pk))
        serials = "\n".join(f"Q{size}-{i:05d}" for i in range(size))
        # PM check; line, locked line; known serials; lot get-or-create (3 with its savepoint); components
        # and their movements (one statement on PostgreSQL, two bulk INSERTs elsewhere); line counter; PO
        # lock, totals, re-lock, status; 2 audit rows; the response's lot; the outer savepoint pair; the
        # quality check's one look for failures of the lot (pm.quality.checks.receipt_check).
        with django_assert_num_queries(20 if connection.vendor == "postgresql" else 21):
            assert _receive(client, line, serials=serials).status_code == 201


def test_the_receipts_components_are_the_rows_it_booked_in_packing_list_order(tenants):
    from inventory.packing import parse_scanner
    from inventory.services import po_line_receive

    line = factories.make_po(deliver_to=tenants.partner_p, quantity=3).lines.get()

    receipt = po_line_receive(
        line=line,
        actor=tenants.pm,
        lot_code="L-ORDER",
        date_code="2526",
        origin="TW",
        packing=parse_scanner("R-3\nR-1\nR-2"),
    )

    fields = ["pk", "serial", "status", "location", "lot_id", "po_line_id", "holder_id", "received_at"]
    booked = {component.pk: component for component in Component.objects.filter(po_line=line)}
    assert [component.serial for component in receipt.components] == ["R-3", "R-1", "R-2"]
    for component in receipt.components:
        stored = booked[component.pk]
        assert [getattr(component, name) for name in fields] == [getattr(stored, name) for name in fields]
        assert component.part == line.part and not component._state.adding
    assert sorted(
        StockMovement.objects.filter(component__po_line=line).values_list(
            "component__serial", "actor", "to_status"
        )
    ) == [(serial, tenants.pm.pk, ComponentStatus.IN_STOCK) for serial in ("R-1", "R-2", "R-3")]
