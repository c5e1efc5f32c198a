"""The downsampled telemetry query behind the burn-in charts.

Seeds 1.7M telemetry samples: eight 72 h runs of 8 GPUs at 10 s (207,360 samples each, the issue's ingest
case) and one shorter run, through COPY on PostgreSQL (bulk inserts on SQLite), then each run's rollup as
the ingest writes it (`store_rollup`, timed). Figures: p50/p95 of `telemetry_series(run, max_points=1000)`
for one 72 h run as the endpoint runs it, from the rollup (target ≤ 100 ms, issue 10 "Performance"), and
the same over the raw samples (`rollup=False`), with their ratio; the endpoint
`GET /api/v1/burnin/telemetry/{id}/` end to end; on PostgreSQL the plans. Ratio too: the query against
fetching the run's raw rows into Python (what downsampling in the application would cost before it even
started).
"""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bench.report import record
from builds.models import Server
from burnin.models import BurnInRun, TelemetrySample
from burnin.selectors import telemetry_series
from burnin.services.samples import store_rollup
from orders.models import Order, ServerConfiguration
from werkbank.models import Organization

GPUS = 8
STEP_S = 10
FULL_STEPS = 72 * 3600 // STEP_S  # 25,920 per GPU: 207,360 samples per run
FULL_RUNS = 8
TOTAL = 1_700_000
REPEAT = 20
COLUMNS = (
    "run_id",
    "gpu_index",
    "at",
    "temp_c",
    "margin_c",
    "power_w",
    "sm_mhz",
    "util_pct",
    "clock_event_mask",
    "pcie_gen",
    "pcie_width",
)


def _timed(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def _p(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[int(q) - 1]


def _rows(run_id: int, started_at: datetime, steps: int, rng: random.Random) -> Iterator[tuple]:
    """Seed 003-like load: 60→88 °C warming, ~590 W at the SW power cap, an odd thermal slowdown."""
    for gpu in range(GPUS):
        for step in range(steps):
            temp = min(60.0 + step / 60, 84.0 + gpu * 0.5) + rng.random()
            mask = 0x40 if rng.random() < 0.0005 else 0x4
            yield (
                run_id,
                gpu,
                started_at + timedelta(seconds=step * STEP_S),
                temp,
                90.0 - temp,
                580.0 + 20 * rng.random(),
                1380.0 + 15 * rng.random(),
                100.0,
                mask,
                4,
                8 if gpu in (2, 4) else 16,
            )


def _insert(rows: Iterator[tuple]) -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            sql = f"COPY burnin_telemetrysample ({', '.join(COLUMNS)}) FROM STDIN"
            with cursor.cursor.copy(sql) as copy:
                for row in rows:
                    copy.write_row(row)
        return
    fields = [TelemetrySample._meta.get_field(name.removesuffix("_id")) for name in COLUMNS]
    batch: list[TelemetrySample] = []
    for row in rows:
        batch.append(TelemetrySample(**{f.attname: v for f, v in zip(fields, row, strict=True)}))
        if len(batch) == 20_000:
            TelemetrySample.objects.bulk_create(batch)
            batch = []
    TelemetrySample.objects.bulk_create(batch)


def _seed() -> tuple[object, list[BurnInRun]]:
    customer = Organization.objects.create(name="Bench burn-in charts customer", kind="customer")
    configuration = ServerConfiguration.objects.create(
        name="Bench burn-in charts", psu_count=5, psu_rating_w=1600, psu_redundant=1
    )
    order = Order.objects.create(
        reference="WB-2026-8801", customer=customer, configuration=configuration, server_count=9
    )
    rng = random.Random(3)
    runs, left = [], TOTAL
    for n in range(FULL_RUNS + 1):
        steps = FULL_STEPS if n < FULL_RUNS else left // GPUS
        server = Server.objects.create(
            order=order,
            sequence=n + 1,
            hostname=f"bench-burn-{n}",
            asset_tag=f"BENCH-BURN-{n}",
            status="burn_in",
        )
        started_at = datetime(2026, 3, 1, tzinfo=UTC) + timedelta(days=4 * n)
        run = BurnInRun.objects.create(
            server=server,
            report_id=f"{n:064d}",
            probe_version="bench",
            schema_version="1",
            started_at=started_at,
            ended_at=started_at + timedelta(seconds=steps * STEP_S),
            result="pass",
            rules_version="bench",
            report=f"burnin/bench/{n}.json.gz",
        )
        _insert(_rows(run.pk, started_at, steps, rng))
        left -= steps * GPUS
        runs.append(run)
    if connection.vendor == "postgresql":
        # What autovacuum does soon after a big insert: statistics, hint bits, the visibility map.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE burnin_telemetrysample")
    pm = get_user_model().objects.create_user("bench-charts-pm", password="x", is_staff=True)
    pm.groups.add(Group.objects.get_or_create(name="project-managers")[0])
    return pm, runs


def _plan(run: BurnInRun, *, rollup: bool) -> str:
    """The plan PostgreSQL picks for the chart query: its scans and how it groups."""
    if connection.vendor != "postgresql":
        return "n/a (SQLite)"
    with CaptureQueriesContext(connection) as queries:
        telemetry_series(run=run, max_points=1000, rollup=rollup)
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) {queries.captured_queries[-1]['sql']}")
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan
    nodes, found = [plan[0]["Plan"]], []
    while nodes:
        node = nodes.pop(0)
        found.append(f"{node['Node Type']} {node.get('Index Name', '')}".strip())
        nodes.extend(node.get("Plans", []))
    return " → ".join(found)


def run() -> None:
    start = time.perf_counter()
    pm, runs = _seed()
    seeded = time.perf_counter() - start
    count = TelemetrySample.objects.count()
    target = runs[FULL_RUNS // 2]
    print(
        f"burn-in charts: seeded {count:,} samples ({FULL_RUNS} runs × {GPUS} GPUs × {FULL_STEPS:,} + one of "
        f"{count - FULL_RUNS * GPUS * FULL_STEPS:,}) in {seeded:.1f} s"
    )
    rollup_s = []
    for each in runs:
        elapsed = time.perf_counter()
        rows = store_rollup(each)
        if each.pk != runs[-1].pk:
            rollup_s.append(time.perf_counter() - elapsed)
    print(
        "rollup (INSERT … SELECT, as the ingest writes it) of a 72 h run: "
        f"{statistics.median(rollup_s) * 1000:.0f} ms median of {len(rollup_s)} "
        f"({rows:,} rows for the short run)"
    )
    timings = {}
    for rollup in (True, False):
        telemetry_series(run=target, max_points=1000, rollup=rollup)  # warm up
        timings[rollup] = _timed(
            lambda rollup=rollup: telemetry_series(run=target, max_points=1000, rollup=rollup), REPEAT
        )
    query, raw_query = timings[True], timings[False]
    series = telemetry_series(run=target, max_points=1000)
    raw_series = telemetry_series(run=target, max_points=1000, rollup=False)
    # The same buckets and flags; the means to the shown two decimals, but for ties at the third that the
    # order of float additions can tip (the rollup's sums, PostgreSQL's parallel workers).
    for gpu, each in raw_series.series.items():
        rolled = series.series[gpu]
        assert (rolled.bucket, rolled.throttled, rolled.temp_max_c) == (
            each.bucket,
            each.throttled,
            each.temp_max_c,
        )
        for name in ("temp_c", "power_w", "sm_mhz"):
            pairs = zip(getattr(rolled, name), getattr(each, name), strict=True)
            assert all(abs(a - b) <= 0.0101 for a, b in pairs), (gpu, name)
    points = max(len(gpu.t_s) for gpu in series.series.values())
    record("telemetry chart query (rollup) p95", _p(query, 95), "ms", target=100)
    record("telemetry chart query (raw samples) p95", _p(raw_query, 95), "ms", note="the slow alternative")
    print(
        f"telemetry_series(max_points=1000), one 72 h run of {GPUS * FULL_STEPS:,} samples, as the endpoint "
        f"runs it (rollup): p50 {_p(query, 50):6.1f} ms  p95 {_p(query, 95):6.1f} ms  (target ≤ 100 ms; "
        f"{points} points per GPU)\n  plan: {_plan(target, rollup=True)}"
    )
    print(
        f"the same over the raw samples (rollup=False):  p50 {_p(raw_query, 50):6.1f} ms  "
        f"p95 {_p(raw_query, 95):6.1f} ms; ratio raw / rollup (p50): "
        f"{_p(raw_query, 50) / _p(query, 50):.1f}; same series: yes (to the shown decimals)\n"
        f"  plan: {_plan(target, rollup=False)}"
    )
    client = Client()
    client.force_login(pm)
    url = f"/api/v1/burnin/telemetry/{target.pk}/?max_points=1000"
    assert client.get(url).status_code == 200
    http = _timed(lambda: client.get(url), REPEAT)
    size = len(client.get(url).content)
    record("telemetry chart API p95", _p(http, 95), "ms", note=f"{size / 1024:.0f} KiB JSON")
    print(f"GET {url}: p50 {_p(http, 50):6.1f} ms  p95 {_p(http, 95):6.1f} ms  ({size / 1024:.0f} KiB JSON)")
    columns = ("gpu_index", "at", "temp_c", "margin_c", "power_w", "sm_mhz", "util_pct", "clock_event_mask")
    raw = _timed(lambda: list(TelemetrySample.objects.filter(run=target).values_list(*columns)), 3)
    print(
        f"fetching the run's raw rows instead: p50 {_p(raw, 50):6.1f} ms; "
        f"ratio raw fetch / downsampled query (p50): {_p(raw, 50) / _p(query, 50):.1f}"
    )
