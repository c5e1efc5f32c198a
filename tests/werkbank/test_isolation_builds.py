"""Tenant isolation over the builds and burn-in routes (the meta-test and the other routes' cases:
test_isolation.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import TestCase

from builds.choices import ServerStatus
from builds.models import (
    Allocation,
    BuildPhoto,
    BuildStep,
    ConnectorBlacklist,
    Installation,
    Server,
)
from burnin.models import BurnInRun
from tests import factories
from tests.burnin.ingest_rig import fitted_report, post_report
from tests.tenants_rig import api_client
from tests.werkbank.isolation_rig import (
    BurninGate,
    World,
    _assert_404,
    _builds,
    _burnin_gate,
    _ids,
)
from tests.werkbank.isolation_rig import world as isolation_world
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

world = isolation_world


def _bench_intruders(w: World) -> list[Any]:
    """Customer A follows the server, but the bench is P's (and the PM's) alone."""
    return [w.t.user_a, w.t.user_b, w.t.user_q, w.t.outsider]


def _builds_list(path: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        b = _builds(w)
        assert _ids(api_client(w.t.user_p).get(f"/api/v1/builds/{path}/"))
        for user in _bench_intruders(w):
            assert _ids(api_client(user).get(f"/api/v1/builds/{path}/")) == set(), user.username
        response = api_client(w.t.user_q).get(f"/api/v1/builds/{path}/?server={b.server.pk}")
        assert response.status_code == 400

    return case


def _builds_detail(path: str, attribute: str, suffix: str = "") -> Callable[[World], None]:
    def case(w: World) -> None:
        url = f"/api/v1/builds/{path}/{getattr(_builds(w), attribute).pk}/{suffix}"
        assert api_client(w.t.user_p).get(url).status_code == 200
        _assert_404(_bench_intruders(w), "get", url)

    return case


def server_list(w: World) -> None:
    b = _builds(w)
    assert _ids(api_client(w.t.user_p).get("/api/v1/builds/servers/")) == {b.server.pk}
    order_a_servers = set(w.order_a.servers.values_list("pk", flat=True))
    assert b.server.pk in order_a_servers
    assert _ids(api_client(w.t.user_a).get("/api/v1/builds/servers/")) == order_a_servers
    for user in (w.t.user_b, w.t.user_q, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/builds/servers/")) == set()
    assert api_client(w.t.user_b).get(f"/api/v1/builds/servers/?order={w.order_a.pk}").status_code == 400


def server_detail(w: World) -> None:
    url = f"/api/v1/builds/servers/{_builds(w).server.pk}/"
    assert api_client(w.t.user_a).get(url).status_code == 200
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


def _server_action(
    action: str, body: dict | Callable[[World], dict], method: str = "post"
) -> Callable[[World], None]:
    """Everyone off P's bench gets a 404 on a server action, with a body that would otherwise work."""

    def case(w: World) -> None:
        b = _builds(w)
        payload = body(w) if callable(body) else body
        counts = [model.objects.count() for model in (Installation, Allocation, BuildStep, BuildPhoto)]
        events = AuditEvent.objects.count()
        _assert_404(_bench_intruders(w), method, f"/api/v1/builds/servers/{b.server.pk}/{action}/", payload)
        b.server.refresh_from_db()
        assert (b.server.status, b.server.partner) == ("planned", w.t.partner_p)
        assert counts == [
            model.objects.count() for model in (Installation, Allocation, BuildStep, BuildPhoto)
        ]
        assert AuditEvent.objects.count() == events
        assert b.installation.component.status == "installed"

    return case


def server_steps(w: World) -> None:
    _server_action("steps", {}, "get")(w)
    _server_action("steps", {"kind": "note"})(w)


def connector_blacklist(w: World) -> None:
    url = f"/api/v1/builds/connectors/{_builds(w).connector.pk}/blacklist/"
    _assert_404(_bench_intruders(w), "post", url, {"reason": "sabotage"})
    assert not ConnectorBlacklist.objects.exists()


def chassis_layout_list(w: World) -> None:
    layout = _builds(w).layout
    for user in (w.t.user_p, w.t.user_q):
        assert _ids(api_client(user).get("/api/v1/builds/layouts/")) == {layout.pk}
    for user in (w.t.user_a, w.t.user_b, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/builds/layouts/")) == set()


def chassis_layout_detail(w: World) -> None:
    url = f"/api/v1/builds/layouts/{_builds(w).layout.pk}/"
    _assert_404([w.t.user_a, w.t.user_b, w.t.outsider], "get", url)


BUILDS_CASES: dict[str, Callable[[World], None]] = {
    "server-list": server_list,
    "server-detail": server_detail,
    "server-assign": _server_action("assign", lambda w: {"partner": w.t.partner_q.pk}),
    "server-start-assembly": _server_action("start-assembly", {}),
    "server-mark-assembled": _server_action("mark-assembled", {}),
    "server-allocate": _server_action("allocate", {"serials": ["P-SERIAL-2"]}),
    "server-install": _server_action("install", {"serial": "P-SERIAL-2", "connector": "PCIe-2"}),
    "server-remove": _server_action("remove", {"serial": "P-SERIAL-1", "reason": "x"}),
    "server-move": _server_action("move", {"serial": "P-SERIAL-1", "to_connector": "PCIe-2", "reason": "x"}),
    "server-steps": server_steps,
    "server-photos": _server_action("photos", {}),
    "server-connector-map": _server_action("connector-map", {}, "get"),
    "connector-list": _builds_list("connectors"),
    "connector-detail": _builds_detail("connectors", "connector"),
    "connector-blacklist": connector_blacklist,
    "installation-list": _builds_list("installations"),
    "installation-detail": _builds_detail("installations", "installation"),
    "allocation-list": _builds_list("allocations"),
    "allocation-detail": _builds_detail("allocations", "allocation"),
    "build-step-list": _builds_list("steps"),
    "build-step-detail": _builds_detail("steps", "step"),
    "build-photo-list": _builds_list("photos"),
    "build-photo-detail": _builds_detail("photos", "photo"),
    "build-photo-download": _builds_detail("photos", "photo", "download/"),
    "chassis-layout-list": chassis_layout_list,
    "chassis-layout-detail": chassis_layout_detail,
}


def _unchanged(g: BurninGate) -> None:
    g.server.refresh_from_db()
    g.fail.refresh_from_db()
    assert (g.server.status, g.fail.waived) == (ServerStatus.BURN_IN, False)
    assert not AuditEvent.objects.filter(verb__startswith="burnin.").exists()
    assert not AuditEvent.objects.for_object(g.server).filter(verb__contains="burn_in").exists()


def burnin_finding_list(w: World) -> None:
    g = _burnin_gate(w)
    mine = set(g.fail.run.findings.values_list("pk", flat=True))
    for user in (w.t.user_a, w.t.user_p):  # the server's customer and partner follow its burn-in
        assert _ids(api_client(user).get("/api/v1/burnin/findings/")) == mine
    for user in (w.t.user_b, w.t.user_q, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/burnin/findings/")) == set()
    for params in (f"run={g.fail.run_id}", f"server={g.server.pk}"):
        assert api_client(w.t.user_q).get(f"/api/v1/burnin/findings/?{params}").status_code == 400


def burnin_finding_detail(w: World) -> None:
    g = _burnin_gate(w)
    url = f"/api/v1/burnin/findings/{g.fail.pk}/"
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).get(url).status_code == 200
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


def burnin_finding_waive(w: World) -> None:
    g = _burnin_gate(w)
    url = f"/api/v1/burnin/findings/{g.fail.pk}/waive/"
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "post", url, {"reason": "x"})
    for user in (w.t.user_a, w.t.user_p):  # they see it, so they are told why not
        assert api_client(user).post(url, {"reason": "x"}, format="json").status_code == 403
    _unchanged(g)


def burnin_server_gate_detail(w: World) -> None:
    g = _burnin_gate(w)
    url = f"/api/v1/burnin/server-gate/{g.server.asset_tag}/"
    for user in (w.t.user_a, w.t.user_p):
        assert api_client(user).get(url).json()["missing"] == ["GPU 0: GPU 0 at x8"]
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


def _burnin_server_gate_action(action: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        g = _burnin_gate(w)
        # Nothing blocks the pass: only the caller's rights stand in the way.
        g.fail.run.findings.update(severity="warn")
        url = f"/api/v1/burnin/server-gate/{g.server.asset_tag}/{action}/"
        _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "post", url, {"reason": "x", "note": "x"})
        for user in (w.t.user_a, w.t.user_p):
            assert api_client(user).post(url, {"reason": "x"}, format="json").status_code == 403
        _unchanged(g)

    return case


BURNIN_GATE_CASES: dict[str, Callable[[World], None]] = {
    "burnin-finding-list": burnin_finding_list,
    "burnin-finding-detail": burnin_finding_detail,
    "burnin-finding-waive": burnin_finding_waive,
    "burnin-server-gate-detail": burnin_server_gate_detail,
    "burnin-server-gate-pass": _burnin_server_gate_action("pass"),
    "burnin-server-gate-fail": _burnin_server_gate_action("fail"),
}


# --- burn-in charts: a run of partner P's server of customer A's order ----------------------------------


def burnin_telemetry_detail(w: World) -> None:
    from datetime import UTC, datetime, timedelta

    from burnin.models import TelemetrySample
    from burnin.services.samples import store_rollup

    started = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
    run = factories.make_burnin_run_row(
        _builds(w).server, started_at=started, ended_at=started + timedelta(hours=1)
    )
    TelemetrySample.objects.create(run=run, gpu_index=0, at=started, temp_c=61.0)
    store_rollup(run)  # what the endpoint reads, as after an ingest
    url = f"/api/v1/burnin/telemetry/{run.pk}/"
    # Who sees the server sees its telemetry: the PM, its partner, its order's customer.
    for user in (w.t.pm, w.t.user_p, w.t.user_a):
        response = api_client(user).get(url)
        assert response.status_code == 200, user.username
        assert response.json()["series"]["0"]["temp_c"] == [61.0]
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


BURNIN_CHART_CASES: dict[str, Callable[[World], None]] = {
    "burnin-telemetry-detail": burnin_telemetry_detail,
}


# --- burnin: the probe's upload for P's server, and its runs -------------------------------------------


def _burnin_server(w: World) -> Any:
    """P's server of A's order, assembled: ready to take a burn-in report."""
    server = _builds(w).server
    Server.objects.filter(pk=server.pk).update(status=ServerStatus.ASSEMBLED)
    return server


def _burnin_run(w: World) -> int:
    server = _burnin_server(w)
    url = f"/api/v1/burnin/servers/{server.asset_tag}/reports/"
    with TestCase.captureOnCommitCallbacks(execute=True):  # the report's file is written on commit
        response = post_report(w.t.user_p, url, fitted_report(server))
    assert response.status_code == 201, response.content
    return response.json()["id"]


def burnin_server_reports(w: World) -> None:
    server = _burnin_server(w)
    url = f"/api/v1/burnin/servers/{server.asset_tag}/reports/"
    for user in (w.t.user_b, w.t.user_q, w.t.outsider):
        assert post_report(user, url, fitted_report(server)).status_code == 404, user.username
    # Customer A follows the server, but only its partner (and PMs) post reports.
    assert post_report(w.t.user_a, url, fitted_report(server)).status_code == 403
    assert not BurnInRun.objects.exists()
    server.refresh_from_db()
    assert server.status == ServerStatus.ASSEMBLED
    assert _burnin_run(w)  # the same body from P is stored


def burnin_run_list(w: World) -> None:
    run = _burnin_run(w)
    for user in (w.t.pm, w.t.user_p, w.t.user_a):
        assert _ids(api_client(user).get("/api/v1/burnin/runs/")) == {run}, user.username
    for user in (w.t.user_b, w.t.user_q, w.t.outsider):
        assert _ids(api_client(user).get("/api/v1/burnin/runs/")) == set(), user.username
    server = _builds(w).server.pk
    assert api_client(w.t.user_q).get(f"/api/v1/burnin/runs/?server={server}").status_code == 400


def burnin_run_detail(w: World) -> None:
    url = f"/api/v1/burnin/runs/{_burnin_run(w)}/"
    assert api_client(w.t.user_a).get(url).status_code == 200
    _assert_404([w.t.user_b, w.t.user_q, w.t.outsider], "get", url)


BURNIN_CASES: dict[str, Callable[[World], None]] = {
    "burnin-server-reports": burnin_server_reports,
    "burnin-run-list": burnin_run_list,
    "burnin-run-detail": burnin_run_detail,
}


#: The cases of this module's routes.
CASES: dict[str, Callable[[World], None]] = {
    **BUILDS_CASES,
    **BURNIN_GATE_CASES,
    **BURNIN_CHART_CASES,
    **BURNIN_CASES,
}


@pytest.mark.parametrize("route", sorted(CASES))
def test_isolation(world, route):
    CASES[route](world)
