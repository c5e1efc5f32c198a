"""Handover packs (issue 12): the pack task, the PDF's size, and table pages per second.

World: the demo (`seed_demo`), whose first fleet server is deployed with 31 serials; its burn-in run is
given 72 h of telemetry at 10 s for its 8 GPUs (25,920 samples per GPU, 207,360 in all, bulk-inserted) and
the rollup burn-in writes at ingest. Figures:

- the pack task (`pack_generate`: read, render the PDF, the telemetry CSV, the ZIP, store both files, mark
  ready), median and worst of 5 revisions (target ≤ 2 s of task time), with the share of each step;
- the PDF's size (target ≤ 1 MB) and the ZIP's;
- the telemetry CSV written by PostgreSQL (COPY) against the same CSV written row by row in Python;
- table pages per second: a document of only the warranty table, 4,000 rows, drawn as the pack draws its
  long tables (`GridRows`: one-line rows straight onto the canvas, split between rows at no cost) against
  the same rows as a reportlab Table of paragraphs that reportlab splits page by page (target ≥ 100
  pages/s).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import replace
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test.utils import override_settings

from bench.report import record
from builds.models import Server
from burnin.models import BurnInRun, TelemetryRollup, TelemetrySample
from burnin.selectors import telemetry_csv, telemetry_csv_rows
from burnin.services.samples import store_rollup
from warranty.documents import pack_pdf, table_pdf
from warranty.models import HandoverPack
from warranty.selectors import pack_data, warranty_rows
from warranty.services.packs import pack_generate, pack_render, pack_request
from werkbank.celery import app as celery_app

GPUS, HOURS, INTERVAL_S = 8, 72, 10
REVISIONS = 5
TABLE_ROWS = 4000


def _seconds(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def _telemetry(server: Server) -> BurnInRun:
    """Replace the server's run's telemetry by 72 h at 10 s for 8 GPUs, and write its rollup."""
    run = BurnInRun.objects.filter(server=server).order_by("-started_at").first()
    run.ended_at = run.started_at + timedelta(hours=HOURS)
    run.save(update_fields=["ended_at"])
    TelemetrySample.objects.filter(run=run).delete()
    TelemetryRollup.objects.filter(run=run).delete()
    steps = HOURS * 3600 // INTERVAL_S
    batch: list[TelemetrySample] = []
    for gpu in range(GPUS):
        for step in range(steps):
            warm = min(step / 360, 1.0)
            batch.append(
                TelemetrySample(
                    run=run,
                    gpu_index=gpu,
                    at=run.started_at + timedelta(seconds=step * INTERVAL_S),
                    temp_c=40 + 38 * warm + (step % 97) / 50,
                    margin_c=50 - 38 * warm,
                    power_w=120 + 440 * warm + (step % 31) / 3,
                    sm_mhz=2700.0,
                    util_pct=100.0,
                    clock_event_mask=4,
                    pcie_gen=5,
                    pcie_width=16,
                )
            )
            if len(batch) == 20_000:
                TelemetrySample.objects.bulk_create(batch)
                batch = []
    TelemetrySample.objects.bulk_create(batch)
    store_rollup(run)
    return run


def run() -> None:
    # The packs' tasks run in-process: with REDIS_URL set they would otherwise be published to a queue that
    # no worker of this throwaway database serves.
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        with tempfile.TemporaryDirectory() as media, override_settings(MEDIA_ROOT=media):
            _run()
    finally:
        celery_app.conf.task_always_eager = eager


def _run() -> None:
    start = time.perf_counter()
    call_command("seed_demo", "--quiet")
    server = Server.objects.get(asset_tag="WB-2026-0001-01")
    pm = get_user_model().objects.get(username="pm")
    run = _telemetry(server)
    samples = TelemetrySample.objects.filter(run=run).count()
    print(
        f"handover: demo seeded, {samples:,} samples of {GPUS} GPUs over {HOURS} h at {INTERVAL_S} s "
        f"written in {time.perf_counter() - start:.1f} s ({connection.vendor})"
    )

    # The pack task, revision by revision (the first also warms the fonts and the code).
    times, pack = [], None
    for _ in range(REVISIONS):
        pack, _ = pack_request(server=server, actor=pm, language="en")  # autocommit: its task runs eagerly …
        HandoverPack.objects.filter(pk=pack.pk).update(status="queued", progress=0)  # … so run it again
        HandoverPack.objects.filter(pk=pack.pk).update(status="failed")  # as a retry would find it
        seconds, pack = _seconds(lambda pk=pack.pk: pack_generate(pack_id=pk))
        times.append(seconds)
    assert pack is not None and pack.status == "ready"
    record(f"handover pack task (median of {REVISIONS})", statistics.median(times), "s", target=2)
    print(
        f"pack task (pack_generate, PDF + CSV + ZIP, stored): median {statistics.median(times):.2f} s, "
        f"worst {max(times):.2f} s of {REVISIONS} (target ≤ 2 s)"
    )
    read_s, data = _seconds(lambda: pack_data(server=server))
    pdf_s, _pdf = _seconds(lambda: pack_pdf(data, revision=1, language="en", generated_at=pack.finished_at))
    csv_s, csv = _seconds(lambda: telemetry_csv(run=run))
    rows_s, rows_csv = _seconds(lambda: telemetry_csv_rows(run=run))
    render_s, _ = _seconds(lambda: pack_render(pack))
    print(
        f"  steps: read {read_s * 1000:.0f} ms, PDF {pdf_s * 1000:.0f} ms, "
        f"telemetry CSV {csv_s * 1000:.0f} ms; the whole render {render_s * 1000:.0f} ms"
    )
    record("handover pack PDF size", pack.pdf_size / 1e6, "MB", target=1)
    print(
        f"PDF {pack.pdf_size / 1e6:.2f} MB (target ≤ 1 MB), ZIP {pack.zip_size / 1e6:.2f} MB, "
        f"CSV {len(csv) / 1e6:.1f} MB uncompressed"
    )
    assert csv == rows_csv
    print(
        f"telemetry CSV: PostgreSQL COPY {csv_s * 1000:.0f} ms against rows written in Python "
        f"{rows_s * 1000:.0f} ms: {rows_s / csv_s:.1f}× faster"
        if connection.vendor == "postgresql"
        else f"telemetry CSV (rows in Python): {rows_s * 1000:.0f} ms"
    )

    # Table pages per second.
    base = warranty_rows(servers=[server])
    rows = [
        replace(base[n % len(base)], serial=f"{base[n % len(base)].serial}-{n}") for n in range(TABLE_ROWS)
    ]
    table_pdf(rows[:100])  # warm
    grid_s, grid = _seconds(lambda: table_pdf(rows))
    table_s, table = _seconds(lambda: table_pdf(rows, grid=False))
    grid_pages, table_pages = grid.count(b"/Type /Page\n"), table.count(b"/Type /Page\n")
    grid_rate, table_rate = grid_pages / grid_s, table_pages / table_s
    record("warranty table PDF pages", grid_rate, "pages/s", target=100, better="higher")
    print(
        f"table pages: {grid_pages} pages of {TABLE_ROWS:,} rows in {grid_s:.2f} s = {grid_rate:.0f} pages/s "
        f"(target ≥ 100); as a reportlab Table of paragraphs: {table_pages} pages in {table_s:.2f} s = "
        f"{table_rate:.0f} pages/s; {grid_rate / table_rate:.1f}× the pages per second"
    )
