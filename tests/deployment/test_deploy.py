"""burn_in_passed → deployed (`deployment.services.deploy`), the order gate that holds the handover until
every server is deployed, and burn-in's GPU power feeding the circuit check."""

from __future__ import annotations

import pytest

from builds.choices import ServerStatus
from builds.models import Server
from burnin.models import GpuResult
from burnin.services.gate import server_pass_burnin
from deployment.models import RackPlacement
from deployment.services import network_set, placement_create, server_deploy
from orders.choices import OrderStatus
from orders.models import Order
from tests import factories
from tests.deployment import svc_rig as rig
from tests.tenants_rig import api_client
from werkbank.errors import RuleViolation
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def pm():
    return factories.make_pm(username="deploy-pm")


@pytest.fixture
def rack_a1(pm):
    rack, (a1,) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}])
    return rack, a1


def _ready(server, pm, rack_a1, lowest_u=1, n=11):
    rack, a1 = rack_a1
    placement_create(server=server, rack=rack, lowest_u=lowest_u, feeds=[a1], actor=pm)
    network_set(
        server=server,
        actor=pm,
        management_ip=f"10.30.0.{n}",
        bmc_ip=f"10.30.1.{n}",
        bmc_mac=f"3c:ec:ef:00:00:{n:02x}",
    )


def test_every_missing_precondition_is_named_at_once(pm):
    server = rig.server(status="burn_in")

    with pytest.raises(RuleViolation) as refusal:
        server_deploy(server=server, actor=pm)

    assert refusal.value.code == "deploy_missing"
    assert refusal.value.missing == [
        f"Server {server.hostname} is burn-in; it must pass burn-in first.",
        f"Server {server.hostname} has no rack placement.",
        f"Server {server.hostname} has no network record (management IP, BMC IP and BMC MAC).",
    ]
    assert refusal.value.message == (
        f"Server {server.hostname} cannot be deployed yet: {' '.join(refusal.value.missing)}"
    )
    assert Server.objects.get(pk=server.pk).status == ServerStatus.BURN_IN
    assert not AuditEvent.objects.for_object(server).exists()


def test_a_placed_server_without_network_names_only_that(pm, rack_a1):
    server = rig.server()
    rack, a1 = rack_a1
    placement_create(server=server, rack=rack, lowest_u=1, feeds=[a1], actor=pm)

    with pytest.raises(RuleViolation) as refusal:
        server_deploy(server=server, actor=pm)

    assert refusal.value.missing == [
        f"Server {server.hostname} has no network record (management IP, BMC IP and BMC MAC)."
    ]


def test_deploy_when_everything_holds_then_never_again(pm, rack_a1):
    server = rig.server()
    _ready(server, pm, rack_a1, lowest_u=17)

    deployed = server_deploy(server=server, actor=pm, note="Live in Sofia")

    assert deployed.status == ServerStatus.DEPLOYED
    assert Server.objects.get(pk=server.pk).status == ServerStatus.DEPLOYED
    transition = AuditEvent.objects.for_object(server).get(verb="server.deploy")
    assert (transition.before["status"], transition.after["status"], transition.actor) == (
        "burn_in_passed",
        "deployed",
        pm,
    )
    (event,) = rig.events(server, "deployment.deploy")
    assert (event.actor, event.note) == (pm, "Live in Sofia")
    assert event.after == {
        "site": rack_a1[0].site.name,
        "rack": "R01",
        "lowest_u": 17,
        "top_u": 20,
        "management_ip": "10.30.0.11",
    }

    with pytest.raises(RuleViolation) as again:
        server_deploy(server=server, actor=pm)
    assert again.value.code == "invalid_transition"
    assert AuditEvent.objects.for_object(server).filter(verb="server.deploy").count() == 1
    # Deployed, its placement is part of the record.
    assert RackPlacement.objects.filter(server=server).exists()


def _hand_over(user, order: Order):
    return api_client(user).post(f"/api/v1/orders/{order.pk}/hand-over/", {}, format="json")


def _hand_over_check(user, order: Order) -> dict:
    response = api_client(user).get(f"/api/v1/orders/{order.pk}/transition-checks/")
    assert response.status_code == 200, response.json()
    return next(entry for entry in response.json()["transitions"] if entry["action"] == "hand_over")


def test_the_order_is_handed_over_once_every_server_is_deployed_and_handed_over(tenants, rack_a1):
    pm = tenants.pm
    order = factories.pass_gate(
        factories.OrderFactory(
            customer=tenants.customer_a,
            status=OrderStatus.DEPLOYMENT,
            server_count=3,
            configuration=rig.config(gpus=(300, 1), others=()),
        )
    )
    first, second, third = factories.make_servers(order, status="burn_in_passed")
    Server.objects.filter(pk=third.pk).update(status=ServerStatus.BURN_IN_FAILED)
    _ready(first, pm, rack_a1, lowest_u=1, n=11)
    server_deploy(server=first, actor=pm)
    # Deployment names the servers not deployed; the warranty gate the deployed one not handed over yet
    # (issue #24: the order never runs ahead of its servers).
    hand_first = f"Server {first.hostname} is deployed; hand it over first: the order follows its servers."
    expected = [
        f"Server {second.hostname} is burn-in passed; it must be deployed first.",
        f"Server {third.hostname} is burn-in failed; it must be deployed first.",
        hand_first,
    ]

    check = _hand_over_check(pm, order)
    refused = _hand_over(pm, order)

    assert refused.status_code == 409
    body = refused.json()
    assert body["code"] == "order_gate"
    assert body["missing"] == expected
    assert (check["ready"], check["missing"], check["target"]) == (False, expected, "handed_over")
    assert Order.objects.get(pk=order.pk).status == OrderStatus.DEPLOYMENT
    # A customer sees the order but may not move it; another customer does not see it.
    assert _hand_over(tenants.user_a, order).status_code == 403
    assert _hand_over(tenants.user_b, order).status_code == 404
    assert api_client(tenants.user_b).get(f"/api/v1/orders/{order.pk}/transition-checks/").status_code == 404

    Server.objects.filter(pk=third.pk).update(status=ServerStatus.BURN_IN_PASSED)
    _ready(second, pm, rack_a1, lowest_u=5, n=12)
    _ready(third, pm, rack_a1, lowest_u=9, n=13)
    server_deploy(server=second, actor=pm)
    assert _hand_over_check(pm, order)["missing"][0] == (
        f"Server {third.hostname} is burn-in passed; it must be deployed first."
    )
    server_deploy(server=third, actor=pm)
    assert len(_hand_over_check(pm, order)["missing"]) == 3  # every server deployed, none handed over
    # The servers go first (their handover needs a ready pack, `server_hand_over`); here they are simply
    # marked, as the warranty app would leave them, and the order follows.
    Server.objects.filter(order=order).update(status=ServerStatus.HANDED_OVER)

    assert _hand_over_check(pm, order) == {
        "action": "hand_over",
        "target": "handed_over",
        "ready": True,
        "missing": [],
        "overridable": False,
        "needs_reason": False,
    }
    handed = _hand_over(pm, order)
    assert handed.status_code == 200, handed.json()
    assert handed.json()["status"] == "handed_over"
    assert Order.objects.get(pk=order.pk).status == OrderStatus.HANDED_OVER


def test_a_passed_burn_in_feeds_the_circuit_check(pm, settings):
    settings.WERKBANK_PSU_EFFICIENCY = 0.8
    server = rig.server(status="burn_in")  # 4 × 500 W GPUs, 2 × 250 W CPUs
    run = factories.make_burnin_run(server, stages=[{"name": "burn", "status": "ok"}])
    GpuResult.objects.bulk_create(
        GpuResult(run=run, index=index, mean_power_w=watts)
        for index, watts in enumerate([410.5, 420.0, 415.5, 404.0])
    )

    passed = server_pass_burnin(server=server, actor=pm)
    assert passed.burnin_gpu_power_w == pytest.approx(1650.0)

    rack, (a1,) = rig.rack(pm)  # 2,944 W: the 3,125 W budget would not fit, the measured 2,687.5 W does
    placement_create(server=passed, rack=rack, lowest_u=1, feeds=[a1], actor=pm)

    (event,) = rig.events(server, "deployment.place")
    # (1,650 W of GPUs + 500 W of host) / 0.8 = 2,687.5 W.
    assert (event.after["wall_source"], event.after["wall_w"], event.after["override"]) == (
        "burn_in",
        2688,
        False,
    )
    assert event.after["circuits"] == {"A1": {"load_w": 2688, "limit_w": 2944, "percent_of_limit": 91.3}}


def test_a_gpu_without_a_mean_power_leaves_the_budget_in_charge(pm, settings):
    settings.WERKBANK_PSU_EFFICIENCY = 0.8
    server = rig.server(status="burn_in")
    run = factories.make_burnin_run(server, stages=[{"name": "burn", "status": "ok"}])
    # GPU 3's telemetry was lost: a sum of three GPUs would understate the load by a quarter.
    GpuResult.objects.bulk_create(
        GpuResult(run=run, index=index, mean_power_w=watts)
        for index, watts in enumerate([410.5, 420.0, 415.5, None])
    )

    passed = server_pass_burnin(server=server, actor=pm)

    assert passed.burnin_gpu_power_w is None
    rack, (a1,) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 32}])
    placement_create(server=passed, rack=rack, lowest_u=1, feeds=[a1], actor=pm)
    (event,) = rig.events(server, "deployment.place")
    assert (event.after["wall_source"], event.after["wall_w"]) == ("budget", 3125)


def test_a_run_with_fewer_gpus_than_the_configuration_leaves_the_budget_in_charge(pm):
    server = rig.server(status="burn_in")  # the configuration has 4 GPUs
    run = factories.make_burnin_run(server, stages=[{"name": "burn", "status": "ok"}])
    # Only three cards reported: the fourth fell off the bus, so their sum would understate the load.
    GpuResult.objects.bulk_create(
        GpuResult(run=run, index=index, mean_power_w=watts)
        for index, watts in enumerate([410.5, 420.0, 415.5])
    )

    assert server_pass_burnin(server=server, actor=pm).burnin_gpu_power_w is None
