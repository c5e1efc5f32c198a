"""Telemetry for the charts: downsampled in SQL (both databases), the endpoint, and the SVG drawn from it."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from burnin.charts import clock_svg, power_svg, temperature_svg, throttle_spans
from burnin.models import TelemetrySample
from burnin.selectors import GpuSeries, Telemetry, telemetry_series
from tests import factories
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
HW_THERMAL = 0x40
SW_POWER_CAP = 0x4


def _server(tenants: Any) -> Any:
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in")
    server.partner = tenants.partner_p
    server.save(update_fields=["partner"])
    return server


def _ten_thousand(run: Any) -> None:
    """GPU 0: 10,000 samples, one a second. In every 10 s bucket k the temperature runs 40..49 °C (mean
    44.5), the margin 50..41 °C (lowest 41), the power is the sample's number (mean 10k + 4.5 W). The mask
    is the SW power cap, except one HW thermal slowdown sample in bucket 500.
    GPU 3: one sample a minute, none between 2,000 s and 4,000 s (a gap)."""
    rows = [
        TelemetrySample(
            run=run,
            gpu_index=0,
            at=START + timedelta(seconds=i),
            temp_c=40.0 + i % 10,
            margin_c=50.0 - i % 10,
            power_w=float(i),
            sm_mhz=1400.0,
            util_pct=100.0,
            clock_event_mask=HW_THERMAL if i == 5003 else SW_POWER_CAP,
        )
        for i in range(10_000)
    ]
    rows += [
        TelemetrySample(run=run, gpu_index=3, at=START + timedelta(seconds=i), temp_c=60.0, power_w=300.0)
        for i in range(0, 10_000, 60)
        if not 2000 <= i < 4000
    ]
    TelemetrySample.objects.bulk_create(rows, batch_size=2000)


@pytest.fixture
def run(tenants: Any) -> Any:
    run = factories.make_burnin_run_row(
        _server(tenants), started_at=START, ended_at=START + timedelta(seconds=10_000)
    )
    _ten_thousand(run)
    return run


def test_ten_thousand_samples_become_a_thousand_points_with_the_right_aggregates(
    run, django_assert_num_queries
):
    with django_assert_num_queries(1):
        telemetry = telemetry_series(run=run, max_points=1000)
    assert telemetry.interval_s == 10.0
    gpu = telemetry.series[0]
    assert len(gpu.t_s) == 1000
    for k in (0, 1, 499, 500, 999):
        assert (gpu.bucket[k], gpu.t_s[k]) == (k, 10 * k + 5)
        assert gpu.temp_c[k] == pytest.approx(44.5)
        assert gpu.temp_max_c[k] == 49.0
        assert gpu.margin_min_c[k] == 41.0
        assert gpu.power_w[k] == pytest.approx(10 * k + 4.5)
        assert gpu.sm_mhz[k] == 1400.0
    assert [k for k, flag in enumerate(gpu.throttled) if flag] == [500]
    assert all(gpu.power_capped)
    assert gpu.slowdown_c() == 90.0
    # GPU 3: one sample per bucket where it has any, nothing in the gap, no margin recorded.
    sparse = telemetry.series[3]
    assert len(sparse.t_s) == sum(1 for i in range(0, 10_000, 60) if not 2000 <= i < 4000)
    assert not any(2000 <= t < 4000 for t in sparse.t_s)
    assert set(sparse.temp_c) == {60.0} and set(sparse.margin_min_c) == {None}
    assert not any(sparse.throttled) and sparse.slowdown_c() is None


@pytest.mark.parametrize("max_points", [10, 137, 1000, 5000])
def test_no_series_has_more_points_than_asked(run, max_points):
    # Samples a little outside the run's stated span still land in the first and last bucket.
    TelemetrySample.objects.create(run=run, gpu_index=0, at=START - timedelta(seconds=30), temp_c=30.0)
    TelemetrySample.objects.create(run=run, gpu_index=0, at=START + timedelta(seconds=10_030), temp_c=30.0)
    telemetry = telemetry_series(run=run, max_points=max_points)
    for gpu in telemetry.series.values():
        assert len(gpu.t_s) <= max_points
        assert len({len(getattr(gpu, name)) for name in GpuSeries.__dataclass_fields__}) == 1
    # Up to the rollup's 2,000 buckets (5 s each here: 3,000 do not divide 10,000 s in whole µs) a chart
    # bucket is a whole number of them: 137 points become 134 buckets of 75 s; 10, 1,000 and 5,000 divide
    # the span as they are.
    width = telemetry.interval_s
    assert width == {10: 1000.0, 137: 75.0, 1000: 10.0, 5000: 2.0}[max_points]
    count = math.ceil(10_000 / width)
    assert len(telemetry.series[0].t_s) == count
    first = [i for i in range(10_000) if i < width] + [-30]
    last = [i for i in range(10_000) if i >= width * (count - 1)] + [10_030]
    first_power = [float(i) for i in first[:-1]]  # the early sample has no power: the mean skips it
    assert telemetry.series[0].power_w[0] == pytest.approx(sum(first_power) / len(first_power), abs=0.01)
    assert telemetry.series[0].temp_c[-1] == pytest.approx(
        (sum(40 + i % 10 for i in last[:-1]) + 30) / len(last), abs=0.01
    )
    assert telemetry.series[0].temp_c[0] == pytest.approx(
        (sum(40 + i % 10 for i in first[:-1]) + 30) / len(first), abs=0.01
    )


def test_fewer_samples_than_points_come_back_one_by_one(tenants):
    run = factories.make_burnin_run_row(
        _server(tenants), started_at=START, ended_at=START + timedelta(minutes=2)
    )
    TelemetrySample.objects.bulk_create(
        TelemetrySample(run=run, gpu_index=1, at=START + timedelta(seconds=i), temp_c=float(i))
        for i in range(120)
    )
    telemetry = telemetry_series(run=run, max_points=1000)
    gpu = telemetry.series[1]
    assert telemetry.interval_s == 0.12
    assert gpu.t_s == pytest.approx([float(i) for i in range(120)], abs=0.12)
    assert gpu.temp_c == [float(i) for i in range(120)]


def test_a_run_without_an_end_spans_to_its_last_sample(tenants, django_assert_num_queries):
    run = factories.make_burnin_run_row(_server(tenants), started_at=START, result="incomplete")
    TelemetrySample.objects.bulk_create(
        TelemetrySample(run=run, gpu_index=0, at=START + timedelta(seconds=i), power_w=float(i))
        for i in range(0, 2001, 1)
    )
    with django_assert_num_queries(2):
        telemetry = telemetry_series(run=run, max_points=100)
    assert (telemetry.span_s, telemetry.interval_s) == (2000.0, 20.0)
    assert len(telemetry.series[0].t_s) == 100
    assert telemetry.series[0].power_w[0] == pytest.approx(9.5)  # samples 0..19 s
    assert telemetry.series[0].t_s[0] == 10.0


def test_an_empty_run_has_no_series(tenants):
    run = factories.make_burnin_run_row(_server(tenants), started_at=START, result="incomplete")
    telemetry = telemetry_series(run=run)
    assert telemetry.series == {} and temperature_svg(telemetry) == ""


# --- the endpoint --------------------------------------------------------------------------------------


def test_the_customer_of_the_order_gets_the_downsampled_series(run, tenants, django_assert_num_queries):
    client = api_client(tenants.user_a)
    with django_assert_num_queries(2):  # the run (scoped by the user's memberships), the samples
        response = client.get(f"/api/v1/burnin/telemetry/{run.pk}/?max_points=500")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["run"], body["interval_s"], body["span_s"]) == (run.pk, 20.0, 10_000.0)
    assert set(body["series"]) == {"0", "3"}
    gpu = body["series"]["0"]
    assert {len(values) for values in gpu.values()} == {500}
    assert gpu["t"][0] == 10.0 and gpu["temp_c"][0] == pytest.approx(44.5) and gpu["power_w"][0] == 9.5
    assert gpu["margin_c"][0] == 41.0
    assert [k for k, flag in enumerate(gpu["throttled"]) if flag] == [250]
    assert (
        len(api_client(tenants.pm).get(f"/api/v1/burnin/telemetry/{run.pk}/").json()["series"]["0"]["t"])
        == 1000
    )


def test_other_tenants_get_404_and_anonymous_401(run, tenants):
    url = f"/api/v1/burnin/telemetry/{run.pk}/"
    assert api_client(tenants.user_p).get(url).status_code == 200  # the server's partner
    for user in (tenants.user_b, tenants.user_q, tenants.outsider):
        assert api_client(user).get(url).status_code == 404, user.username
        assert api_client(user).get(url + "?max_points=1").status_code == 404  # no hint before the lookup
    assert api_client(None).get(url).status_code in {401, 403}


@pytest.mark.parametrize("value", ["9", "5001", "many", "-1"])
def test_max_points_out_of_bounds_is_a_400_naming_the_field(run, tenants, value):
    response = api_client(tenants.pm).get(f"/api/v1/burnin/telemetry/{run.pk}/?max_points={value}")
    assert response.status_code == 400
    assert list(response.json()) == ["max_points"]


# --- the SVG -------------------------------------------------------------------------------------------


def _paths(svg: str) -> list[str]:
    return re.findall(r'<path class="series" data-gpu="(\d+)"', svg)


def test_charts_draw_one_path_per_gpu_with_shading_legend_and_slowdown_line(run):
    telemetry = telemetry_series(run=run, max_points=1000)
    temperature = temperature_svg(telemetry)
    assert _paths(temperature) == ["0", "3"]
    assert _paths(power_svg(telemetry, power_limits_w={0: 600.0, 3: 600.0})) == ["0", "3"]
    assert _paths(clock_svg(telemetry)) == ["0"]  # GPU 3 recorded no clock: no line
    # The one thermal sample shades its bucket, naming the GPU.
    assert [(s.start_s, s.end_s, s.gpus) for s in throttle_spans(telemetry)] == [(5000.0, 5010.0, (0,))]
    assert temperature.count('<rect class="throttle"') == 1 and 'data-gpus="GPU 0"' in temperature
    assert "slowdown 90 °C" in temperature
    assert "limit 600 W" in power_svg(telemetry, power_limits_w={0: 600.0, 3: 600.0})
    # The legend tells the lines apart by label and dash, not colour alone.
    assert ">GPU 0</text>" in temperature and ">GPU 3</text>" in temperature
    dashes = re.findall(r'<path class="series"[^>]*?(stroke-dasharray="[^"]+")?>', temperature)
    assert dashes == ["", 'stroke-dasharray="9 4"']
    # GPU 3's 2,000 s without samples breaks its line: two segments.
    gpu3 = re.search(r'data-gpu="3" d="([^"]+)"', temperature).group(1)
    assert gpu3.count("M") == 2
    # Axes with units and time labels.
    assert "temperature (°C)" in temperature and "time since start (2026-03-02 09:00 CET)" in temperature
    assert ">0 min</text>" in temperature or ">0 h</text>" in temperature


def test_chart_text_is_escaped():
    telemetry = Telemetry(
        run_id=1,
        started_at=START,
        span_s=60.0,
        interval_s=1.0,
        series={0: GpuSeries(bucket=[0, 30], t_s=[0.5, 30.5], temp_c=[50.0, 51.0], throttled=[True, False])},
    )
    from burnin.charts import telemetry_chart_svg

    svg = telemetry_chart_svg(telemetry, field="temp_c", title="<b>&", unit="°C", axis="<i>", css='x"y')
    assert "<b>" not in svg and "<i>" not in svg and 'x"y' not in svg
    assert "&lt;b&gt;&amp;" in svg and "&lt;i&gt;" in svg
