"""Order list endpoint and transition service.

Figures: p50/p95 of `GET /api/v1/orders/` at page sizes 50 and 200 over 2,000 orders, the queries each
takes, and the cost of one audited transition. Ratios: the 200-row page against the 50-row page (rows ×4;
with a constant number of queries the time should grow by well under ×4) and the transition against the
plain status UPDATE it wraps.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bench.report import record
from inventory.models import Part
from orders.models import ConfigurationLine, Order, ServerConfiguration
from orders.services import order_submit
from werkbank.apps import freeze_startup_heap
from werkbank.models import Organization

ORDERS = 2000
REQUESTS = 60


def _timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def _p(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[int(q) - 1]


def _seed() -> tuple[object, list[Order]]:
    customers = Organization.objects.bulk_create(
        [Organization(name=f"Bench customer {i}", kind="customer") for i in range(50)]
    )
    gpu = Part.objects.create(category="gpu", manufacturer="NVIDIA", mpn="BENCH-GPU", name="GPU", vram_gb=32)
    chassis = Part.objects.create(
        category="chassis", manufacturer="X", mpn="BENCH-CH", name="Chassis", u_height=6
    )
    configuration = ServerConfiguration.objects.create(
        name="Bench", psu_count=5, psu_rating_w=1600, psu_redundant=1
    )
    ConfigurationLine.objects.bulk_create(
        [
            ConfigurationLine(configuration=configuration, part=gpu, quantity=8),
            ConfigurationLine(configuration=configuration, part=chassis, quantity=1),
        ]
    )
    orders = Order.objects.bulk_create(
        [
            Order(
                reference=f"WB-2026-{i + 1:04d}",
                customer=customers[i % len(customers)],
                configuration=configuration,
                server_count=1 + i % 8,
            )
            for i in range(ORDERS)
        ]
    )
    pm = get_user_model().objects.create_user("bench-pm", password="x", is_staff=True)
    pm.groups.add(Group.objects.get_or_create(name="project-managers")[0])
    return pm, orders


def run() -> None:
    pm, orders = _seed()
    client = Client()
    client.force_login(pm)
    rows = {}
    for limit in (50, 200):
        url = f"/api/v1/orders/?limit={limit}&offset=1000"
        client.get(url)  # warm up
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        query_count = len(queries)  # read now: later requests reset the connection's query log
        samples = _timed(lambda url=url: client.get(url), REQUESTS)
        rows[limit] = (_p(samples, 50), _p(samples, 95), query_count)
        record(
            f"orders API limit={limit} offset=1000 p95",
            rows[limit][1],
            "ms",
            target=50 if limit == 50 else 100,
        )
        record(f"orders API limit={limit} queries", query_count, "queries")
        print(
            f"orders list limit={limit:<3} ({ORDERS} orders, offset 1000): p50 {rows[limit][0]:6.1f} ms  "
            f"p95 {rows[limit][1]:6.1f} ms  queries {rows[limit][2]}"
        )
    print(
        f"ratio p50(limit=200)/p50(limit=50): {rows[200][0] / rows[50][0]:.2f}  (rows ×4; queries "
        f"{rows[50][2]} → {rows[200][2]})"
    )
    # The same 200-row page as a server process without werkbank.apps.freeze_startup_heap would serve it:
    # the startup heap back in the collector's oldest generation, which each full collection then scans.
    url = "/api/v1/orders/?limit=200&offset=1000"
    gc.unfreeze()
    gc.collect()
    try:
        unfrozen = _timed(lambda: client.get(url), REQUESTS)
    finally:
        freeze_startup_heap()
    print(
        f"orders list limit=200, startup heap not frozen: p50 {_p(unfrozen, 50):6.1f} ms  "
        f"p95 {_p(unfrozen, 95):6.1f} ms  (frozen: p95 {rows[200][1]:.1f} ms, "
        f"ratio {_p(unfrozen, 95) / rows[200][1]:.2f})"
    )
    record(
        "orders API limit=200 offset=1000 p95, startup heap not frozen",
        _p(unfrozen, 95),
        "ms",
        note=f"the slow alternative; p50 {_p(unfrozen, 50):.1f} ms",
    )

    targets = iter(orders[:200])
    transition = _timed(lambda: order_submit(order=next(targets), actor=pm), 200)
    plain_targets = iter(orders[200:400])
    plain = _timed(lambda: Order.objects.filter(pk=next(plain_targets).pk).update(status="roi_review"), 200)
    print(
        f"order_submit (locked re-read, BOM check, update, audit row, on-commit notice): "
        f"p50 {_p(transition, 50):.2f} ms  p95 {_p(transition, 95):.2f} ms"
    )
    print(f"plain status UPDATE: p50 {_p(plain, 50):.2f} ms")
    record("order_submit p50", _p(transition, 50), "ms", note=f"plain UPDATE {_p(plain, 50):.2f} ms")
    print(f"ratio transition/plain update (p50): {_p(transition, 50) / _p(plain, 50):.1f}")
