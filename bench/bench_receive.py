"""Receiving a PO line of 1,000 and of 10,000 serials from a CSV, end to end through the API (issue #15:
10,000 in ≤ 2 s on PostgreSQL on the CI machine, with a constant number of queries).

Figures: wall time of the POST (multipart upload, parse, validate, bulk inserts, response) and its query
count; the same booking done row by row with the ORM, for the ratio; the label PDF of 100 serials.
"""

from __future__ import annotations

import os
import time
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bench.report import record
from inventory.labels import Label, render_labels
from inventory.models import BatchLot, Component, Part, StockMovement, Supplier
from inventory.services import po_create, po_send

#: The receipts measured; BENCH_RECEIVE_SERIALS="1000" (comma-separated) measures others.
SIZES = tuple(int(size) for size in os.environ.get("BENCH_RECEIVE_SERIALS", "1000,10000").split(","))
TARGET_S = 2.0


def _line(pm, tag: str, quantity: int):
    supplier, _ = Supplier.objects.get_or_create(name="Bench supplier", defaults={"country": "DE"})
    part = Part.objects.create(
        category="gpu", manufacturer=f"Bench {tag}", mpn=f"BENCH-{tag}", name="GPU", vram_gb=32
    )
    with transaction.atomic():
        po = po_send(
            po=po_create(actor=pm, supplier=supplier, lines=[(part, quantity, Decimal("1"))]), actor=pm
        )
    return po.lines.get()


def _receive(client: Client, pm, size: int) -> float:
    """One receipt of `size` serials through the API; its wall time in seconds."""
    line = _line(pm, f"API{size}", size)
    serials = "".join(f"B{size}-{i:07d},{line.part.mpn}\n" for i in range(size))
    upload = SimpleUploadedFile("packing.csv", ("serial,mpn\n" + serials).encode(), content_type="text/csv")
    body = {"lot": f"L-BENCH-{size}", "date_code": "2526", "origin": "TW", "file": upload}
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        response = client.post(f"/api/v1/inventory/purchase-order-lines/{line.pk}/receive/", body)
        bulk = time.perf_counter() - start
    assert response.status_code == 201, response.content[:500]
    print(f"receive {size} serials from CSV via the API: {bulk * 1000:7.1f} ms, {len(queries)} queries")
    record(
        f"receive {size:,} serials (CSV, API)",
        bulk * 1000,
        "ms",
        target=TARGET_S * 1000,
        note=f"{len(queries)} queries",
    )
    return bulk


def _row_by_row(pm, size: int) -> float:
    """The same booking row by row, as a naive service would do it (no parsing, no HTTP: a lower bound)."""
    slow_line = _line(pm, f"ROWS{size}", size)
    lot = BatchLot.objects.create(
        part=slow_line.part,
        supplier=slow_line.purchase_order.supplier,
        purchase_order=slow_line.purchase_order,
        lot_code=f"L-ROWS-{size}",
        date_code="2526",
        country_of_origin="TW",
    )
    start = time.perf_counter()
    with transaction.atomic():
        for i in range(size):
            component = Component.objects.create(
                part=slow_line.part,
                manufacturer=slow_line.part.manufacturer,
                serial=f"ROW{size}-{i:07d}",
                lot=lot,
                po_line=slow_line,
                location="Warehouse",
            )
            StockMovement.objects.create(
                component=component, to_status="in_stock", to_location="Warehouse", reason="x"
            )
    rows = time.perf_counter() - start
    print(f"the same {size} bookings row by row with the ORM: {rows * 1000:7.1f} ms, {2 * size} INSERTs")
    record(f"receive {size:,} serials row by row (ORM)", rows * 1000, "ms", note="the slow alternative")
    return rows


def run() -> None:
    pm = get_user_model().objects.create_user("bench-receiver", password="x", is_staff=True)
    pm.groups.add(Group.objects.get_or_create(name="project-managers")[0])
    client = Client()
    client.force_login(pm)
    client.get("/api/v1/inventory/parts/")  # the first request imports the API's modules: not the receipt's

    for size in SIZES:
        bulk = _receive(client, pm, size)
        rows = _row_by_row(pm, size)
        verdict = "pass" if bulk <= TARGET_S else "miss"
        print(
            f"ratio row-by-row / API path at {size}: {rows / bulk:.1f}"
            f"  (target: the API path ≤ {TARGET_S * 1000:,.0f} ms: {verdict})"
        )

    labels = [
        Label(serial=f"BENCH{i:07d}", part="NVIDIA Bench GPU (BENCH-API)", lot="L-BENCH", po="PO-2026-0001")
        for i in range(100)
    ]
    start = time.perf_counter()
    pdf = render_labels(labels, title="bench")
    elapsed_ms = (time.perf_counter() - start) * 1000
    print(f"label PDF, 100 QR labels (5 pages): {elapsed_ms:7.1f} ms, {len(pdf) // 1024} KiB")
    record("label PDF, 100 QR labels", elapsed_ms, "ms")
