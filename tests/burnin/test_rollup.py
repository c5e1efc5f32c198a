"""The telemetry rollup: written by the ingest in its transaction, and read by the chart query with the
same result as reading every sample (whichever database runs the tests; both paths forced)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from burnin.models import BurnInRun, TelemetryRollup, TelemetrySample
from burnin.selectors import telemetry_grid, telemetry_series
from burnin.services import ingest
from burnin.services.samples import store_rollup
from tests import factories
from tests.burnin.ingest_rig import Rig, counts, make_rig, post_report, seed003_bytes, stored_files
from werkbank.access import Purpose

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
SPAN_S = 6000  # 3,000 rollup buckets of 2 s
BUCKETS = 3000


def _hand_made(run: BurnInRun) -> None:
    """Two GPUs over 6,000 s, values that add up exactly in binary (quarters), with what the rollup must
    carry through: unread values (NULLs) mixed with read ones, samples before the start and after the
    end, a gap, samples off the second, sub-millisecond times, and each clock-event bit somewhere."""
    rows = []
    for i in range(0, SPAN_S, 3):
        rows.append(
            TelemetrySample(
                run=run,
                gpu_index=0,
                at=START + timedelta(seconds=i, milliseconds=250 * (i % 4)),
                temp_c=None if i % 7 == 0 else 40.0 + (i % 16) * 0.25,
                margin_c=None if i % 11 == 0 else 30.0 - (i % 8) * 0.5,
                power_w=float(i % 600),
                sm_mhz=None if i % 5 == 0 else 1400.0 + (i % 3) * 0.25,
                clock_event_mask=[0x4, 0x0, None, 0x40 if i % 97 == 0 else 0x4, 0x8 | 0x4][i % 5],
            )
        )
    rows += [
        TelemetrySample(
            run=run,
            gpu_index=5,
            at=START + timedelta(seconds=i, microseconds=7),
            temp_c=55.5,
            power_w=300.25,
            clock_event_mask=0x20 if i == 3300 else 0,
        )
        for i in range(0, SPAN_S, 11)
        if not 1000 <= i < 2500
    ]
    rows += [
        TelemetrySample(run=run, gpu_index=0, at=START - timedelta(seconds=40), temp_c=20.0, power_w=1.0),
        TelemetrySample(run=run, gpu_index=0, at=START + timedelta(seconds=SPAN_S), temp_c=99.0),
        TelemetrySample(run=run, gpu_index=5, at=START + timedelta(seconds=SPAN_S + 25), temp_c=98.0),
    ]
    TelemetrySample.objects.bulk_create(rows)


@pytest.fixture
def run(tenants: Any) -> BurnInRun:
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in")
    run = factories.make_burnin_run_row(server, started_at=START, ended_at=START + timedelta(seconds=SPAN_S))
    _hand_made(run)
    return run


@pytest.mark.parametrize("max_points", [10, 137, 600, 999, 1000, 2999, BUCKETS])
def test_the_rollup_gives_the_series_the_samples_give(run, max_points, django_assert_num_queries):
    raw = telemetry_series(run=run, max_points=max_points, rollup=False)
    without = telemetry_series(run=run, max_points=max_points)  # no rollup yet: the samples serve
    assert without == raw
    assert store_rollup(run) == TelemetryRollup.objects.filter(run=run).count() > 0
    with django_assert_num_queries(1):
        rolled = telemetry_series(run=run, max_points=max_points)
    assert rolled == raw
    assert raw.series[0].throttled.count(True) > 0 and raw.series[5].throttled.count(True) == 1
    assert None in raw.series[5].margin_min_c and len(raw.series) == 2
    # The rollup alone answers: without the samples, the same series; the samples' path has nothing.
    TelemetrySample.objects.filter(run=run).delete()
    assert telemetry_series(run=run, max_points=max_points) == raw
    assert telemetry_series(run=run, max_points=max_points, rollup=False).series == {}


def test_the_rollup_holds_sums_counts_and_extremes_per_bucket(run):
    store_rollup(run)
    rows = TelemetryRollup.objects.filter(run=run, gpu_index=0)
    assert {row.width_us for row in rows} == {SPAN_S * 1_000_000 // BUCKETS}
    first = rows.get(bucket=0)  # the early sample (clamped in) and the sample at 0 s
    assert (first.samples, first.temp_n, first.temp_sum_c, first.temp_max_c) == (2, 1, 20.0, 20.0)
    assert (first.power_n, first.power_sum_w, first.sm_n, first.sm_sum_mhz) == (2, 1.0, 0, None)
    last = rows.get(bucket=BUCKETS - 1)  # the sample at the very end, clamped in (5,997 s is one before)
    assert (last.samples, last.temp_n, last.temp_max_c, last.power_n) == (1, 1, 99.0, 0)
    assert sum(row.samples for row in TelemetryRollup.objects.filter(run=run)) == (
        TelemetrySample.objects.filter(run=run).count()
    )


def test_charts_finer_than_the_rollup_read_the_samples(run, django_assert_num_queries):
    store_rollup(run)
    TelemetryRollup.objects.filter(run=run).update(temp_max_c=1000.0)  # would show if it were read
    with django_assert_num_queries(1):
        fine = telemetry_series(run=run, max_points=BUCKETS + 1)
    assert 1000.0 not in fine.series[0].temp_max_c
    assert 1000.0 in telemetry_series(run=run, max_points=BUCKETS).series[0].temp_max_c


def test_the_grid_keeps_the_usual_chart_sizes_whole_and_falls_back_to_2000_buckets():
    hours_72 = 72 * 3600 * 1_000_000
    for points, width_s in ((1000, 259.2), (600, 432.0), (500, 518.4), (10, 25_920.0)):
        grid = telemetry_grid(hours_72, points)
        assert (grid.width_us / 1e6, grid.count, grid.rollup_width_us) == (width_s, points, 86_400_000)
    # 10,000 s is no whole number of microseconds in 3,000: 2,000 buckets of 5 s.
    assert telemetry_grid(10_000_000_000, 1000).rollup_width_us == 5_000_000
    assert telemetry_grid(10_000_000_000, 2001).rollup_width_us is None


def test_a_run_without_an_end_rolls_up_to_its_last_sample(tenants, django_assert_num_queries):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in")
    run = factories.make_burnin_run_row(server, started_at=START, result="incomplete")
    TelemetrySample.objects.bulk_create(
        TelemetrySample(run=run, gpu_index=2, at=START + timedelta(seconds=i), power_w=float(i))
        for i in range(0, 3001, 2)
    )
    raw = telemetry_series(run=run, max_points=100, rollup=False)
    store_rollup(run)
    with django_assert_num_queries(2):  # the last sample, then the rollup
        assert telemetry_series(run=run, max_points=100) == raw
    assert raw.interval_s == 30.0 and raw.series[2].power_w[-1] == pytest.approx(2985.0)


def test_an_empty_run_has_no_rollup(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in")
    run = factories.make_burnin_run_row(server, started_at=START, result="incomplete")
    assert store_rollup(run) == 0 and not TelemetryRollup.objects.exists()


# --- the ingest writes it ------------------------------------------------------------------------------


@pytest.fixture
def rig(tenants) -> Rig:
    return make_rig(tenants)


def test_the_ingest_writes_the_rollup_and_the_chart_reads_it(rig, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = post_report(rig.t.user_p, rig.url(), seed003_bytes())
    assert response.status_code == 201, response.content
    run = BurnInRun.objects.get()
    rollup = TelemetryRollup.objects.filter(run=run)
    assert rollup.count() > 0
    assert sum(row.samples for row in rollup) == TelemetrySample.objects.filter(run=run).count() == 6 * 310
    for max_points in (100, 1000):
        _same_within_rounding(
            telemetry_series(run=run, max_points=max_points),
            telemetry_series(run=run, max_points=max_points, rollup=False),
        )


def _same_within_rounding(rolled: Any, raw: Any) -> None:
    """The same buckets and flags; means equal but for the last digit: seed 003's decimals do not add up
    exactly in binary, and the order of the additions (PostgreSQL's parallel workers, the rollup's sums)
    can tip a mean ending in 5 at the third decimal either way of the shown two."""
    assert (rolled.span_s, rolled.interval_s, set(rolled.series)) == (
        raw.span_s,
        raw.interval_s,
        set(raw.series),
    )
    for gpu, series in raw.series.items():
        other = rolled.series[gpu]
        for name in ("bucket", "t_s", "temp_max_c", "margin_min_c", "throttled", "power_capped"):
            assert getattr(other, name) == getattr(series, name), (gpu, name)
        for name in ("temp_c", "power_w", "sm_mhz"):
            assert getattr(other, name) == pytest.approx(getattr(series, name), abs=0.0101), (gpu, name)


def test_a_failed_ingest_leaves_no_rollup(rig, django_capture_on_commit_callbacks, monkeypatch):
    """The rollup is written in the ingest's transaction: a failure after it (here the audit) undoes it."""
    written = []

    def rollup_then_fail(run: BurnInRun) -> int:
        written.append(store_rollup(run))
        assert TelemetryRollup.objects.filter(run=run).count() == written[-1] > 0
        raise RuntimeError("the disk is full")

    monkeypatch.setattr(ingest, "store_rollup", rollup_then_fail)
    before = counts()
    with pytest.raises(RuntimeError), django_capture_on_commit_callbacks(execute=True):
        post_report(rig.t.user_p, rig.url(), seed003_bytes())
    assert written and counts() == before and stored_files() == []
    assert not TelemetryRollup.objects.exists() and not TelemetrySample.objects.exists()


def test_the_rollup_is_visible_to_who_sees_the_run(run, tenants):
    store_rollup(run)
    total = TelemetryRollup.objects.filter(run=run).count()
    for user in (tenants.pm, tenants.user_a):
        assert TelemetryRollup.objects.visible_to(user, purpose=Purpose.VIEW).count() == total, user.username
    for user in (tenants.user_b, tenants.user_q, tenants.outsider):
        assert not TelemetryRollup.objects.visible_to(user, purpose=Purpose.VIEW).exists(), user.username
