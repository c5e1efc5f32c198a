"""Servers through the API: progress for the PM, the partner's transitions, and the assembled gate."""

from __future__ import annotations

import pytest

from builds.choices import ServerStatus
from builds.services import server_assign_partner, servers_create_for_order
from tests import factories
from tests.builds.bench_rig import CHASSIS, DIMMS, GPUS_L1, blacklist, get, install, post, snapshot
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db

SERVERS = "/api/v1/builds/servers/"


def _ids(response) -> set[int]:
    assert response.status_code == 200, response.content
    return {row["id"] for row in response.json()["results"]}


def test_each_sees_their_servers(bench):
    mine = {bench.server.pk, bench.other_server.pk}
    assert _ids(get(bench.t.pm, SERVERS)) == mine | {bench.server_q.pk}
    assert _ids(get(bench.t.user_p, SERVERS)) == mine
    assert _ids(get(bench.t.user_a, SERVERS)) == mine
    assert _ids(get(bench.t.user_q, SERVERS)) == {bench.server_q.pk}
    assert _ids(get(bench.t.user_b, SERVERS)) == {bench.server_q.pk}
    assert _ids(get(bench.t.outsider, SERVERS)) == set()


def test_a_server_shows_its_order_partner_and_progress(bench):
    install(bench, "GPU-L1-1", "PCIe-1")
    assert blacklist(bench, "PCIe-2", "bent pins").status_code == 201

    row = get(bench.t.user_a, bench.url()).json()

    # The customer is not told who builds its server (werkbank/audiences.py); the PM and the partner are.
    for user in (bench.t.pm, bench.t.user_p):
        assert get(user, bench.url()).json()["partner_name"] == bench.t.partner_p.name
    assert row == {
        "id": bench.server.pk,
        "order": bench.order.pk,
        "order_reference": bench.order.reference,
        "sequence": 1,
        "hostname": bench.server.hostname,
        "asset_tag": bench.server.asset_tag,
        "chassis_serial": "",
        "status": "planned",
        "connector_count": 6,
        "installed_count": 1,
        "blacklisted_count": 1,
        "created_at": row["created_at"],
    }
    filtered = get(
        bench.t.pm, SERVERS, partner=bench.t.partner_p.pk, status="planned", q=bench.order.reference
    )
    assert _ids(filtered) == {bench.server.pk, bench.other_server.pk}


def test_the_list_costs_three_queries_whatever_its_length(bench, django_assert_num_queries):
    client = api_client(bench.t.user_p)
    # The count and the page, progress counts included, and the caller's organization kinds (which fields
    # it receives: werkbank/audiences.py).
    with django_assert_num_queries(3):
        assert len(_ids(client.get(SERVERS))) == 2

    order = factories.OrderFactory(
        customer=bench.t.customer_a, configuration=bench.order.configuration, server_count=4
    )
    for server in servers_create_for_order(order=order, actor=bench.t.pm):
        server_assign_partner(server=server, actor=bench.t.pm, partner=bench.t.partner_p)
    install(bench, "GPU-L1-1", "PCIe-1")
    install(bench, "GPU-L1-2", "PCIe-1", server=bench.other_server)

    with django_assert_num_queries(3):
        rows = client.get(SERVERS).json()["results"]
    assert len(rows) == 6
    assert {row["hostname"]: row["installed_count"] for row in rows}[bench.other_server.hostname] == 1


@pytest.mark.parametrize(
    "path, queries",
    [
        ("connectors", 2),
        ("installations", 2),
        ("allocations", 2),
        ("steps", 3),  # + the photo ids, prefetched
        ("photos", 2),
        ("layouts", 3),  # + the layout connectors, prefetched
    ],
)
def test_every_bench_list_costs_a_fixed_number_of_queries(built, django_assert_num_queries, path, queries):
    bench, _, _ = built
    client = api_client(bench.t.user_p)
    url = f"/api/v1/builds/{path}/"
    with django_assert_num_queries(queries):
        first = client.get(url).json()["count"]
    install(bench, "GPU-L1-2", "PCIe-2")
    install(bench, "DIMM-2", "DIMM-A1", server=bench.other_server)
    assert post(bench.t.user_p, bench.url("steps/", bench.other_server), {"kind": "note"}).status_code == 201
    assert blacklist(bench, "Riser-1", "scorched").status_code == 201
    with django_assert_num_queries(queries):
        assert client.get(url).json()["count"] >= first


def test_status_and_fields_are_read_only(bench):
    client = api_client(bench.t.pm)
    assert client.patch(bench.url(), {"status": "assembled"}, format="json").status_code == 405
    assert client.put(bench.url(), {"status": "assembled"}, format="json").status_code == 405
    assert client.delete(bench.url()).status_code == 405
    assert client.post(SERVERS, {"hostname": "x"}, format="json").status_code == 405
    bench.server.refresh_from_db()
    assert bench.server.status == ServerStatus.PLANNED


def test_only_a_pm_assigns_a_partner(bench):
    before = snapshot()
    body = {"partner": bench.t.partner_q.pk}
    assert post(bench.t.user_p, bench.url("assign/"), body).status_code == 403
    for user in (bench.t.user_a, bench.t.user_q, bench.t.outsider):
        assert post(user, bench.url("assign/"), body).status_code == 404, user.username
    not_a_partner = post(bench.t.pm, bench.url("assign/"), {"partner": bench.t.customer_a.pk})
    assert not_a_partner.status_code == 400
    assert "partner" in not_a_partner.json()
    assert snapshot() == before

    response = post(bench.t.pm, bench.url("assign/"), body)

    assert response.status_code == 200, response.json()
    assert response.json()["partner_name"] == bench.t.partner_q.name
    assert get(bench.t.user_p, bench.url()).status_code == 404
    assert get(bench.t.user_q, bench.url()).status_code == 200


def test_the_partner_starts_the_assembly(bench):
    assert post(bench.t.user_a, bench.url("start-assembly/")).status_code == 404

    response = post(bench.t.user_p, bench.url("start-assembly/"), {"note": "parts complete"})

    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "assembling"
    again = post(bench.t.user_p, bench.url("start-assembly/"))
    assert again.status_code == 409
    assert again.json()["code"] == "invalid_transition"


def test_assembled_is_refused_while_something_is_missing(bench):
    assert post(bench.t.user_p, bench.url("start-assembly/")).status_code == 200
    install(bench, "GPU-L1-1", "PCIe-1")
    before = snapshot()

    response = post(bench.t.pm, bench.url("mark-assembled/"))

    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "assembly_incomplete"
    assert body["missing"] == [
        "build step not logged: PCIe topology check",
        "build step not logged: QC sign-off",
        f"1 of 1 {bench.chassis.mpn} not installed",
        f"2 of 3 {bench.gpu.mpn} not installed",
        f"2 of 2 {bench.dimm.mpn} not installed",
    ]
    assert "QC sign-off" in body["detail"]
    assert snapshot() == before
    assert get(bench.t.pm, bench.url()).json()["status"] == "assembling"


def test_assembled_once_complete(bench):
    assert post(bench.t.user_p, bench.url("start-assembly/")).status_code == 200
    for serial, connector in zip(
        [*GPUS_L1, *DIMMS, CHASSIS],
        ["PCIe-1", "PCIe-2", "Riser-1", "DIMM-A1", "DIMM-A2", "Chassis"],
        strict=True,
    ):
        install(bench, serial, connector)
    topology = {"kind": "pcie_topology_check", "data": {"gpus_detected": 2, "link_width": "x16"}}
    assert post(bench.t.user_p, bench.url("steps/"), topology).status_code == 201

    one_step_short = post(bench.t.user_p, bench.url("mark-assembled/"))
    assert one_step_short.status_code == 409
    assert one_step_short.json()["missing"] == ["build step not logged: QC sign-off"]

    assert post(bench.t.user_p, bench.url("steps/"), {"kind": "qc_signoff"}).status_code == 201
    response = post(bench.t.user_p, bench.url("mark-assembled/"), {"note": "QC by Jana"})

    assert response.status_code == 200, response.json()
    assert (response.json()["status"], response.json()["installed_count"]) == ("assembled", 6)
    # Assembled: the bench is closed for changes.
    closed = post(bench.t.user_p, bench.url("remove/"), {"serial": CHASSIS, "reason": "x"})
    assert closed.status_code == 409
    assert closed.json()["code"] == "server_not_open"


def test_layouts_are_the_partners_work_instructions(bench):
    url = "/api/v1/builds/layouts/"
    for user in (bench.t.pm, bench.t.user_p, bench.t.user_q):
        rows = get(user, url).json()["results"]
        assert [row["id"] for row in rows] == [bench.layout.pk], user.username
    detail = get(bench.t.user_p, f"{url}{bench.layout.pk}/").json()
    assert detail["chassis_mpn"] == bench.chassis.mpn
    assert [(c["name"], c["kind"]) for c in detail["connectors"]][:3] == [
        ("PCIe-1", "pcie_slot"),
        ("PCIe-2", "pcie_slot"),
        ("Riser-1", "riser_port"),
    ]
    for user in (bench.t.user_a, bench.t.user_b, bench.t.outsider):
        assert get(user, url).json()["results"] == [], user.username
        assert get(user, f"{url}{bench.layout.pk}/").status_code == 404
