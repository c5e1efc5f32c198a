"""The health history after the handover (burnin.health): the selector, its SVG, and the section on the
burn-in page, the bench's server page and the portal's server page — who sees it, in which language, and
in how many queries."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from burnin.health import health_history, health_panel
from tests.burnin.health_rig import (
    BURNIN_AT,
    X8_GBPS,
    add_h2d_drift,
    add_run,
    in_service,
    serial_of,
    weekly_history,
)
from tests.werkbank.audience_rig import key_paths

pytestmark = pytest.mark.django_db


def _client(user: Any, language: str = "en") -> Client:
    client = Client()
    client.force_login(user)
    client.cookies["django_language"] = language
    return client


def _pages(server: Any) -> dict[str, str]:
    return {
        "burnin": f"/burnin/servers/{server.pk}/",
        "bench": f"/bench/servers/{server.pk}/",
        "portal": f"/portal/servers/{server.pk}/",
    }


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _section(html: str) -> str:
    match = re.search(r'<section class="card health" id="health".*?</section>', html, re.S)
    assert match, "no health section"
    return match.group(0)


# --- the selector ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field_runs", [1, 51])
def test_the_history_reads_three_queries_for_2_runs_or_52(tenants, field_runs, django_assert_num_queries):
    server = in_service(tenants)
    weekly_history(server, field_runs=field_runs, drift_in=(1, field_runs), gpus=8)
    with django_assert_num_queries(3):  # runs, their GPU results, their drift findings
        history = health_history(server)
    assert len(history.runs) == field_runs + 1
    assert [len(gpu.points) for gpu in history.gpus] == [field_runs] * 8
    assert sum(run.drift_fails for run in history.runs) == len({1, field_runs})


def test_each_gpu_has_its_baseline_and_its_field_figures_with_the_fallen_one_marked(tenants):
    server = in_service(tenants)
    burnin = weekly_history(server, field_runs=3, drift_in=(2,))
    history = health_history(server)
    assert [run.purpose for run in history.runs] == ["burn_in", "field_check", "field_check", "field_check"]
    assert [run.drift_fails for run in history.runs] == [0, 0, 1, 0]
    assert history.runs[0].is_baseline and not any(run.is_baseline for run in history.runs[1:])
    gpu0, gpu1 = history.gpus
    assert (gpu0.serial, gpu1.serial) == (serial_of(server, 0), serial_of(server, 1))
    assert gpu1.baseline.run_id == burnin.pk and gpu1.baseline.h2d_gbps == 27.7
    assert [p.h2d_gbps for p in gpu1.points] == [27.7, X8_GBPS, 27.7]
    assert [p.fallen for p in gpu1.points] == [frozenset(), {"h2d_gbps"}, frozenset()]
    assert all(not p.fallen for p in gpu0.points)  # the finding names GPU 1 only


def test_a_waived_or_warning_drift_does_not_count(tenants):
    server = in_service(tenants)
    burnin = weekly_history(server, field_runs=1)
    run = add_run(server, started_at=BURNIN_AT + timedelta(weeks=5), figures={1: {"h2d_gbps": X8_GBPS}})
    add_h2d_drift(run, baseline_run=burnin, severity="warn")
    add_h2d_drift(
        run, baseline_run=burnin, waived_at=timezone.now(), waiver_reason="known riser", waived_by=tenants.pm
    )
    history = health_history(server)
    assert history.runs[-1].drift_fails == 0
    assert not history.gpus[1].points[-1].fallen


def test_a_gpu_swapped_under_warranty_gets_the_post_repair_run_as_its_baseline(tenants):
    server = in_service(tenants)
    burnin = weekly_history(server, field_runs=2, drift_in=(2,))
    repair = add_run(
        server,
        started_at=BURNIN_AT + timedelta(weeks=6),
        purpose="post_repair",
        accepted=True,
        serials={1: "SN-NEW-1"},
        figures={1: {"h2d_gbps": 27.9}},
    )
    add_run(server, started_at=BURNIN_AT + timedelta(weeks=7), serials={1: "SN-NEW-1"})
    gpus = {gpu.serial: gpu for gpu in health_history(server).gpus}
    assert gpus["SN-NEW-1"].baseline.run_id == repair.pk  # its own post-repair run, not the burn-in
    assert [p.purpose for p in gpus["SN-NEW-1"].points] == ["field_check"]
    old = gpus[serial_of(server, 1)]
    assert old.baseline.run_id == burnin.pk and [p.h2d_gbps for p in old.points] == [27.7, X8_GBPS]
    # The GPU that stayed keeps its burn-in baseline; the post-repair run is one of its points.
    stayed = gpus[serial_of(server, 0)]
    assert stayed.baseline.run_id == burnin.pk
    assert [p.purpose for p in stayed.points] == ["field_check", "field_check", "post_repair", "field_check"]


def test_cards_without_a_serial_are_matched_by_uuid(tenants):
    server = in_service(tenants)
    add_run(server, started_at=BURNIN_AT, purpose="burn_in", accepted=True, serials={0: "N/A", 1: "N/A"})
    add_run(
        server,
        started_at=BURNIN_AT + timedelta(weeks=3),
        serials={0: "N/A", 1: "N/A"},
        figures={0: {"tflops": 150.0}},
    )
    gpus = health_history(server).gpus
    assert [gpu.key for gpu in gpus] == [f"GPU-{server.pk:04d}-0000", f"GPU-{server.pk:04d}-0001"]
    assert gpus[0].baseline.tflops == 209.5 and [p.tflops for p in gpus[0].points] == [150.0]


def test_no_history_before_the_server_is_in_service_and_none_without_field_runs_unless_handed_over(
    tenants, django_assert_num_queries
):
    assembled = in_service(tenants, status="burn_in")
    add_run(assembled, started_at=BURNIN_AT, purpose="burn_in")
    with django_assert_num_queries(0):
        assert health_panel(health_history(assembled)) is None
    deployed = in_service(tenants, status="deployed")
    add_run(deployed, started_at=BURNIN_AT, purpose="burn_in", accepted=True)
    with django_assert_num_queries(1):
        assert health_panel(health_history(deployed)) is None
    handed_over = in_service(tenants)
    add_run(handed_over, started_at=BURNIN_AT, purpose="burn_in", accepted=True)
    history = health_history(handed_over)
    panel = health_panel(history)
    assert panel is not None and history.overdue and panel["last_field_check_at"] is None


# --- the pictures -----------------------------------------------------------------------------------------


def test_the_h2d_chart_draws_the_baseline_as_a_line_and_the_fallen_point_below_it_in_red(tenants):
    server = in_service(tenants)
    weekly_history(server, field_runs=3, drift_in=(3,))
    panel = health_panel(health_history(server))
    h2d = panel["gpus"][1]["charts"][0]
    assert 'data-metric="h2d_gbps"' in h2d and h2d.startswith("<svg") and "<title>" in h2d
    baseline_y = float(re.search(r'<line class="baseline"[^>]* y1="([\d.]+)"', h2d).group(1))
    points = re.findall(
        r'<g class="point( fallen)?" data-run="\d+" data-value="([\d.]+)">.*?cy="([\d.]+)"', h2d
    )
    assert [(fallen, value) for fallen, value, _y in points] == [
        ("", "27.7"),
        ("", "27.7"),
        (" fallen", "13.9"),
    ]
    fallen_y = float(points[2][2])
    assert fallen_y > baseline_y + 40  # well below the line (SVG y grows downwards)
    assert all(abs(float(y) - baseline_y) < 1 for _f, _v, y in points[:2])
    assert 'fill="#cf222e"' in h2d.split('data-value="13.9"')[1][:200]
    assert "baseline 27.7" in h2d and "newest 13.9" in h2d
    # The healthy GPU's chart has no fallen point.
    assert "fallen" not in panel["gpus"][0]["charts"][0]


def test_the_time_line_has_a_marker_per_run_with_its_baseline_and_drift(tenants):
    server = in_service(tenants)
    weekly_history(server, field_runs=4, drift_in=(2,))
    timeline = str(health_panel(health_history(server))["timeline"])
    markers = re.findall(
        r'<g class="run" data-run="\d+" data-purpose="(\w+)" data-result="(\w+)"([^>]*)>', timeline
    )
    assert [(purpose, result) for purpose, result, _ in markers] == [
        ("burn_in", "pass"),
        ("field_check", "pass"),
        ("field_check", "fail"),
        ("field_check", "pass"),
        ("field_check", "pass"),
    ]
    assert "data-baseline" in markers[0][2] and 'data-drift-fails="1"' in markers[2][2]
    assert 'role="img"' in timeline and "Health history: 5 runs" in timeline
    assert "accepted as baseline" in timeline and "1 drift fault" in timeline


# --- the pages --------------------------------------------------------------------------------------------


def test_pm_partner_and_customer_see_the_history_on_their_pages(tenants):
    server = in_service(tenants)
    weekly_history(server, field_runs=2, drift_in=(2,))
    seen = {
        "burnin": (tenants.pm, tenants.user_p, tenants.user_a),
        "bench": (tenants.pm, tenants.user_p),
        "portal": (tenants.user_a,),
    }
    for page, url in _pages(server).items():
        for user in seen[page]:
            response = _client(user).get(url)
            assert response.status_code == 200, (page, user.username)
            section = _text(_section(response.content.decode()))
            assert "Health after handover" in section, (page, user.username)
            assert "Drift in the newest field run" in section
            assert "H2D 13.9 GB/s, down 49.8 % from 27.7 GB/s at its baseline" in section
            assert "All 3 runs" in section and "Field check" in section and "accepted " in section


def test_another_customer_and_another_partner_get_a_404(tenants):
    server = in_service(tenants)
    weekly_history(server, field_runs=1)
    pages = _pages(server)
    for user in (tenants.user_b, tenants.user_q, tenants.outsider):
        assert _client(user).get(pages["burnin"]).status_code == 404, user.username
    for user in (tenants.user_q, tenants.user_a, tenants.user_b):
        assert _client(user).get(pages["bench"]).status_code == 404, user.username
    for user in (tenants.user_b, tenants.user_p, tenants.user_q):
        assert _client(user).get(pages["portal"]).status_code == 404, user.username


def test_no_section_before_a_field_run_and_a_due_note_once_handed_over(tenants):
    in_burnin = in_service(tenants, status="burn_in")
    add_run(in_burnin, started_at=BURNIN_AT, purpose="burn_in")
    for url in _pages(in_burnin).values():
        user = tenants.user_a if url.startswith("/portal/") else tenants.pm
        response = _client(user).get(url)
        assert response.status_code == 200 and 'id="health"' not in response.content.decode(), url
    handed = in_service(tenants)
    last = timezone.now() - timedelta(days=12)
    add_run(handed, started_at=last, purpose="burn_in", accepted=True)
    for url in _pages(handed).values():
        user = tenants.user_a if url.startswith("/portal/") else tenants.pm
        section = _text(_section(_client(user).get(url).content.decode()))
        assert "No field check yet." in section, url
        assert f"The last measurement of this server is of {last:%Y-%m-%d}." in section
        assert "at least every 30 days" in section


def test_an_old_field_check_is_due(tenants, settings):
    settings.WERKBANK_FIELD_CHECK_MAX_AGE_DAYS = 14
    server = in_service(tenants)
    add_run(server, started_at=timezone.now() - timedelta(days=60), purpose="burn_in", accepted=True)
    checked = timezone.now() - timedelta(days=20)
    add_run(server, started_at=checked)
    section = _text(_section(_client(tenants.user_a).get(_pages(server)["portal"]).content.decode()))
    assert "A field check is due." in section
    assert (
        f"The last one ran on {checked:%Y-%m-%d}; the schedule asks for one at least every 14 days."
        in section
    )
    settings.WERKBANK_FIELD_CHECK_MAX_AGE_DAYS = 30
    section = _text(_section(_client(tenants.user_a).get(_pages(server)["portal"]).content.decode()))
    assert "A field check is due." not in section and f"Last field check on {checked:%Y-%m-%d}" in section


def test_the_german_portal_tells_the_history_and_the_drift_in_german(tenants):
    server = in_service(tenants)
    weekly_history(server, field_runs=2, drift_in=(2,))
    html = _client(tenants.user_a, "de").get(_pages(server)["portal"]).content.decode()
    section = _text(_section(html))
    for words in (
        "Zustand nach der Übergabe",
        "Drift im neuesten Feldtest",
        "H2D 13,9 GB/s, 49,8 % weniger als die 27,7 GB/s beim Referenzlauf",
        "Feldtest",
        "Nicht bestanden",
        "Alle 3 Läufe",
        "Je GPU: Referenz und Feldtests",
        "Referenz 27,7",  # the chart's line
        "Läufe im Zeitverlauf",
    ):
        assert words in section or words in html, words
    for english in (
        "Health after handover",
        "Drift in the newest",
        "at its baseline",
        "Field check",
        "baseline 27.7",
    ):
        assert english not in section, english


def test_the_german_portal_says_no_field_check_yet(tenants):
    server = in_service(tenants)
    add_run(server, started_at=timezone.now() - timedelta(days=3), purpose="burn_in", accepted=True)
    section = _text(_section(_client(tenants.user_a, "de").get(_pages(server)["portal"]).content.decode()))
    assert "Noch kein Feldtest." in section and "mindestens alle 30 Tage" in section


def test_the_portal_hands_its_template_plain_rows_without_internals(tenants):
    server = in_service(tenants)
    weekly_history(server, field_runs=2, drift_in=(2,))
    response = _client(tenants.user_a).get(_pages(server)["portal"])
    health = response.context_data["health"]
    prefix = "health"
    assert {p for p in key_paths({prefix: health})} == {
        prefix,
        *(
            f"{prefix}.{name}"
            for name in (
                "handed_over",
                "overdue",
                "max_age_days",
                "last_field_check_at",
                "last_run_at",
                "field_runs",
                "newest_field_run_at",
                "newest_findings",
                "timeline",
                "runs",
                "gpus",
            )
        ),
        *(
            f"{prefix}.runs[].{name}"
            for name in (
                "id",
                "purpose",
                "purpose_label",
                "started_at",
                "uploaded_at",
                "result",
                "result_label",
                "is_baseline",
                "accepted_at",
                "drift_fails",
                "url",
            )
        ),
        *(f"{prefix}.gpus[].{name}" for name in ("index", "serial", "has_baseline", "fallen", "charts")),
        *(
            f"{prefix}.newest_findings[].{name}"
            for name in ("severity", "severity_label", "subject", "message", "waived")
        ),
    }
    # Nobody's login: the runs were uploaded by the partner's member, the waiver is a PM's.
    assert "petr" not in _section(response.content.decode())


@pytest.mark.parametrize("page", ["burnin", "bench", "portal"])
def test_each_page_runs_as_many_queries_for_52_runs_as_for_2(tenants, page):
    user = {"burnin": tenants.pm, "bench": tenants.user_p, "portal": tenants.user_a}[page]
    small, big = in_service(tenants), in_service(tenants)
    weekly_history(small, field_runs=1, drift_in=(1,), gpus=8)
    weekly_history(big, field_runs=51, drift_in=(3, 51), gpus=8)
    client = _client(user)
    client.get(_pages(small)[page])  # the session and user are loaded once per request anyway
    counts = []
    for server in (small, big):
        with CaptureQueriesContext(connection) as queries:
            response = client.get(_pages(server)[page])
        assert response.status_code == 200 and 'id="health"' in response.content.decode()
        counts.append(len(queries))
    assert counts[0] == counts[1], counts
