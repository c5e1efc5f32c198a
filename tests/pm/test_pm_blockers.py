"""What blocks each server's next step, asked in bulk for the PM's pipeline, is what each app's
precondition helper says of the server alone: on a mixed set of servers, in a fixed number of queries."""

from __future__ import annotations

from typing import Any

import pytest

from builds.gates import assembly_gaps, assembly_start_missing, next_steps
from builds.models import BuildStep, ChecklistItem, Server
from burnin.gates import AWAITING_REPORT, burnin_gate_state
from deployment.models import ServerNetwork
from deployment.selectors import deploy_missing
from tests import factories
from tests.deployment.rack_rig import make_rack_world
from tests.warranty.handover_rig import ready_pack
from warranty.selectors import hand_over_missing

pytestmark = pytest.mark.django_db


def _servers(tenants: Any) -> list[Server]:
    """Servers at every stage, some blocked and some not, over two configurations."""
    world = make_rack_world(tenants)  # two servers in burn_in_passed, placed; A has a network record
    order = factories.OrderFactory(server_count=9)
    ChecklistItem.objects.create(configuration=order.configuration, kind="qc_signoff")
    statuses = [
        "planned",
        "burn_in_failed",
        "assembling",
        "assembling",
        "assembled",
        "burn_in",
        "burn_in",
        "burn_in",
        "deployed",
    ]
    servers = factories.make_servers(order)
    for server, status in zip(servers, statuses, strict=True):
        Server.objects.filter(pk=server.pk).update(status=status)
    Server.objects.filter(pk=servers[1].pk).update(partner=tenants.partner_p)
    BuildStep.objects.create(server=servers[3], kind="qc_signoff")
    factories.make_burnin_run(servers[5], findings=[{"code": "pcie_link_downtrained", "severity": "fail"}])
    factories.make_burnin_run(servers[6], findings=[{"code": "power_capped", "severity": "info"}])
    deployed = factories.make_servers(factories.OrderFactory(server_count=1), status="deployed")[0]
    ready_pack(deployed)
    assert ServerNetwork.objects.filter(server=world.server_b).count() == 0
    ids = [server.pk for server in servers] + [deployed.pk, world.server_a.pk, world.server_b.pk]
    return list(Server.objects.filter(pk__in=ids).select_related("order", "partner").order_by("pk"))


def _alone(server: Server) -> list[Any]:
    fresh = Server.objects.select_related("order", "partner").get(pk=server.pk)
    return {
        "planned": assembly_start_missing,
        "burn_in_failed": assembly_start_missing,
        "assembling": assembly_gaps,
        "assembled": lambda s: [AWAITING_REPORT],
        "burn_in": lambda s: burnin_gate_state(server=s).missing,
        "burn_in_passed": lambda s: deploy_missing(server=s),
        "deployed": lambda s: hand_over_missing(server=s),
    }[fresh.status](fresh)


def test_the_bulk_answer_is_each_servers_own_answer(tenants):
    servers = _servers(tenants)
    steps = next_steps(servers)
    assert {server.pk: steps[server.pk].missing for server in servers} == {
        server.pk: _alone(server) for server in servers
    }
    # Mixed indeed: at each stage with a rule, one server may go and another may not.
    by_status: dict[str, set[bool]] = {}
    for server in servers:
        by_status.setdefault(server.status, set()).add(steps[server.pk].ready)
    for status in ("burn_in", "burn_in_passed", "deployed"):
        assert by_status[status] == {True, False}, status
    assert by_status["planned"] == {False} and by_status["burn_in_failed"] == {True}
    assembling = [steps[server.pk].missing for server in servers if server.status == "assembling"]
    assert ["build step not logged: QC sign-off" in gaps for gaps in assembling] == [True, False]


def test_the_bulk_answer_costs_a_fixed_number_of_queries(tenants, django_assert_max_num_queries):
    servers = _servers(tenants)
    # Per stage with a rule: assembly 4, burn-in 4 (the servers' last GPU changes, their judged runs,
    # the runs' findings and stages), deploy 2, handover 1.
    with django_assert_max_num_queries(11):
        next_steps(servers)
