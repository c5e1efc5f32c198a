"""The burn-in pages (/burnin/): who sees them, what they say, the charts and the per-GPU table."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from burnin.models import BurnInStage, Finding, GpuResult, TelemetrySample
from tests import factories

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
SW_POWER_CAP, HW_THERMAL = 0x4, 0x40
GB_H2D = {0: 27.7, 1: 27.6, 2: 13.9, 3: 27.7, 4: 13.9, 5: 27.5}  # seed 003: GPUs 2 and 4 at x8


@dataclass
class Seed:
    server: Any
    run: Any


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def make_seed003_run(
    server: Any, *, gpus: int = 6, throttle: bool = True, started_at: datetime = START, hours: int = 6
) -> Any:
    """A run shaped like seed 003: GPUs 2 and 4 at Gen4 x8, GPU 1 close to its slowdown point, the `burn`
    stage interrupted; telemetry every 5 minutes, with one thermal slowdown on GPU 1 when `throttle`."""
    run = factories.make_burnin_run(
        server, started_at=started_at, ended_at=started_at + timedelta(hours=hours), result="fail"
    )
    for position, (name, status, reason) in enumerate(
        [
            ("inventory", "ok", ""),
            ("bench", "ok", ""),
            ("burn", "interrupted", "workshop power distribution failure"),
            ("finalize", "ok", ""),
        ]
    ):
        BurnInStage.objects.create(run=run, position=position, name=name, status=status, reason=reason)
    for index in range(gpus):
        x8 = index in (2, 4)
        GpuResult.objects.create(
            run=run,
            index=index,
            serial=f"16520240313{index:02d}",
            expected_gen=4,
            expected_width=16,
            load_gen=4,
            load_width=8 if x8 else 16,
            h2d_gbps=GB_H2D.get(index, 27.7),
            d2h_gbps=GB_H2D.get(index, 27.7) - 0.4,
            tflops=291.0 + index * 2,
            vram_gbps=1471.0,
            peak_temp_c=88.0 if index == 1 else 80.0,
            min_margin_c=2.0 if index == 1 else 10.0,
            mean_power_w=295.0,
            power_limit_w=300.0,
            matmuls=120_000,
            mismatches=0,
            nans=0,
        )
    samples = []
    for index in range(gpus):
        for step in range(hours * 12):
            temp = (88.0 if index == 1 else 80.0) - (5 if step < 6 else 0)
            thermal = throttle and index == 1 and step == 30
            samples.append(
                TelemetrySample(
                    run=run,
                    gpu_index=index,
                    at=started_at + timedelta(minutes=5 * step),
                    temp_c=temp,
                    margin_c=90.0 - temp,
                    power_w=295.0,
                    sm_mhz=1390.0,
                    util_pct=100.0,
                    clock_event_mask=HW_THERMAL if thermal else SW_POWER_CAP,
                )
            )
    TelemetrySample.objects.bulk_create(samples)
    pm = factories.make_pm(username=f"waiver-pm-{run.pk}")
    for index in (2, 4):
        Finding.objects.create(
            run=run,
            code="pcie_link_downtrained",
            severity="fail",
            subject=f"GPU {index}",
            gpu_index=index,
            message=f"GPU {index}: H2D 13.9 GB/s, 0.50 × the median: link at x8 (expected x16)",
            rule_version="test",
        )
    Finding.objects.create(
        run=run,
        code="thermal_margin_low",
        severity="warn",
        subject="GPU 1",
        gpu_index=1,
        message="GPU 1: thermal margin 2 °C at peak",
        rule_version="test",
        waived_by=pm,
        waived_at=started_at + timedelta(days=1),
        waiver_reason="Slot 1 sits behind the PSU; a baffle is ordered.",
    )
    Finding.objects.create(
        run=run,
        code="ecc_correlated_periodic",
        severity="warn",
        subject="DIMMs A1, B1",
        message="DIMMs A1 and B1: correctable ECC in the same second, three times at ~4 h intervals",
        rule_version="test",
    )
    Finding.objects.create(
        run=run,
        code="power_capped",
        severity="info",
        subject="GPU 0",
        gpu_index=0,
        message="GPU 0: software power cap at full load (normal)",
        rule_version="test",
    )
    return run


@pytest.fixture
def seed(tenants: Any) -> Seed:
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in")
    server.partner = tenants.partner_p
    server.save(update_fields=["partner"])
    return Seed(server=server, run=make_seed003_run(server))


def _paths(svg: str) -> list[str]:
    return re.findall(r'<path class="series" data-gpu="(\d+)"', svg)


def _chart(html: str, name: str) -> str:
    match = re.search(rf'<div class="chart" id="chart-{name}">(.*?)</div>', html, re.S)
    assert match, name
    return match.group(1)


def _cell(html: str, gpu: int, column: str) -> str:
    row = re.search(rf'<tr data-gpu="{gpu}">(.*?)</tr>', html, re.S).group(1)
    return re.search(rf'<td[^>]*data-column="{column}"[^>]*>.*?</td>', row, re.S).group(0)


def test_the_server_page_shows_the_latest_run_to_pm_partner_and_customer(seed, tenants):
    url = f"/burnin/servers/{seed.server.pk}/"
    for user in (tenants.pm, tenants.user_p, tenants.user_a):
        response = _client(user).get(url)
        assert response.status_code == 200, user.username
        assert response.context["run"] == seed.run
    for user in (tenants.user_b, tenants.user_q, tenants.outsider):
        assert _client(user).get(url).status_code == 404, user.username
        assert _client(user).get(f"/burnin/runs/{seed.run.pk}/").status_code == 404, user.username
    response = Client().get(url)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_charts_draw_one_path_per_gpu_and_shade_the_thermal_slowdown(seed, tenants):
    html = _client(tenants.user_a).get(f"/burnin/servers/{seed.server.pk}/").content.decode()
    for name in ("temperature", "power", "clock"):
        assert _paths(_chart(html, name)) == [str(i) for i in range(6)], name
        assert _chart(html, name).count('<rect class="throttle"') == 1, name
    temperature = _chart(html, "temperature")
    assert 'data-gpus="GPU 1"' in temperature
    assert "slowdown 90 °C" in temperature and "limit 300 W" in _chart(html, "power")
    # The throttle period in words too, not only as a hatch.
    assert re.search(r'id="throttle-spans".*GPU 1 from 2 h 30 min to 2 h 3\d min', html, re.S)


def test_a_software_power_cap_alone_is_not_shaded(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in")
    make_seed003_run(server, throttle=False)
    html = _client(tenants.pm).get(f"/burnin/servers/{server.pk}/").content.decode()
    assert '<rect class="throttle"' not in html
    assert 'id="no-throttle"' in html


def test_the_table_marks_the_outliers_with_text(seed, tenants):
    html = _client(tenants.user_p).get(f"/burnin/servers/{seed.server.pk}/").content.decode()
    for gpu in (2, 4):
        link = _cell(html, gpu, "link")
        assert "Gen4 x16 / Gen4 x8" in link and 'data-flag="fail"' in link and "✖ FAIL" in link
        assert "✖ FAIL" in _cell(html, gpu, "h2d") and "13.9" in _cell(html, gpu, "h2d")
    # GPU 1's thermal warning was waived: still marked, and saying so.
    margin = _cell(html, 1, "margin")
    assert 'data-flag="warn"' in margin and "⚠ WARN (waived)" in margin
    for gpu in (0, 3, 5):
        row = re.search(rf'<tr data-gpu="{gpu}">(.*?)</tr>', html, re.S).group(1)
        assert "data-flag" not in row and "Gen4 x16 / Gen4 x16" in row  # an info finding marks nothing
    assert "0 / 0" in _cell(html, 0, "errors")


def test_stages_and_findings_are_said_plainly(seed, tenants):
    html = _client(tenants.user_a).get(f"/burnin/servers/{seed.server.pk}/").content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))
    assert (
        "Stage burn was interrupted: workshop power distribution failure. It did not finish, and it does not "
        "count as passed." in text
    )
    assert "2 unwaived failures" in text
    assert (
        html.index('id="findings-fail"') < html.index('id="findings-warn"') < html.index('id="findings-info"')
    )
    assert "Fail (2)" in text and "Warning (2)" in text and "Info (1)" in text
    assert "GPU 2: H2D 13.9 GB/s, 0.50 × the median: link at x8 (expected x16)" in text
    assert "Waived by waiver-pm-" in text and "“Slot 1 sits behind the PSU; a baffle is ordered.”" in text


def test_earlier_runs_are_listed_and_open_on_their_own_page(seed, tenants):
    earlier = seed.run
    later = make_seed003_run(seed.server, started_at=START + timedelta(days=2), gpus=2)
    client = _client(tenants.user_a)
    html = client.get(f"/burnin/servers/{seed.server.pk}/").content.decode()
    assert f'href="/burnin/runs/{earlier.pk}/"' in html and "Latest run" in html
    assert len(_paths(_chart(html, "temperature"))) == 2  # the latest run: two GPUs
    response = client.get(f"/burnin/runs/{earlier.pk}/")
    assert response.status_code == 200 and response.context["run"] == earlier
    assert "This is not the latest run." in response.content.decode()
    assert later.get_absolute_url() == f"/burnin/runs/{later.pk}/"


def test_a_server_without_a_run_says_so(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="assembled")
    response = _client(tenants.pm).get(f"/burnin/servers/{server.pk}/")
    assert response.status_code == 200 and 'id="no-run"' in response.content.decode()


def test_the_page_runs_the_same_queries_for_two_gpus_or_eight(tenants, django_assert_num_queries):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=2)
    small, big = factories.make_servers(order, status="burn_in")
    make_seed003_run(small, gpus=2)
    make_seed003_run(big, gpus=8)
    client = _client(tenants.user_a)
    client.get(f"/burnin/servers/{small.pk}/")  # the session and user are loaded once per request anyway
    # session, user, server, runs, the user's bench (a membership), stages, findings, GPU results, telemetry
    for server in (small, big):
        with django_assert_num_queries(9):
            assert client.get(f"/burnin/servers/{server.pk}/").status_code == 200


def test_the_bench_page_and_the_admin_link_to_the_burnin(seed, tenants):
    link = f'href="/burnin/servers/{seed.server.pk}/"'
    assert link in _client(tenants.user_p).get(f"/bench/servers/{seed.server.pk}/").content.decode()
    assert link in _client(tenants.pm).get(f"/admin/builds/server/{seed.server.pk}/change/").content.decode()
    # And back: the burn-in page links to the bench for those who have one, not for the customer.
    bench = f'href="/bench/servers/{seed.server.pk}/"'
    assert bench in _client(tenants.user_p).get(f"/burnin/servers/{seed.server.pk}/").content.decode()
    assert bench not in _client(tenants.user_a).get(f"/burnin/servers/{seed.server.pk}/").content.decode()
