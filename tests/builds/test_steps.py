"""The one registry of server steps (`builds.gates`): the PM's order page and the bench show the same next
step with the same blockers for a server at every stage, the steps follow the lifecycle map, and an
assembled server never goes back to the bench."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from builds import gates
from builds.choices import SERVER_TRANSITIONS, ServerStatus
from builds.models import ChecklistItem, Server
from orders.choices import OrderStatus
from tests import factories
from tests.warranty.handover_rig import ready_pack

pytestmark = pytest.mark.django_db

#: One server per stage, some blocked and some not: (status, assigned to partner P).
STAGES = [
    ("planned", False),
    ("planned", True),
    ("assembling", True),
    ("assembled", True),
    ("burn_in", True),
    ("burn_in", True),
    ("burn_in_failed", True),
    ("burn_in_passed", True),
    ("deployed", True),
    ("deployed", True),
    ("handed_over", True),
]


def _order(tenants: Any) -> list[Server]:
    order = factories.OrderFactory(
        customer=tenants.customer_a, status=OrderStatus.ASSEMBLY, server_count=len(STAGES)
    )
    ChecklistItem.objects.create(configuration=order.configuration, kind="qc_signoff")
    servers = factories.make_servers(order)
    for server, (status, assigned) in zip(servers, STAGES, strict=True):
        Server.objects.filter(pk=server.pk).update(
            status=status, partner=tenants.partner_p if assigned else None
        )
    factories.make_burnin_run(servers[4], findings=[{"code": "pcie_link_downtrained", "severity": "fail"}])
    factories.make_burnin_run(servers[5], findings=[{"code": "power_capped", "severity": "info"}])
    ready_pack(servers[9])
    return list(Server.objects.filter(order=order).select_related("order", "partner").order_by("sequence"))


def _items(fragment: str) -> list[str]:
    return [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", fragment, re.S)]


def _on_the_order_page(page: str, server: Server) -> tuple[str, bool, list[str]] | None:
    """(label, ready, blockers) of the server's row, or None where the row shows no next step."""
    row = re.search(rf'<tr data-server="{re.escape(server.hostname)}">(.*?)</tr>', page, re.S).group(1)
    cell = re.search(r'<td data-label="Next step"><div>(.*?)</div></td>', row, re.S).group(1)
    step = re.search(r'<span class="(ok|bad)">[✓✕] (.*?)</span>', cell)
    if step is None:
        assert cell == "—"
        return None
    return html.unescape(step.group(2)), step.group(1) == "ok", _items(cell)


def _on_the_bench(page: str) -> tuple[str, bool, list[str]] | None:
    """(label, ready, blockers) of the bench's next step: its own list, or for "mark assembled" the list
    of what stands before "assembled" above it."""
    step = re.search(
        r'<p id="next-step" data-step="([\w.]+)">Next step: <span class="(ok|bad)">[✓✕] (.*?)</span></p>',
        page,
    )
    if step is None:
        assert 'id="next-step"' not in page
        return None
    name, ready, label = step.groups()
    own = re.search(r'<ul class="gaps blockers" id="next-step-missing">(.*?)</ul>', page, re.S)
    gaps = re.search(r'<ul class="gaps" id="gaps">(.*?)</ul>', page, re.S)
    if name == gates.MARK_ASSEMBLED:
        assert own is None
        blockers = _items(gaps.group(1)) if gaps else []
    else:
        blockers = _items(own.group(1)) if own else []
    return html.unescape(label), ready == "ok", blockers


def test_the_pm_order_page_and_the_bench_show_the_same_blockers_for_a_server(client, tenants):
    servers = _order(tenants)
    registry = gates.next_steps(servers)
    client.force_login(tenants.pm)
    order_page = client.get(f"/pm/orders/{servers[0].order_id}/").content.decode()
    shown = []
    for server in servers:
        expected = (
            (str(registry[server.pk].label), registry[server.pk].ready, registry[server.pk].missing)
            if server.pk in registry
            else None
        )
        client.force_login(tenants.pm)
        on_the_bench = _on_the_bench(client.get(f"/bench/servers/{server.pk}/").content.decode())
        assert _on_the_order_page(order_page, server) == on_the_bench == expected, server.status
        if server.partner_id is not None:
            # The partner's bench says the same as the PM's.
            client.force_login(tenants.user_p)
            assert _on_the_bench(client.get(f"/bench/servers/{server.pk}/").content.decode()) == expected
        shown.append((server.status, expected))
    by_status = {status: step for status, step in shown}
    assert by_status["handed_over"] is None
    assert by_status["assembling"][0] == "Mark assembled"
    assert "build step not logged: QC sign-off" in by_status["assembling"][2]
    assert by_status["assembled"] == ("Burn-in", False, ["Waits for the probe's burn-in report."])
    assert by_status["burn_in_failed"] == ("Start rework", True, [])
    # At the stages with a rule, one server may go and the other may not.
    for status in ("planned", "burn_in", "deployed"):
        assert {step[1] for each, step in shown if each == status} == {True, False}, status


def test_the_bench_and_the_order_page_speak_german_alike(client, tenants):
    servers = _order(tenants)
    client.force_login(tenants.pm)
    german = {"HTTP_ACCEPT_LANGUAGE": "de"}
    order_page = client.get(f"/pm/orders/{servers[0].order_id}/", **german).content.decode()
    assembled = servers[3]
    bench = client.get(f"/bench/servers/{assembled.pk}/", **german).content.decode()
    row = re.search(rf'<tr data-server="{assembled.hostname}">(.*?)</tr>', order_page, re.S).group(1)
    assert "Wartet auf den Stresstest-Bericht der Sonde." in row
    assert 'data-step="burnin.await_report"' in bench
    assert "<li>Wartet auf den Stresstest-Bericht der Sonde.</li>" in bench


def test_every_step_is_an_arrow_of_the_lifecycle_and_every_status_has_one():
    steps = gates.registered_steps()
    assert {step.name for step in steps} == {
        "builds.start_assembly",
        "builds.start_rework",
        "builds.mark_assembled",
        "burnin.await_report",
        "burnin.pass",
        "deployment.deploy",
        "warranty.hand_over",
    }
    arrows = {(source, target) for source, targets in SERVER_TRANSITIONS.items() for target in targets}
    stepped = {(step.source, step.target) for step in steps}
    assert stepped <= arrows
    # The one arrow without a step: a PM's verdict that a burn-in failed.
    assert arrows - stepped == {(ServerStatus.BURN_IN, ServerStatus.BURN_IN_FAILED)}
    assert sorted(step.source for step in steps) == sorted(set(ServerStatus.values) - {"handed_over"})


def test_a_step_off_the_lifecycle_or_a_second_step_from_one_status_is_refused():
    with pytest.raises(ValueError, match="no arrow assembled → assembling"):
        gates.register_step(
            name="tests.reopen",
            source=ServerStatus.ASSEMBLED,
            target=ServerStatus.ASSEMBLING,
            label="Reopen",
            missing_many=lambda servers: {},
        )
    with pytest.raises(ValueError, match=re.escape("already has its step, builds.start_assembly")):
        gates.register_step(
            name="tests.start",
            source=ServerStatus.PLANNED,
            target=ServerStatus.ASSEMBLING,
            label="Start",
            missing_many=lambda servers: {},
        )
    assert "tests.reopen" not in {step.name for step in gates.registered_steps()}
    assert "tests.start" not in {step.name for step in gates.registered_steps()}


def test_an_assembled_server_does_not_go_back_to_assembling(client, tenants):
    server = factories.make_servers(factories.OrderFactory(server_count=1), status="assembled")[0]
    Server.objects.filter(pk=server.pk).update(partner=tenants.partner_p)
    client.force_login(tenants.user_p)
    page = client.get(f"/bench/servers/{server.pk}/").content.decode()
    assert "/start-assembly/" not in page and "/mark-assembled/" not in page
    api = client.post(f"/api/v1/builds/servers/{server.pk}/start-assembly/", content_type="application/json")
    assert api.status_code == 409
    assert api.json()["code"] == "invalid_transition"
    refused = client.post(f"/bench/servers/{server.pk}/start-assembly/")
    assert refused.status_code == 409
    assert Server.objects.get(pk=server.pk).status == ServerStatus.ASSEMBLED
