"""Two partners grab the last free GPU of a lot for two servers at the same time, on PostgreSQL: one wins, the
other gets the 409, and no component is ever allocated or installed twice."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from django.db.models import Count, Q

from builds.models import Allocation, Installation
from inventory.choices import ComponentStatus
from inventory.models import Component
from tests import factories
from tests.builds.bench_rig import GPUS_L1, post
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("row locks are exercised on PostgreSQL")


def _race(requests: list[tuple[object, str, dict]]) -> list[object]:
    barrier = threading.Barrier(len(requests))
    results: list[object] = [None] * len(requests)

    def run(index: int, user: object, url: str, body: dict) -> None:
        try:
            client = api_client(user)
            barrier.wait(timeout=10)
            response = client.post(url, body, format="json")
            results[index] = (response.status_code, response.json())
        except Exception as exc:  # surfaces in the assertion instead of dying silently in the thread
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, *request)) for i, request in enumerate(requests)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


def _nothing_twice() -> None:
    active_allocations = Allocation.objects.filter(released_at__isnull=True)
    assert not active_allocations.values("component").annotate(n=Count("pk")).filter(n__gt=1).exists()
    active_installations = Installation.objects.filter(removed_at__isnull=True)
    assert not active_installations.values("component").annotate(n=Count("pk")).filter(n__gt=1).exists()


@pytest.mark.parametrize("trial", range(5))
def test_the_last_gpu_of_a_lot_goes_to_one_server(bench, trial):
    # Two of lot L1's three GPUs are already in the first server; the third is the last free one.
    assert post(bench.t.user_p, bench.url("allocate/"), {"serials": GPUS_L1[:2]}).status_code == 201
    colleague = factories.make_member(bench.t.partner_p, username=f"pavel{trial}")
    last = GPUS_L1[2]

    results = _race(
        [
            (bench.t.user_p, bench.url("allocate/"), {"serials": [last]}),
            (colleague, bench.url("allocate/", bench.other_server), {"serials": [last]}),
        ]
    )

    statuses = sorted(result[0] for result in results if isinstance(result, tuple))
    assert statuses == [201, 409], results
    winner = Allocation.objects.get(component__serial=last)
    loser = bench.other_server if winner.server == bench.server else bench.server
    refusal = next(result[1] for result in results if result[0] == 409)
    assert refusal["code"] == "component_taken"
    assert winner.server.hostname in refusal["detail"]
    assert loser.allocations.filter(component__serial=last).count() == 0
    assert Component.objects.get(serial=last).status == ComponentStatus.ALLOCATED
    _nothing_twice()


@pytest.mark.parametrize("trial", range(5))
def test_the_same_gpu_scanned_into_two_servers_is_installed_once(bench, trial):
    colleague = factories.make_member(bench.t.partner_p, username=f"pavel{trial}")
    serial = GPUS_L1[0]

    results = _race(
        [
            (bench.t.user_p, bench.url("install/"), {"serial": serial, "connector": "PCIe-1"}),
            (colleague, bench.url("install/", bench.other_server), {"serial": serial, "connector": "PCIe-1"}),
        ]
    )

    statuses = sorted(result[0] for result in results if isinstance(result, tuple))
    assert statuses == [201, 409], results
    assert Installation.objects.filter(component__serial=serial).count() == 1
    assert Allocation.objects.filter(component__serial=serial).count() == 1
    assert Component.objects.get(serial=serial).status == ComponentStatus.INSTALLED
    assert not Installation.objects.filter(
        ~Q(server=Allocation.objects.get(component__serial=serial).server)
    ).exists()
    _nothing_twice()
