"""The pipeline's "Health after handover" (pm.selectors.field_health): servers with open drift, and
handed-over servers whose last field check is older than WERKBANK_FIELD_CHECK_MAX_AGE_DAYS (or missing),
in a fixed number of queries."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from pm.selectors import field_health
from tests.burnin.health_rig import X8_GBPS, add_h2d_drift, add_run, in_service, serial_of

pytestmark = pytest.mark.django_db


def _page(user: Any, language: str = "en") -> str:
    client = Client()
    client.force_login(user)
    client.cookies["django_language"] = language
    response = client.get("/pm/")
    assert response.status_code == 200
    return response.content.decode()


def _queue(html: str, key: str) -> str:
    match = re.search(rf'<div class="queue" data-queue="{key}">(.*?)\n    </div>', html, re.S)
    return match.group(1) if match else ""


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _drifting(tenants: Any, *, days_ago: int = 3, **kwargs: Any) -> tuple[Any, Any]:
    """A handed-over server whose newest field check has GPU 1 at x8 (its drift fail)."""
    server = in_service(tenants, **kwargs)
    now = timezone.now()
    burnin = add_run(server, started_at=now - timedelta(days=90), purpose="burn_in", accepted=True)
    add_run(server, started_at=now - timedelta(days=days_ago + 7))
    run = add_run(
        server, started_at=now - timedelta(days=days_ago), result="fail", figures={1: {"h2d_gbps": X8_GBPS}}
    )
    add_h2d_drift(run, baseline_run=burnin)
    return server, run


def _checked(tenants: Any, *, days_ago: int | None, status: str = "handed_over") -> Any:
    """A server in `status`, its burn-in 200 days ago, a healthy field check `days_ago` (None: never)."""
    server = in_service(tenants, status=status)
    now = timezone.now()
    add_run(server, started_at=now - timedelta(days=200), purpose="burn_in", accepted=True)
    if days_ago is not None:
        add_run(server, started_at=now - timedelta(days=days_ago))
    return server


def test_open_drift_lists_the_server_with_the_gpu_the_figure_and_a_link(tenants):
    server, run = _drifting(tenants)
    html = _page(tenants.pm)
    drift = _queue(html, "drift")
    assert f'href="/burnin/runs/{run.pk}/"' in drift and server.hostname in drift
    text = _text(drift)
    assert "Open drift (1)" in text
    assert "GPU 1: H2D 13.9 GB/s, down 49.8 % from 27.7 GB/s at its baseline" in text
    assert f"(serial {serial_of(server, 1)}): link at Gen4 x8" in text  # the sentence names the card
    # German too: the sentence comes from Finding.text.
    german = _text(_queue(_page(tenants.pm, "de"), "drift"))
    assert "Offene Drift (1)" in german and "49,8 % weniger als die 27,7 GB/s beim Referenzlauf" in german


def test_drift_is_open_only_on_the_newest_field_run_and_only_unwaived_fails(tenants):
    healed, _run = _drifting(tenants, days_ago=5)
    add_run(healed, started_at=timezone.now() - timedelta(days=1))  # a healthy run after the fix
    _waived, run = _drifting(tenants)
    run.findings.update(waived_at=timezone.now(), waiver_reason="riser reseated", waived_by=tenants.pm)
    _warned, run = _drifting(tenants)
    run.findings.update(severity="warn")
    shown, _run = _drifting(tenants)
    health = field_health()
    assert [item.server for item in health.drift] == [shown] and health.drift_count == 1
    assert [f.code for f in health.drift[0].findings] == ["drift_h2d"]


def test_a_handed_over_server_is_due_when_its_last_field_check_is_older_than_the_schedule(tenants):
    old = _checked(tenants, days_ago=40)
    recent = _checked(tenants, days_ago=10)
    never = _checked(tenants, days_ago=None)
    _checked(tenants, days_ago=None, status="deployed")  # not handed over: not the customer's yet
    health = field_health()
    assert [item.server for item in health.due] == [never, old]  # never first, then the oldest
    assert health.due[0].last_field_check_at is None and health.due[1].days_since == 40
    html = _page(tenants.pm)
    due = _text(_queue(html, "field-check-due"))
    assert "Field check due (2)" in due and "in the last 30 days" in due
    assert f"{never.hostname} · {never.order.reference} · no field check yet" in due
    assert f"last field check {health.due[1].last_field_check_at:%Y-%m-%d}, 40 days ago" in due
    assert recent.hostname not in due
    assert f'href="/burnin/servers/{old.pk}/"' in _queue(html, "field-check-due")
    german = _text(_queue(_page(tenants.pm, "de"), "field-check-due"))
    assert "Feldtest fällig (2)" in german and "noch kein Feldtest" in german and "vor 40 Tagen" in german


def test_the_schedule_is_a_setting(tenants, settings):
    _checked(tenants, days_ago=40)
    settings.WERKBANK_FIELD_CHECK_MAX_AGE_DAYS = 45
    assert field_health().due == []
    settings.WERKBANK_FIELD_CHECK_MAX_AGE_DAYS = 35
    assert len(field_health().due) == 1


def test_nothing_to_say_no_section(tenants):
    _checked(tenants, days_ago=2)
    assert 'id="field-health"' not in _page(tenants.pm)


def _world(tenants: Any, n: int) -> None:
    for _ in range(n):
        _drifting(tenants)
        _checked(tenants, days_ago=40)
        _checked(tenants, days_ago=None)


@pytest.mark.parametrize("n", [1, 5])
def test_field_health_reads_five_queries_for_one_server_or_five(tenants, n, django_assert_num_queries):
    _world(tenants, n)
    # the open-drift runs and their count, their findings; the due servers and their count
    with django_assert_num_queries(5):
        health = field_health()
    assert len(health.drift) == n and len(health.due) == 2 * n


def test_the_pipeline_runs_as_many_queries_for_five_servers_as_for_one(tenants):
    client = Client()
    client.force_login(tenants.pm)
    client.get("/pm/")
    counts = []
    for n in (1, 4):  # 1, then 1 + 4 = 5 of each kind
        _world(tenants, n)
        with CaptureQueriesContext(connection) as queries:
            html = client.get("/pm/").content.decode()
        counts.append(len(queries))
        assert html.count('data-server="') >= 3
    assert counts[0] == counts[1], counts
