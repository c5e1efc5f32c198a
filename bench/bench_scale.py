"""Every list, detail, admin and HTML page at fleet scale (issue #15): 2,000 orders, 10,000 servers, 530,000
connectors, 100,000 components and 1.7 million telemetry samples (`manage.py seed_scale`, ops.scale).

Figures, through Django's test client (session, middleware, access check, serializer), on PostgreSQL:
- every API list (found in the URL configuration at run time) at limit=50 and limit=200, as a PM and as a
  partner's member: p95 (target < 50 ms at 50, < 100 ms at 200), with p50, the queries of one request and
  the number of requests in the note;
- deep pages of the big lists: offset 9,900 against the first page, and the keyset (cursor) page at the same
  depth where the list offers `?cursor=` (detected at run time): p95 < 50 ms;
- components ordered by `?ordering=serial` beside the default order (the issue's example);
- detail endpoints: p95 < 25 ms;
- the admin's changelists and change pages of the big tables (≥ 1,000 rows): ≤ 12 queries and < 200 ms;
- `/bench/` for a PM (< 150 ms) and a partner, the customer portal's pages and the PM's pages (no target in
  the issue: shown for information).

The series run as a server process does: with its startup heap frozen (`werkbank.apps.freeze_startup_heap`,
which werkbank/wsgi.py calls; the runner, bench/__main__.py, does it once for every bench).

Each series runs `REQUESTS` (100) requests, or as many as fit in `SERIES_BUDGET_S` seconds (1.5; at least
`MIN_REQUESTS`, 20, or 10 for a 200-row page), so that `make bench` stays within 15 minutes on two cores;
the note says how many ran (n=…). `BENCH_SCALE_SERIES_S=inf` runs all 100 of every series (much longer).
A figure that misses its target prints the plan of its slowest query (EXPLAIN ANALYZE), for whoever fixes it.
The API's throttle is off, as for every bench (bench/__main__.py).

`BENCH_SCALE=small` seeds a tenth of the fleet, for a quick try of the bench itself.
"""

from __future__ import annotations

import os
import re
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import get_resolver
from django.urls.resolvers import URLPattern, URLResolver

from bench.report import record
from builds.models import Server
from ops import scale
from orders.models import Order
from werkbank.apps import freeze_startup_heap

REQUESTS = 100
MIN_REQUESTS = 20
MIN_REQUESTS_200 = 10
SERIES_BUDGET_S = float(os.environ.get("BENCH_SCALE_SERIES_S", "1.5"))
DEEP_OFFSET = 9_900
BIG_TABLE = 1_000
SMALL = scale.ScaleSize(servers=1_000, components=10_000, samples=170_000, orders=200)


@dataclass
class Series:
    """One URL requested again and again by one client."""

    url: str
    status: int
    samples: list[float]
    queries: int
    slowest_sql: str
    sql_ms: float
    #: What the later figures need of the answer: the list's `count`, and the id of the page's middle row
    #: (for the detail endpoint). Not the whole body: kept for every list until the end, its tens of
    #: thousands of objects would sit in the collector's oldest generation and slow the series after it,
    #: which a server process never holds.
    count: int | None = None
    middle_id: Any = None

    @property
    def p50(self) -> float:
        return _p(self.samples, 50)

    @property
    def p95(self) -> float:
        return _p(self.samples, 95)

    def note(self) -> str:
        return f"p50 {self.p50:.1f} ms, {self.queries} queries ({self.sql_ms:.1f} ms), n={len(self.samples)}"


def _p(samples: list[float], q: int) -> float:
    if len(samples) < 2:
        return samples[0]
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


def _measure(client: Client, url: str, *, requests: int = REQUESTS, minimum: int = MIN_REQUESTS) -> Series:
    """One request to warm up, one to count its queries and time them, then up to `requests` timed ones."""
    response = client.get(url)
    if response.status_code != 200:
        return Series(url, response.status_code, [], 0, "", 0.0)
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    slowest = max(captured.captured_queries, key=lambda query: float(query["time"]), default={"sql": ""})
    sql_ms = sum(float(query["time"]) for query in captured.captured_queries) * 1000
    series = Series(url, response.status_code, [], len(captured), slowest["sql"], sql_ms)
    if response.status_code != 200:
        return series
    if response.get("Content-Type", "").startswith("application/json"):
        body = response.json()
        if isinstance(body, dict):
            series.count = body.get("count")
            results = body.get("results") or []
            if results and isinstance(results[len(results) // 2], dict):
                series.middle_id = results[len(results) // 2].get("id")
    started = time.perf_counter()
    for number in range(requests):
        if number >= minimum and time.perf_counter() - started > SERIES_BUDGET_S:
            break
        begin = time.perf_counter()
        client.get(url)
        series.samples.append((time.perf_counter() - begin) * 1000)
    return series


def _explain(series: Series, target: float | None) -> None:
    """Print the plan of the slowest query of a series that missed its target."""
    if target is None or not series.samples or series.p95 <= target or not series.slowest_sql:
        return
    if connection.vendor != "postgresql" or not series.slowest_sql.lstrip().upper().startswith("SELECT"):
        return
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {series.slowest_sql}")
        plan = [row[0] for row in cursor.fetchall()]
    print(
        f"    MISS {series.url}: p95 {series.p95:.1f} ms > {target:g} ms (p50 {series.p50:.1f} ms); its "
        f"{series.queries} queries took {series.sql_ms:.1f} ms of one request (what SQL does not explain is "
        "Python: serializers, templates, or a loaded machine); the slowest query:"
    )
    print(f"      {series.slowest_sql[:400]}")
    for line in plan[:14]:
        print(f"      {line}")


def _figure(name: str, series: Series, target: float | None, note: str = "") -> None:
    if series.status != 200 or not series.samples:
        print(f"  {name:<62} status {series.status}")
        record(name, series.status, "status", note=f"{series.url} answered {series.status}")
        return
    print(f"  {name:<62} p50 {series.p50:7.1f} ms  p95 {series.p95:7.1f} ms  {series.queries:3d} queries")
    record(name, series.p95, "ms", target=target, note=", ".join(filter(None, [series.note(), note])))
    _explain(series, target)


def _api_lists() -> Iterator[str]:
    """The API's list URLs without arguments, from the URL configuration (so a new list is measured too)."""

    def walk(resolver: URLResolver, prefix: str) -> Iterator[tuple[str, str | None]]:
        for pattern in resolver.url_patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern.name

    seen = set()
    for path, name in walk(get_resolver(), ""):
        if not path.startswith("api/v1/") or not (name or "").endswith("-list") or "(?P<" in path:
            continue
        url = "/" + re.sub(r"[\^$]", "", path)
        if url not in seen:
            seen.add(url)
            yield url


def _with(url: str, **params: Any) -> str:
    return f"{url}?{urlencode(params)}"


def _cursor_page(client: Client, url: str, depth: int) -> str | None:
    """The keyset page `depth` rows in, following `next` from `?cursor=`; None without cursor pages."""
    response = client.get(_with(url, cursor="", limit=50))
    if response.status_code != 200:
        return None
    body = response.json()
    if not isinstance(body, dict) or not _is_keyset(body.get("next")):
        return None  # limit/offset pages (which carry a given `cursor=` along unread)
    seen = len(body.get("results", []))
    page = body["next"]
    while seen < depth and page:
        body = client.get(page).json()
        seen += len(body.get("results", []))
        page = body.get("next")
    if not page:
        return None
    parsed = urlparse(page)
    query = {key: values[-1] for key, values in parse_qs(parsed.query, keep_blank_values=True).items()}
    return _with(parsed.path, **query)


def _is_keyset(link: str | None) -> bool:
    """Whether a `next` link pages by keyset: a non-empty `cursor`, no `offset`."""
    query = parse_qs(urlparse(link or "").query, keep_blank_values=True)
    return bool(query.get("cursor", [""])[-1]) and "offset" not in query


def _api(pm: Client, partner: Client) -> None:
    print("API lists (limit=50 and 200, PM and partner):")
    firsts: dict[str, Series] = {}
    for url in _api_lists():
        short = url.removeprefix("/api/v1/").rstrip("/")
        for who, client in (("PM", pm), ("partner", partner)):
            counts = {}
            for limit, target in ((50, 50.0), (200, 100.0)):
                # Fewer at 200 where time presses (MIN_REQUESTS_200): a slow 200-row page would take minutes.
                minimum = MIN_REQUESTS if limit == 50 else MIN_REQUESTS_200
                series = _measure(client, _with(url, limit=limit), minimum=minimum)
                counts[limit] = series.queries
                _figure(f"API {short} limit={limit} as {who} p95", series, target)
                if who == "PM" and limit == 50:
                    firsts[url] = series
            if counts[50] != counts[200]:
                record(
                    f"API {short} as {who}: queries at 200 − at 50",
                    counts[200] - counts[50],
                    "queries",
                    target=0,
                )

    print("Deep pages (offset 9,900 against the first page; the keyset page at the same depth):")
    for url, first in firsts.items():
        count = first.count
        if count is None:
            # A list without a count (a keyset-only list): measure its cursor page only.
            count = DEEP_OFFSET + 1
        if count <= DEEP_OFFSET:
            continue
        short = url.removeprefix("/api/v1/").rstrip("/")
        _figure(f"API {short} offset=0 limit=50 (first page) p95", first, None)
        deep = _measure(pm, _with(url, limit=50, offset=DEEP_OFFSET))
        _figure(f"API {short} offset={DEEP_OFFSET:,} limit=50 p95", deep, 50.0)
        cursor_url = _cursor_page(pm, url, DEEP_OFFSET)
        if cursor_url:
            _figure(f"API {short} cursor at row {DEEP_OFFSET:,} limit=50 p95", _measure(pm, cursor_url), 50.0)
        else:
            print(f"  {short}: no cursor pagination offered")
    print("Ordering (the issue's example: components by serial against the default order):")
    components = "/api/v1/inventory/components/"
    _figure(
        "API inventory/components default order limit=50 p95", _measure(pm, _with(components, limit=50)), 50.0
    )
    by_serial = _measure(pm, _with(components, limit=50, ordering="serial"))
    _figure("API inventory/components ?ordering=serial limit=50 p95", by_serial, 50.0)

    print("Detail endpoints (as a PM):")
    for url, first in firsts.items():
        if first.middle_id is None:
            continue
        pk = first.middle_id
        short = url.removeprefix("/api/v1/").rstrip("/")
        _figure(f"API {short} detail p95", _measure(pm, f"{url}{pk}/"), 25.0)


def _admin(pm: Client) -> None:
    print(f"Admin changelists and change pages of the tables with ≥ {BIG_TABLE:,} rows (as a PM):")
    for model, model_admin in sorted(admin.site._registry.items(), key=lambda item: item[0]._meta.label):
        if not model.objects.order_by().values("pk")[BIG_TABLE - 1 : BIG_TABLE].exists():
            continue
        meta = model._meta
        base = f"/admin/{meta.app_label}/{meta.model_name}/"
        for kind, url in (
            ("changelist", base),
            ("change page", f"{base}{_middle_pk(model)}/change/"),
        ):
            series = _measure(pm, url, requests=30, minimum=10)
            name = f"admin {meta.app_label}.{meta.model_name} {kind}"
            _figure(f"{name} p95", series, 200.0)
            if series.status == 200:
                record(f"{name} queries", series.queries, "queries", target=12)
        del model_admin


def _middle_pk(model: Any) -> Any:
    count = model.objects.count()
    return model.objects.order_by("pk").values_list("pk", flat=True)[count // 2]


def _pages(pm: Client, partner: Client, customer: Client, customer_user: Any) -> None:
    print("HTML pages:")
    _figure("/bench/ as PM p95", _measure(pm, "/bench/"), 150.0)
    _figure("/bench/ as partner p95", _measure(partner, "/bench/"), 150.0)
    server = Server.objects.filter(status="assembling").order_by("pk").first()
    if server is not None:
        _figure("/bench/servers/<id>/ as PM p95", _measure(pm, f"/bench/servers/{server.pk}/"), None)
    order = Order.objects.visible_to(customer_user).filter(servers__isnull=False).order_by("pk").first()
    _figure("/portal/ (orders) as customer p95", _measure(customer, "/portal/"), None)
    if order is not None:
        _figure(
            "/portal/orders/<id>/ as customer p95", _measure(customer, f"/portal/orders/{order.pk}/"), None
        )
        first_server = order.servers.order_by("sequence").first()
        _figure(
            "/portal/servers/<id>/ as customer p95",
            _measure(customer, f"/portal/servers/{first_server.pk}/"),
            None,
        )
    _figure("/portal/warranty/ as customer p95", _measure(customer, "/portal/warranty/"), None)
    _figure("/pm/ (pipeline) as PM p95", _measure(pm, "/pm/"), None)
    big = Order.objects.filter(servers__isnull=False).order_by("-server_count", "pk").first()
    if big is not None:
        _figure("/pm/orders/<id>/ as PM p95", _measure(pm, f"/pm/orders/{big.pk}/"), None)
    _figure("/pm/search/?q=sc-0 as PM p95", _measure(pm, "/pm/search/?q=sc-0"), None)


def run() -> None:
    size = SMALL if os.environ.get("BENCH_SCALE") == "small" else scale.ScaleSize()
    start = time.perf_counter()
    counts = scale.seed(size=size)
    seeded = time.perf_counter() - start
    print(
        f"seed_scale: {sum(counts.values()):,} rows ({size.orders:,} orders, {size.servers:,} servers, "
        f"{counts.get('builds.Connector', 0):,} connectors, {size.components:,} components, "
        f"{counts.get('inventory.StockMovement', 0):,} stock movements, {size.samples:,} samples) "
        f"in {seeded:.1f} s on {connection.vendor}"
    )
    record("seed_scale, full size" if size == scale.ScaleSize() else "seed_scale, small size", seeded, "s")
    # A server process starts on a loaded database, not after writing it: what the seeding left alive joins
    # the frozen startup heap (as werkbank/wsgi.py froze the application's), so the series below scan what
    # a server's collector would scan.
    freeze_startup_heap()
    users = get_user_model().objects
    clients = {}
    for username in (scale.PM_USERNAME, "scale-partner-001", "scale-customer-001"):
        client = Client()
        client.force_login(users.get(username=username))
        clients[username] = client
    pm, partner, customer = clients.values()
    _api(pm, partner)
    _admin(pm)
    _pages(pm, partner, customer, users.get(username="scale-customer-001"))
