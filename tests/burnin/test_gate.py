"""The burn-in gate through the API: pass, fail, waive, and the order's way to deployment.

Runs are written directly by `factories.make_burnin_run` (as the ingest leaves them); everything else goes
through the routes a PM, a partner or a customer would use.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection, connections

from builds.choices import ServerStatus
from builds.models import Server
from burnin.models import Finding, GpuResult
from orders.choices import OrderStatus
from orders.models import Order
from tests import factories
from tests.tenants_rig import Tenants, api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

LINK_FAIL = {
    "code": "pcie_link_downtrained",
    "severity": "fail",
    "subject": "GPU 2",
    "gpu_index": 2,
    "message": "GPU 2: H2D 13.9 GB/s, 0.50 × the median: link at x8 (expected x16)",
}
LINK_FAIL_4 = {
    **LINK_FAIL,
    "subject": "GPU 4",
    "gpu_index": 4,
    "message": LINK_FAIL["message"].replace("2", "4", 1),
}
THERMAL_WARN = {
    "code": "thermal_margin_low",
    "severity": "warn",
    "subject": "GPU 1",
    "gpu_index": 1,
    "message": "GPU 1: thermal margin 2 °C at peak",
}
POWER_INFO = {
    "code": "power_capped",
    "severity": "info",
    "subject": "GPU 0",
    "gpu_index": 0,
    "message": "GPU 0: software power cap at full load (normal)",
}
BURN_INTERRUPTED = {"name": "burn", "status": "interrupted", "reason": "workshop power distribution failure"}
STAGES_OK = [{"name": "inventory", "status": "ok"}, {"name": "bench", "status": "ok"}]


def stage_finding(severity: str) -> dict[str, Any]:
    return {
        "code": "stage_incomplete",
        "severity": severity,
        "subject": "stage burn",
        "message": "stage `burn` interrupted: workshop power distribution failure",
        "evidence": {"stage": "burn", "status": "interrupted"},
    }


@dataclass
class Gate:
    t: Tenants
    order: Order
    server: Server
    other: Server
    server_b: Server


@pytest.fixture
def gate(tenants: Tenants) -> Gate:
    """Customer A's order in burn-in: two servers built by partner P, both in burn-in. Customer B's order has
    one server, built by partner Q, in burn-in too."""
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.BURN_IN, server_count=2)
    factories.make_servers(order, status=ServerStatus.BURN_IN)
    Server.objects.filter(order=order).update(partner=tenants.partner_p)
    order_b = factories.OrderFactory(customer=tenants.customer_b, status=OrderStatus.BURN_IN, server_count=1)
    (server_b,) = factories.make_servers(order_b, status=ServerStatus.BURN_IN)
    Server.objects.filter(pk=server_b.pk).update(partner=tenants.partner_q)
    server, other = Server.objects.filter(order=order).order_by("sequence")
    return Gate(
        t=tenants, order=order, server=server, other=other, server_b=Server.objects.get(pk=server_b.pk)
    )


def gate_url(server: Server, action: str = "") -> str:
    return f"/api/v1/burnin/server-gate/{server.asset_tag}/{action + '/' if action else ''}"


def post(user: Any, url: str, body: dict | None = None) -> Any:
    return api_client(user).post(url, body or {}, format="json")


def waive(user: Any, finding: Finding, reason: str = "Riser re-seated; rerun not needed") -> Any:
    return post(user, f"/api/v1/burnin/findings/{finding.pk}/waive/", {"reason": reason})


def status_of(server: Server) -> str:
    server.refresh_from_db()
    return server.status


def verbs(obj: Any) -> list[str]:
    return list(AuditEvent.objects.for_object(obj).order_by("id").values_list("verb", flat=True))


# --- pass ----------------------------------------------------------------------------------------------


def test_pass_is_refused_while_a_fail_is_unwaived_and_allowed_once_a_pm_waived_it(gate):
    run = factories.make_burnin_run(gate.server, findings=[LINK_FAIL, LINK_FAIL_4, THERMAL_WARN, POWER_INFO])
    fail_2, fail_4 = run.findings.filter(severity="fail").order_by("id")
    events = AuditEvent.objects.count()

    refused = post(gate.t.pm, gate_url(gate.server, "pass"))

    assert refused.status_code == 409
    body = refused.json()
    assert body["code"] == "burnin_unwaived_failures"
    assert body["missing"] == [LINK_FAIL["message"], LINK_FAIL_4["message"]]
    assert gate.server.hostname in body["detail"]
    assert status_of(gate.server) == ServerStatus.BURN_IN
    assert AuditEvent.objects.count() == events
    state = api_client(gate.t.pm).get(gate_url(gate.server)).json()
    assert (state["ready"], state["passed"], state["status"]) == (False, False, "burn_in")
    assert state["run"]["id"] == run.pk
    assert [finding["id"] for finding in state["blocking"]] == [fail_2.pk, fail_4.pk]
    assert state["missing"] == body["missing"]

    waived = waive(gate.t.pm, fail_2, "GPU 2 re-seated; x16 confirmed with lspci")
    assert waived.status_code == 200, waived.json()
    assert (waived.json()["waived"], waived.json()["waived_by"]) == (True, "pm")
    assert waived.json()["waiver_reason"] == "GPU 2 re-seated; x16 confirmed with lspci"
    assert post(gate.t.pm, gate_url(gate.server, "pass")).json()["missing"] == [LINK_FAIL_4["message"]]
    assert waive(gate.t.pm, fail_4).status_code == 200
    assert api_client(gate.t.pm).get(gate_url(gate.server)).json()["ready"] is True

    GpuResult.objects.bulk_create(GpuResult(run=run, index=index, mean_power_w=290.5) for index in range(8))
    passed = post(gate.t.pm, gate_url(gate.server, "pass"), {"note": "Both links fixed"})

    assert passed.status_code == 200, passed.json()
    assert (passed.json()["status"], passed.json()["passed"], passed.json()["missing"]) == (
        "burn_in_passed",
        True,
        [],
    )
    assert status_of(gate.server) == ServerStatus.BURN_IN_PASSED
    assert verbs(gate.server) == [
        "burnin.finding_waive",
        "burnin.finding_waive",
        "server.pass_burn_in",
        "server.record_burnin_power",
    ]
    # The GPUs' mean power of the accepted run goes onto the server, for deployment's circuit check.
    gate.server.refresh_from_db()
    assert gate.server.burnin_gpu_power_w == pytest.approx(8 * 290.5)
    waiver = AuditEvent.objects.for_object(gate.server).filter(verb="burnin.finding_waive").first()
    assert (waiver.actor, waiver.note) == (gate.t.pm, "GPU 2 re-seated; x16 confirmed with lspci")
    assert waiver.before == {"finding": fail_2.pk, "waived": False}
    assert waiver.after["finding"] == fail_2.pk
    assert (waiver.after["code"], waiver.after["waived"]) == ("pcie_link_downtrained", True)
    transition = AuditEvent.objects.for_object(gate.server).get(verb="server.pass_burn_in")
    assert (transition.before, transition.after, transition.note) == (
        {"status": "burn_in"},
        {"status": "burn_in_passed"},
        "Both links fixed",
    )
    accepted = AuditEvent.objects.for_object(run).get()
    assert accepted.verb == "burnin.pass"
    assert accepted.after["waived_findings"] == [fail_2.pk, fail_4.pk]


def test_a_warning_alone_does_not_block(gate):
    factories.make_burnin_run(gate.server, findings=[THERMAL_WARN, POWER_INFO], stages=STAGES_OK)

    assert api_client(gate.t.pm).get(gate_url(gate.server)).json()["ready"] is True
    response = post(gate.t.pm, gate_url(gate.server, "pass"))

    assert response.status_code == 200, response.json()
    assert status_of(gate.server) == ServerStatus.BURN_IN_PASSED
    assert not Finding.objects.filter(waived_at__isnull=False).exists()


def test_only_the_latest_run_counts(gate):
    """A rerun after a fix decides; an earlier run's failures no longer block, a later run's do."""
    factories.make_burnin_run(gate.server, findings=[LINK_FAIL], started_at=datetime(2026, 8, 1, tzinfo=UTC))
    factories.make_burnin_run(
        gate.server, findings=[THERMAL_WARN], started_at=datetime(2026, 8, 5, tzinfo=UTC)
    )
    assert post(gate.t.pm, gate_url(gate.server, "pass")).status_code == 200

    factories.make_burnin_run(
        gate.other, findings=[THERMAL_WARN], started_at=datetime(2026, 8, 5, tzinfo=UTC)
    )
    factories.make_burnin_run(gate.other, findings=[LINK_FAIL], started_at=datetime(2026, 8, 1, tzinfo=UTC))
    factories.make_burnin_run(gate.other, findings=[LINK_FAIL_4], started_at=datetime(2026, 8, 9, tzinfo=UTC))
    refused = post(gate.t.pm, gate_url(gate.other, "pass"))
    assert refused.status_code == 409
    assert refused.json()["missing"] == [LINK_FAIL_4["message"]]


@pytest.mark.parametrize("severity", ["warn", "fail"])
def test_an_interrupted_stage_blocks_until_a_pm_decides(gate, severity):
    """Whatever severity the analysis gives it, an unfinished stage needs the PM's waiver with a reason."""
    run = factories.make_burnin_run(
        gate.server, stages=[*STAGES_OK, BURN_INTERRUPTED], findings=[stage_finding(severity), THERMAL_WARN]
    )
    stage = run.findings.get(code="stage_incomplete")

    refused = post(gate.t.pm, gate_url(gate.server, "pass"))
    assert refused.status_code == 409
    # The gate names the subject, then the sentence (a legacy row's stored English here).
    assert refused.json()["missing"] == [
        "stage burn: stage `burn` interrupted: workshop power distribution failure"
    ]
    assert status_of(gate.server) == ServerStatus.BURN_IN

    assert waive(gate.t.pm, stage, "70 h of 72 ran clean before the power cut; accepted").status_code == 200
    passed = post(gate.t.pm, gate_url(gate.server, "pass"))

    assert passed.status_code == 200, passed.json()
    assert status_of(gate.server) == ServerStatus.BURN_IN_PASSED


def test_an_unfinished_stage_without_a_finding_cannot_be_passed(gate):
    """Should the analysis record no finding for a stage that did not finish, nobody may decide it away."""
    factories.make_burnin_run(
        gate.server,
        stages=[*STAGES_OK, {"name": "burn", "status": "failed", "reason": "GPU fell off the bus"}],
    )

    refused = post(gate.t.pm, gate_url(gate.server, "pass"))

    assert refused.status_code == 409
    (sentence,) = refused.json()["missing"]
    assert sentence.startswith("Stage burn failed: GPU fell off the bus;")
    assert "run again" in sentence
    assert api_client(gate.t.pm).get(gate_url(gate.server)).json()["missing"] == [sentence]
    assert status_of(gate.server) == ServerStatus.BURN_IN


def test_pass_needs_a_run(gate):
    events = AuditEvent.objects.count()
    refused = post(gate.t.pm, gate_url(gate.server, "pass"))

    assert refused.status_code == 409
    assert refused.json()["code"] == "burnin_no_run"
    assert refused.json()["missing"] == [
        f"Server {gate.server.hostname} has no burn-in run yet: the probe's report must be uploaded first."
    ]
    state = api_client(gate.t.pm).get(gate_url(gate.server)).json()
    assert (state["run"], state["ready"], state["missing"]) == (None, False, refused.json()["missing"])
    assert AuditEvent.objects.count() == events


def test_pass_needs_a_server_in_burn_in(gate):
    Server.objects.filter(pk=gate.server.pk).update(status=ServerStatus.ASSEMBLED)
    factories.make_burnin_run(gate.server, findings=[THERMAL_WARN])

    refused = post(gate.t.pm, gate_url(gate.server, "pass"))

    assert refused.status_code == 409
    assert refused.json()["code"] == "invalid_transition"
    assert "is assembled" in refused.json()["detail"]
    state = api_client(gate.t.pm).get(gate_url(gate.server)).json()
    assert state["ready"] is False
    assert state["missing"] == [refused.json()["detail"]]
    assert status_of(gate.server) == ServerStatus.ASSEMBLED


# --- fail and rework -----------------------------------------------------------------------------------


def test_fail_sends_the_server_back_to_its_partner_for_rework(gate):
    factories.make_burnin_run(gate.server, findings=[LINK_FAIL])
    for body in ({}, {"reason": "   "}):
        refused = post(gate.t.pm, gate_url(gate.server, "fail"), body)
        assert refused.status_code == 400
        assert "reason" in refused.json()
    assert status_of(gate.server) == ServerStatus.BURN_IN
    assert verbs(gate.server) == []

    failed = post(gate.t.pm, gate_url(gate.server, "fail"), {"reason": "GPU 2 at x8: replace the riser"})

    assert failed.status_code == 200, failed.json()
    assert failed.json()["status"] == "burn_in_failed"
    assert status_of(gate.server) == ServerStatus.BURN_IN_FAILED
    event = AuditEvent.objects.for_object(gate.server).get()
    assert (event.verb, event.before, event.after, event.note) == (
        "server.fail_burn_in",
        {"status": "burn_in"},
        {"status": "burn_in_failed"},
        "GPU 2 at x8: replace the riser",
    )
    assert post(gate.t.pm, gate_url(gate.server, "pass")).json()["code"] == "invalid_transition"

    rework = post(
        gate.t.user_p, f"/api/v1/builds/servers/{gate.server.pk}/start-assembly/", {"note": "riser"}
    )

    assert rework.status_code == 200, rework.json()
    assert status_of(gate.server) == ServerStatus.ASSEMBLING


# --- who may ---------------------------------------------------------------------------------------------


def test_only_pms_pass_or_fail_burn_in(gate):
    """Partner P and customer A see the server's gate; they are told they may not act. Others get a 404."""
    factories.make_burnin_run(gate.server, findings=[THERMAL_WARN])
    for user in (gate.t.user_p, gate.t.user_a):
        assert api_client(user).get(gate_url(gate.server)).status_code == 200
        for action, body in (("pass", {}), ("fail", {"reason": "x"})):
            response = post(user, gate_url(gate.server, action), body)
            assert response.status_code == 403, (user.username, action)
            assert "Only project managers" in response.json()["detail"]
    for user in (gate.t.user_b, gate.t.user_q, gate.t.outsider):
        assert api_client(user).get(gate_url(gate.server)).status_code == 404
        for action, body in (("pass", {}), ("fail", {"reason": "x"})):
            assert post(user, gate_url(gate.server, action), body).status_code == 404
    assert status_of(gate.server) == ServerStatus.BURN_IN
    assert verbs(gate.server) == []


def test_waivers_are_for_pms(gate):
    run = factories.make_burnin_run(gate.server, findings=[LINK_FAIL, POWER_INFO])
    fail, info = run.findings.get(severity="fail"), run.findings.get(severity="info")
    url = f"/api/v1/burnin/findings/{fail.pk}/"

    for user in (gate.t.user_p, gate.t.user_a):  # they see the finding, read-only
        assert api_client(user).get(url).status_code == 200
        refused = waive(user, fail)
        assert refused.status_code == 403, user.username
        assert refused.json()["detail"] == "Only project managers waive findings."
    for user in (gate.t.user_b, gate.t.user_q, gate.t.outsider):
        assert api_client(user).get(url).status_code == 404
        assert waive(user, fail).status_code == 404
    for body in ({}, {"reason": "  "}):
        refused = post(gate.t.pm, f"{url}waive/", body)
        assert refused.status_code == 400
        assert "reason" in refused.json()
    fail.refresh_from_db()
    assert not fail.waived
    assert verbs(gate.server) == []

    refused_info = waive(gate.t.pm, info)
    assert refused_info.status_code == 409
    assert refused_info.json()["code"] == "finding_not_waivable"

    assert waive(gate.t.pm, fail, "first").status_code == 200
    again = waive(gate.t.pm, fail, "second")
    assert again.status_code == 409
    assert again.json()["code"] == "finding_already_waived"
    assert "first" in again.json()["detail"]
    fail.refresh_from_db()
    assert fail.waiver_reason == "first"
    assert verbs(gate.server) == ["burnin.finding_waive"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("trial", range(3))
def test_two_pms_waiving_the_same_finding_at_once_write_one_waiver(gate, trial):
    """The finding's row lock: the second PM waits, then finds it waived (409); one waiver, one audit row."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks are exercised on PostgreSQL")
    fail = factories.make_burnin_run(gate.server, findings=[LINK_FAIL]).findings.get()
    colleague = factories.make_pm(username=f"pm-colleague-{trial}")
    barrier = threading.Barrier(2)
    results: list[Any] = [None, None]

    def run(index: int, user: Any) -> None:
        try:
            barrier.wait(timeout=10)
            response = waive(user, fail, f"reason {index}")
            results[index] = (response.status_code, response.json())
        except Exception as exc:  # surfaces in the assertion instead of dying silently in the thread
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, user)) for i, user in enumerate((gate.t.pm, colleague))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert sorted(result[0] for result in results if isinstance(result, tuple)) == [200, 409], results
    assert next(result[1] for result in results if result[0] == 409)["code"] == "finding_already_waived"
    fail.refresh_from_db()
    winner = next(index for index, result in enumerate(results) if result[0] == 200)
    assert fail.waiver_reason == f"reason {winner}"
    assert verbs(gate.server) == ["burnin.finding_waive"]


# --- the findings list -----------------------------------------------------------------------------------


def test_findings_list_filters_and_scopes(gate):
    run = factories.make_burnin_run(gate.server, findings=[LINK_FAIL, THERMAL_WARN, POWER_INFO])
    other_run = factories.make_burnin_run(gate.other, findings=[LINK_FAIL_4])
    run_b = factories.make_burnin_run(gate.server_b, findings=[LINK_FAIL])
    waive(gate.t.pm, run.findings.get(severity="fail"))

    def ids(user: Any, **params: Any) -> set[int]:
        response = api_client(user).get("/api/v1/burnin/findings/", params)
        assert response.status_code == 200, response.content
        return {row["id"] for row in response.json()["results"]}

    def of(*runs: Any, **narrow: Any) -> set[int]:
        return set(Finding.objects.filter(run__in=runs, **narrow).values_list("id", flat=True))

    assert ids(gate.t.pm) == of(run, other_run, run_b)
    assert ids(gate.t.user_a) == ids(gate.t.user_p) == of(run, other_run)
    assert ids(gate.t.user_b) == ids(gate.t.user_q) == of(run_b)
    assert ids(gate.t.outsider) == set()
    assert ids(gate.t.user_a, run=run.pk) == of(run)
    assert ids(gate.t.user_a, server=gate.other.pk) == of(other_run)
    assert ids(gate.t.pm, severity="fail") == of(run, other_run, run_b, severity="fail")
    assert ids(gate.t.pm, severity=["warn", "info"]) == of(run, severity__in=["warn", "info"])
    assert ids(gate.t.pm, waived="true") == of(run, severity="fail")
    assert ids(gate.t.pm, waived="false", severity="fail") == of(other_run, run_b)
    assert ids(gate.t.pm, code="thermal_margin_low") == of(run, code="thermal_margin_low")
    assert ids(gate.t.pm, q="x8") == of(run, other_run, run_b, severity="fail")
    # Naming another tenant's run or server is an invalid choice, not a leak.
    for params in ({"run": run_b.pk}, {"server": gate.server_b.pk}):
        assert api_client(gate.t.user_a).get("/api/v1/burnin/findings/", params).status_code == 400

    row = next(
        row
        for row in api_client(gate.t.user_a).get("/api/v1/burnin/findings/").json()["results"]
        if row["severity"] == "fail" and row["run"] == run.pk
    )
    assert row == {
        "id": row["id"],
        "run": run.pk,
        "server": gate.server.asset_tag,
        "hostname": gate.server.hostname,
        "code": "pcie_link_downtrained",
        "severity": "fail",
        "subject": "GPU 2",
        "gpu_index": 2,
        "message": LINK_FAIL["message"],
        # A row without params reads its stored sentence, without the subject it began with.
        "text": LINK_FAIL["message"].removeprefix("GPU 2: "),
        "params": {},
        "explained_by": None,
        "evidence": {},
        "rule_version": "test-1",
        "waived": True,  # that, when and why; not the PM's login (werkbank/audiences.py)
        "waived_at": row["waived_at"],
        "waiver_reason": "Riser re-seated; rerun not needed",
    }


def test_findings_list_query_count_does_not_grow_with_the_rows(gate, django_assert_num_queries):
    for server in (gate.server, gate.other, gate.server_b):
        run = factories.make_burnin_run(server, findings=[LINK_FAIL, THERMAL_WARN, POWER_INFO])
        waive(gate.t.pm, run.findings.get(severity="fail"))
    client = api_client(gate.t.user_a)
    client.get("/api/v1/burnin/findings/")  # warm the caches (content types, the user's groups)

    # The count and the page, with servers and waivers joined, and the caller's organization kinds.
    with django_assert_num_queries(3):
        response = client.get("/api/v1/burnin/findings/")
    assert len(response.json()["results"]) == 6


# --- the order gate --------------------------------------------------------------------------------------


def start_deployment(user: Any, order: Order) -> Any:
    return post(user, f"/api/v1/orders/{order.pk}/start-deployment/")


def deployment_check(user: Any, order: Order) -> dict:
    payload = api_client(user).get(f"/api/v1/orders/{order.pk}/transition-checks/").json()
    return {entry["action"]: entry for entry in payload["transitions"]}["start_deployment"]


def test_no_deployment_until_every_server_passed_burn_in(gate):
    for server in (gate.server, gate.other):
        factories.make_burnin_run(server, findings=[THERMAL_WARN])
    first, second = gate.server.hostname, gate.other.hostname

    refused = start_deployment(gate.t.pm, gate.order)

    assert refused.status_code == 409
    assert refused.json()["code"] == "order_gate"
    assert refused.json()["missing"] == [
        f"Server {first} is burn-in; it must pass burn-in first.",
        f"Server {second} is burn-in; it must pass burn-in first.",
    ]
    assert deployment_check(gate.t.pm, gate.order)["missing"] == refused.json()["missing"]

    assert post(gate.t.pm, gate_url(gate.server, "pass")).status_code == 200
    assert post(gate.t.pm, gate_url(gate.other, "fail"), {"reason": "fan wall loose"}).status_code == 200
    expected = [f"Server {second} is burn-in failed; it must pass burn-in first."]
    assert start_deployment(gate.t.pm, gate.order).json()["missing"] == expected
    check = deployment_check(gate.t.pm, gate.order)
    assert (check["ready"], check["missing"]) == (False, expected)
    gate.order.refresh_from_db()
    assert gate.order.status == OrderStatus.BURN_IN

    Server.objects.filter(pk=gate.other.pk).update(status=ServerStatus.BURN_IN)  # reworked, burnt in again
    factories.make_burnin_run(gate.other, findings=[POWER_INFO])
    assert post(gate.t.pm, gate_url(gate.other, "pass")).status_code == 200
    assert deployment_check(gate.t.pm, gate.order) == {
        "action": "start_deployment",
        "target": "deployment",
        "ready": True,
        "missing": [],
        "overridable": False,
        "needs_reason": False,
    }

    allowed = start_deployment(gate.t.pm, gate.order)

    assert allowed.status_code == 200, allowed.json()
    assert allowed.json()["status"] == "deployment"


def test_the_deployment_gate_names_ten_servers_and_counts_the_rest(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.BURN_IN, server_count=13)
    servers = factories.make_servers(order, status=ServerStatus.BURN_IN)
    Server.objects.filter(pk=servers[0].pk).update(status=ServerStatus.DEPLOYED)

    missing = start_deployment(tenants.pm, order).json()["missing"]

    assert len(missing) == 11
    assert missing[0] == f"Server {servers[1].hostname} is burn-in; it must pass burn-in first."
    assert missing[-1] == "2 more servers have not passed burn-in yet."


def test_an_order_without_servers_cannot_deploy(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.BURN_IN)
    response = start_deployment(tenants.pm, order)
    assert response.status_code == 409
    assert response.json()["missing"] == [f"Order {order.reference} has no servers to deploy."]
