"""Two PMs place two servers into overlapping U of one rack at the same time, on PostgreSQL: one wins, the
other gets the overlap refusal; and the exclusion constraint refuses an overlap that bypasses the service."""

from __future__ import annotations

import threading

import pytest
from django.db import IntegrityError, connection, connections, transaction

from deployment.models import RackPlacement
from deployment.services import placement_create
from tests import factories
from tests.deployment import svc_rig as rig
from werkbank.errors import RuleViolation

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("row locks and the exclusion constraint are exercised on PostgreSQL")


def _race(calls: list[dict]) -> list[object]:
    barrier = threading.Barrier(len(calls))
    results: list[object] = [None] * len(calls)

    def run(index: int, kwargs: dict) -> None:
        try:
            barrier.wait(timeout=10)
            results[index] = placement_create(**kwargs)
        except Exception as exc:  # the refusal (or anything unexpected) lands in the assertion
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@pytest.mark.parametrize("trial", range(5))
def test_two_overlapping_placements_at_once_one_wins(trial):
    pm, colleague = factories.make_pm(username=f"pm-{trial}"), factories.make_pm(username=f"pm2-{trial}")
    rack, (a1,) = rig.rack(pm, feeds=[{"name": "A1", "current_a": 63, "phases": 3}])
    first, second = rig.servers(2)  # 4U each

    results = _race(
        [
            {"server": first, "rack": rack, "lowest_u": 10, "feeds": [a1], "actor": pm},
            {"server": second, "rack": rack, "lowest_u": 12, "feeds": [a1], "actor": colleague},
        ]
    )

    placed = [result for result in results if isinstance(result, RackPlacement)]
    refused = [result for result in results if isinstance(result, RuleViolation)]
    assert (len(placed), len(refused)) == (1, 1), results
    (winner,) = placed
    assert refused[0].code == "placement_overlap"
    assert winner.server.hostname in refused[0].message
    assert list(RackPlacement.objects.filter(rack=rack).values_list("server_id", flat=True)) == [
        winner.server_id
    ]


def test_the_database_refuses_an_overlap_that_bypasses_the_service():
    pm = factories.make_pm(username="bypass-pm")
    rack, _ = rig.rack(pm)
    first, second = rig.servers(2)
    RackPlacement.objects.create(server=first, rack=rack, lowest_u=10, height_u=4)  # U10–U13

    with pytest.raises(IntegrityError) as refused, transaction.atomic():
        RackPlacement.objects.create(server=second, rack=rack, lowest_u=13, height_u=2)  # U13–U14

    assert "deployment_rackplacement_no_overlap" in str(refused.value)
    # Adjacent is fine for the constraint too.
    RackPlacement.objects.create(server=second, rack=rack, lowest_u=14, height_u=2)
    assert RackPlacement.objects.filter(rack=rack).count() == 2
