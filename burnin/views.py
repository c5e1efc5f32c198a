"""Burn-in pages (/burnin/): a server's burn-in, or one run of it, with its stages, findings, the per-GPU
table and the telemetry charts.

Whoever may see the server may see its burn-in: PMs, the server's partner and the order's customer
(`visible_to(user, VIEW)`); anyone else gets a 404. Views stay thin: reads come from burnin.selectors, the
SVG from burnin.charts.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.safestring import mark_safe

from builds.models import Server
from builds.selectors import has_bench
from burnin import charts, selectors
from burnin.gates import RunStanding, run_standings
from burnin.health import health_history, health_panel
from burnin.models import BurnInRun
from werkbank.access import is_pm

#: Points per GPU on the page's charts: about one per pixel column of the 600 px plot area.
PAGE_POINTS = 600


@login_required
def server_burnin(request: HttpRequest, server_id: int) -> HttpResponse:
    """The server's judged burn-in run (the newest on today's hardware), and every run listed. Where no
    run counts, the newest is shown, as stale."""
    server = selectors.visible_server(request.user, server_id)
    if server is None:
        raise Http404("No such server.")
    runs = selectors.server_runs(server)
    standings = run_standings(server, runs)
    judged = next((each.run for each in standings if each.judged), runs[0] if runs else None)
    return _render(request, server=server, run=judged, runs=runs, standings=standings)


@login_required
def run_burnin(request: HttpRequest, run_id: int) -> HttpResponse:
    """One run of a server's burn-in, the latest or an earlier one."""
    run = selectors.visible_run(request.user, run_id)
    if run is None:
        raise Http404("No such burn-in run.")
    runs = selectors.server_runs(run.server)
    return _render(request, server=run.server, run=run, runs=runs, standings=run_standings(run.server, runs))


def _render(
    request: HttpRequest,
    *,
    server: Server,
    run: BurnInRun | None,
    runs: list[BurnInRun],
    standings: list[RunStanding],
) -> HttpResponse:
    standing = next((each for each in standings if run is not None and each.run.pk == run.pk), None)
    context: dict[str, Any] = {
        "server": server,
        "order": server.order,
        "run": run,
        "runs": runs,
        "standings": standings,
        "standing": standing,
        "judged": next((each.run for each in standings if each.judged), None),
        "is_pm": is_pm(request.user),
        "show_bench_link": has_bench(request.user),
        # After the handover: every run on a time line, and each GPU against its baseline.
        "health": health_panel(health_history(server)),
    }
    if run is not None:
        detail = selectors.run_detail(run)
        telemetry = selectors.telemetry_series(run=run, max_points=PAGE_POINTS)
        context.update(
            detail=detail,
            telemetry=telemetry,
            throttle_spans=charts.throttle_spans(telemetry),
            # Built with escape() from our own data (burnin.charts).
            temperature_svg=mark_safe(charts.temperature_svg(telemetry)),
            power_svg=mark_safe(charts.power_svg(telemetry, power_limits_w=detail.power_limits_w)),
            clock_svg=mark_safe(charts.clock_svg(telemetry)),
        )
    return TemplateResponse(request, "burnin/server.html", context)
