"""The fleet's quality at scale (issue #29): the failure rates per lot, supplier, part and connector position
on the scale dataset (10,000 servers, 100,000 components: `ops.scale`, as bench_scale), with findings,
claims and bench blacklistings added and each attributed.

Added after the seed, deterministically (`random.Random(29)`): `FINDINGS` fail findings on the burn-in runs
(burn-in, and a share as field findings), `CLAIMS` claims with their warranty records, `BLACKLISTS`
blacklisted connectors, each with its attribution (mostly the component's, some the connector's, a few the
host's), and one lot of ten with three failures more, so that one row is flagged.

Figures: `quality_rows(kind)` for each table (p95, and its queries, which must be the same at any size), and
GET /api/v1/quality/lots/ and /positions/ as a PM, one lot's detail with its evidence, and the page
/pm/quality/ when it exists: p95 against the issue's 300 ms. The telemetry samples are left out of the seed
(`SAMPLES`): no quality figure reads them, and they are most of its time.

`BENCH_SCALE=small` seeds a tenth of the fleet, for a quick try of the bench itself.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bench.bench_scale import REQUESTS, SERIES_BUDGET_S, Series, _figure, _measure
from bench.report import record
from builds.models import Connector, ConnectorBlacklist, Installation, Server
from burnin.models import BurnInRun, Finding
from ops import scale
from pm.quality.cache import bump_generation
from pm.quality.rows import KINDS
from pm.quality.selectors import quality_rows
from warranty.models import Attribution, WarrantyClaim, WarrantyRecord
from werkbank.apps import freeze_startup_heap

#: What is added to the seeded fleet, per 10,000 servers (a tenth of it at the small size).
FINDINGS = 2_000
FIELD_SHARE = 0.15
CLAIMS = 1_000
BLACKLISTS = 500
SAMPLES = 17_000
TARGET_MS = 300.0
FULL = scale.ScaleSize(samples=SAMPLES)
SMALL = scale.ScaleSize(servers=1_000, components=10_000, samples=SAMPLES // 10, orders=200)


def _cause(rng: random.Random) -> str:
    draw = rng.random()
    return "component" if draw < 0.8 else "connector" if draw < 0.95 else "host"


def _attribution(
    server_id: int, stage: str, at: Any, cause: str, component_id: int, connector_id: int, **source: Any
) -> Attribution:
    return Attribution(
        server_id=server_id,
        stage=stage,
        occurred_at=at,
        proposed_cause=cause,
        proposed_reason="Seeded for the bench.",
        cause=cause,
        component_id=component_id,
        connector_id=connector_id,
        **source,
    )


def add_failures(rng: random.Random, *, share: float = 1.0) -> dict[str, int]:
    """Findings, claims and blacklistings on the seeded fleet, each attributed; a flagged lot among them.
    `share`: of FINDINGS, CLAIMS and BLACKLISTS."""
    fitted = list(
        Installation.objects.filter(removed_at__isnull=True, component__part__category="gpu")
        .order_by("pk")
        .values_list("server_id", "component_id", "connector_id", "component__lot_id")
    )
    runs = dict(BurnInRun.objects.order_by("pk").values_list("server_id", "pk"))
    with_runs = [row for row in fitted if row[0] in runs]
    now = timezone.now()
    findings, attributions = [], []
    chosen = rng.sample(with_runs, min(int(FINDINGS * share), len(with_runs)))
    # The flagged lot: three failures among the GPUs of one lot (its ten-odd units).
    lot_id = chosen[0][3]
    chosen += [row for row in with_runs if row[3] == lot_id and row not in chosen][:3]
    for server_id, *_ in chosen:
        findings.append(
            Finding(
                run_id=runs[server_id],
                code="gpu_xid_errors",
                severity="fail",
                subject="GPU 0",
                gpu_index=0,
                message="Xid 79 (seeded)",
                rule_version="bench",
            )
        )
    Finding.objects.bulk_create(findings, batch_size=1_000)
    for finding, (server_id, component_id, connector_id, _) in zip(findings, chosen, strict=True):
        stage = "field" if rng.random() < FIELD_SHARE else "burn_in"
        at = now - timedelta(days=rng.randrange(1, 700))
        attributions.append(
            _attribution(server_id, stage, at, _cause(rng), component_id, connector_id, finding=finding)
        )

    claimed = rng.sample(fitted, min(int(CLAIMS * share), len(fitted)))
    servers = {
        s.pk: s for s in Server.objects.filter(pk__in={row[0] for row in claimed}).select_related("order")
    }
    start = date(2025, 6, 1)
    records = WarrantyRecord.objects.bulk_create(
        (
            WarrantyRecord(
                kind="component",
                server_id=server_id,
                component_id=component_id,
                order_id=servers[server_id].order_id,
                customer_id=servers[server_id].order.customer_id,
                serial=f"BENCH-{component_id}",
                description="GPU (seeded)",
                start_date=start,
                term_months=36,
                end_date=start + timedelta(days=1096),
            )
            for server_id, component_id, _, _ in claimed
        ),
        batch_size=1_000,
    )
    claims = WarrantyClaim.objects.bulk_create(
        (
            WarrantyClaim(
                number=f"RMA-2099-{n:05d}",
                record=record,
                customer_id=record.customer_id,
                description="Dead (seeded)",
            )
            for n, record in enumerate(records, start=1)
        ),
        batch_size=1_000,
    )
    for claim, (server_id, component_id, connector_id, _) in zip(claims, claimed, strict=True):
        at = now - timedelta(days=rng.randrange(1, 700))
        attributions.append(
            _attribution(server_id, "claim", at, _cause(rng), component_id, connector_id, claim=claim)
        )

    free = list(
        Connector.objects.filter(kind="pcie_slot", installations__isnull=True)
        .order_by("pk")
        .values_list("server_id", "pk")[: int(BLACKLISTS * share) * 4]
    )
    picked = rng.sample(free, min(int(BLACKLISTS * share), len(free)))
    blacklists = ConnectorBlacklist.objects.bulk_create(
        (
            ConnectorBlacklist(connector_id=connector_id, reason="x8 link (seeded)")
            for _, connector_id in picked
        ),
        batch_size=1_000,
    )
    for blacklist, (server_id, connector_id) in zip(blacklists, picked, strict=True):
        at = now - timedelta(days=rng.randrange(1, 700))
        attributions.append(
            _attribution(server_id, "bench", at, "connector", None, connector_id, blacklist=blacklist)
        )
    Attribution.objects.bulk_create(attributions, batch_size=1_000)
    return {
        "findings": len(findings),
        "claims": len(claims),
        "blacklists": len(blacklists),
        "attributions": len(attributions),
    }


def _time_call(name: str, call: Callable[[], Any]) -> Series:
    """One call to warm up, one to count its queries, then timed calls within the series budget."""
    call()
    with CaptureQueriesContext(connection) as captured:
        result = call()
    sql_ms = sum(float(query["time"]) for query in captured.captured_queries) * 1000
    series = Series(name, 200, [], len(captured), "", sql_ms, count=len(result))
    started = time.perf_counter()
    for number in range(REQUESTS):
        if number >= 10 and time.perf_counter() - started > SERIES_BUDGET_S:
            break
        begin = time.perf_counter()
        call()
        series.samples.append((time.perf_counter() - begin) * 1000)
    return series


def run() -> None:
    size = SMALL if os.environ.get("BENCH_SCALE") == "small" else FULL
    start = time.perf_counter()
    counts = scale.seed(size=size)
    print(
        f"seed_scale: {sum(counts.values()):,} rows ({size.servers:,} servers, {size.components:,} "
        f"components, {counts.get('builds.Installation', 0):,} installations) in "
        f"{time.perf_counter() - start:.1f} s"
    )
    start = time.perf_counter()
    added = add_failures(random.Random(29), share=size.servers / 10_000)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ANALYZE")
    print(
        f"added {', '.join(f'{n:,} {what}' for what, n in added.items())} "
        f"in {time.perf_counter() - start:.1f} s"
    )
    freeze_startup_heap()

    print("selectors:")
    for kind in KINDS:
        series = _time_call(f"quality_rows({kind!r})", lambda kind=kind: quality_rows(kind))
        flagged = sum(row.flagged for row in quality_rows(kind))
        _figure(
            f"quality_rows({kind!r}) p95", series, TARGET_MS, note=f"{series.count:,} rows, {flagged} flagged"
        )
    pm = Client()
    pm.force_login(get_user_model().objects.get(username=scale.PM_USERNAME))
    print("API and page, as a PM:")
    for kind in ("lots", "positions"):
        _figure(f"/api/v1/quality/{kind}/ p95", _measure(pm, f"/api/v1/quality/{kind}/"), TARGET_MS)
    worst = quality_rows("lots")[0]
    print(f"  the worst lot: {worst.sentence()} (flagged: {worst.flagged})")
    _figure(
        "/api/v1/quality/lots/<worst>/ p95", _measure(pm, f"/api/v1/quality/lots/{worst.key}/"), TARGET_MS
    )
    # The page and the API read the tables through pm/quality/cache.py: kept while the fleet's fingerprint
    # holds. Warm (the fleet unchanged since the last request) against the target; cold (every request
    # after a change, as the first after a new attribution) measured beside it, with its ratio.
    page = _measure(pm, "/pm/quality/")
    _figure("/pm/quality/ p95 (tables kept)", page, TARGET_MS)

    def cold_page() -> list[Any]:
        bump_generation()
        response = pm.get("/pm/quality/")
        assert response.status_code == 200
        return [response]

    cold = _time_call("/pm/quality/ (recomputed)", cold_page)
    _figure("/pm/quality/ p95 (tables recomputed)", cold, None, note="after any change to what it counts")
    if page.samples and cold.samples:
        record("page recomputed / kept (p95)", round(cold.p95 / page.p95, 1), "×")
    record("quality rows flagged (lots)", sum(row.flagged for row in quality_rows("lots")), "rows")
