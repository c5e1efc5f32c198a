"""Who sees the bench: partner P's builds are P's. Partner Q gets 404 on all of it; customer A follows their
servers but sees none of the bench; customer B and a user without membership see nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from builds.models import Installation, Server
from tests.builds.bench_rig import get, post, snapshot
from tests.tenants_rig import api_client
from werkbank.access import Purpose

pytestmark = pytest.mark.django_db


def _bench_routes(bench, step, photo) -> list[tuple[str, str, dict]]:
    """Every route of P's bench, with a body that would change something if it were let through."""
    connector = bench.connector("PCIe-2")
    installation = Installation.objects.get(component__serial="GPU-L1-1")
    allocation = installation.component.allocations.get()
    return [
        ("get", bench.url("connector-map/"), {}),
        ("get", bench.url("steps/"), {}),
        ("post", bench.url("steps/"), {"kind": "qc_signoff"}),
        ("post", bench.url("photos/"), {}),
        ("post", bench.url("assign/"), {"partner": bench.t.partner_q.pk}),
        ("post", bench.url("start-assembly/"), {}),
        ("post", bench.url("mark-assembled/"), {}),
        ("post", bench.url("allocate/"), {"serials": ["GPU-L1-2"]}),
        ("post", bench.url("install/"), {"serial": "GPU-L1-2", "connector": "PCIe-2"}),
        ("post", bench.url("remove/"), {"serial": "GPU-L1-1", "reason": "x"}),
        ("post", bench.url("move/"), {"serial": "GPU-L1-1", "to_connector": "PCIe-2", "reason": "x"}),
        ("get", f"/api/v1/builds/connectors/{connector.pk}/", {}),
        ("post", f"/api/v1/builds/connectors/{connector.pk}/blacklist/", {"reason": "x"}),
        ("get", f"/api/v1/builds/installations/{installation.pk}/", {}),
        ("get", f"/api/v1/builds/allocations/{allocation.pk}/", {}),
        ("get", f"/api/v1/builds/steps/{step.pk}/", {}),
        ("get", f"/api/v1/builds/photos/{photo.pk}/", {}),
        ("get", f"/api/v1/builds/photos/{photo.pk}/download/", {}),
    ]


BENCH_LISTS = ["connectors", "installations", "allocations", "steps", "photos"]


def test_the_bench_is_404_for_everyone_but_p_and_the_pm(built):
    bench, step, photo = built
    before = snapshot()
    for user in (bench.t.user_q, bench.t.user_a, bench.t.user_b, bench.t.outsider):
        for method, url, body in _bench_routes(bench, step, photo):
            response = getattr(api_client(user), method)(url, body, format="json")
            assert response.status_code == 404, (user.username, method, url, response.status_code)
        for name in BENCH_LISTS:
            response = get(user, f"/api/v1/builds/{name}/")
            assert response.json()["results"] == [], (user.username, name)
    assert snapshot() == before


def test_p_and_the_pm_read_the_bench(built):
    bench, step, photo = built
    for user in (bench.t.user_p, bench.t.pm):
        for method, url, _ in _bench_routes(bench, step, photo):
            if method == "get":
                assert api_client(user).get(url).status_code == 200, (user.username, url)
        counts = {name: get(user, f"/api/v1/builds/{name}/").json()["count"] for name in BENCH_LISTS}
        assert counts == {"connectors": 12, "installations": 1, "allocations": 2, "steps": 1, "photos": 1}


def test_customer_a_follows_their_servers_read_only(built):
    bench, _, _ = built
    response = get(bench.t.user_a, bench.url())
    assert response.status_code == 200
    assert response.json()["installed_count"] == 1
    assert get(bench.t.user_b, bench.url()).status_code == 404
    assert get(bench.t.user_q, bench.url()).status_code == 404
    assert get(bench.t.outsider, bench.url()).status_code == 404


def test_filters_do_not_take_another_tenants_ids(built):
    bench, step, _ = built
    for name in BENCH_LISTS:
        response = get(bench.t.user_q, f"/api/v1/builds/{name}/", server=bench.server.pk)
        assert response.status_code == 400, name
        assert "server" in response.json()
    assert get(bench.t.user_q, "/api/v1/builds/photos/", step=step.pk).status_code == 400
    assert get(bench.t.user_b, "/api/v1/builds/servers/", order=bench.order.pk).status_code == 400


def test_a_serial_delivered_to_another_partner_is_unknown_to_q(built):
    bench, _, _ = built
    response = post(
        bench.t.user_q, bench.url("install/", bench.server_q), {"serial": "GPU-L1-2", "connector": "x"}
    )
    assert response.status_code == 404
    assert "GPU-L1-2" in response.json()["detail"]


def test_q_works_on_its_own_server(built):
    bench, _, _ = built
    response = post(bench.t.user_q, bench.url("steps/", bench.server_q), {"kind": "note"})
    assert response.status_code == 201
    assert get(bench.t.user_q, "/api/v1/builds/steps/").json()["count"] == 1


def test_customer_a_sees_its_server_but_may_not_work_on_it(built, client):
    bench, _, _ = built
    user_a = bench.t.user_a
    assert get(user_a, bench.url()).status_code == 200
    before = snapshot()
    response = post(user_a, bench.url("install/"), {"serial": "GPU-L1-2", "connector": "PCIe-2"})
    assert response.status_code == 404
    assert get(user_a, bench.url("connector-map/")).status_code == 404
    client.force_login(user_a)
    assert client.get(reverse("bench:server", args=[bench.server.pk])).status_code == 404
    assert snapshot() == before
    assert set(Server.objects.visible_to(user_a)) == {bench.server, bench.other_server}
    assert not Server.objects.visible_to(user_a, purpose=Purpose.BENCH).exists()
    assert set(Server.objects.visible_to(bench.t.user_p, purpose=Purpose.BENCH)) == {
        bench.server,
        bench.other_server,
    }
