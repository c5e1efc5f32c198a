"""The burn-in pages (/burnin/): who sees them, what they say, the charts and the per-GPU table."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from tests import factories

pytestmark = pytest.mark.django_db

START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


@dataclass
class Seed:
    server: Any
    run: Any


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def seed(tenants: Any) -> Seed:
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in")
    server.partner = tenants.partner_p
    server.save(update_fields=["partner"])
    return Seed(server=server, run=factories.make_seed003_burnin_run(server))


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
    factories.make_seed003_burnin_run(server, throttle=False)
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
    assert "GPU 2: PCIe link at Gen4 x8 under load (expected Gen4 x16)" in text
    # The customer reads that a project manager waived it and why, not which staff login did.
    assert "Waived by a project manager on" in text and "waiver-pm-" not in text
    assert "“Slot 1 sits behind the PSU; a baffle is ordered.”" in text
    builder = _client(tenants.pm).get(f"/burnin/servers/{seed.server.pk}/").content.decode()
    assert "Waived by waiver-pm-" in re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", builder))


def test_earlier_runs_are_listed_and_open_on_their_own_page(seed, tenants):
    earlier = seed.run
    later = factories.make_seed003_burnin_run(seed.server, started_at=START + timedelta(days=2), gpus=2)
    client = _client(tenants.user_a)
    html = client.get(f"/burnin/servers/{seed.server.pk}/").content.decode()
    assert f'href="/burnin/runs/{earlier.pk}/"' in html and "Judged run" in html
    assert f'data-run="{later.pk}" data-standing="judged"' in html
    assert f'data-run="{earlier.pk}" data-standing="counting"' in html
    assert len(_paths(_chart(html, "temperature"))) == 2  # the judged run, the newest upload: two GPUs
    response = client.get(f"/burnin/runs/{earlier.pk}/")
    assert response.status_code == 200 and response.context["run"] == earlier
    assert "This is not the judged run." in response.content.decode()
    assert later.get_absolute_url() == f"/burnin/runs/{later.pk}/"


def test_a_server_without_a_run_says_so(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="assembled")
    response = _client(tenants.pm).get(f"/burnin/servers/{server.pk}/")
    assert response.status_code == 200 and 'id="no-run"' in response.content.decode()


def test_the_page_runs_the_same_queries_for_two_gpus_or_eight(tenants, django_assert_num_queries):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=2)
    small, big = factories.make_servers(order, status="burn_in")
    factories.make_seed003_burnin_run(small, gpus=2)
    factories.make_seed003_burnin_run(big, gpus=8)
    client = _client(tenants.user_a)
    client.get(f"/burnin/servers/{small.pk}/")  # the session and user are loaded once per request anyway
    # session, user, server, runs, the user's bench (a membership), stages, findings, GPU results, telemetry
    for server in (small, big):
        with django_assert_num_queries(10):  # the last GPU change tells stale runs
            assert client.get(f"/burnin/servers/{server.pk}/").status_code == 200


def test_the_bench_page_and_the_admin_link_to_the_burnin(seed, tenants):
    link = f'href="/burnin/servers/{seed.server.pk}/"'
    assert link in _client(tenants.user_p).get(f"/bench/servers/{seed.server.pk}/").content.decode()
    assert link in _client(tenants.pm).get(f"/admin/builds/server/{seed.server.pk}/change/").content.decode()
    # And back: the burn-in page links to the bench for those who have one, not for the customer.
    bench = f'href="/bench/servers/{seed.server.pk}/"'
    assert bench in _client(tenants.user_p).get(f"/burnin/servers/{seed.server.pk}/").content.decode()
    assert bench not in _client(tenants.user_a).get(f"/burnin/servers/{seed.server.pk}/").content.decode()
