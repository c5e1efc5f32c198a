"""Twenty callers at once against PostgreSQL on the warranty's races: one claim in progress per record
(the rest refused, twenty different RMA numbers never handed out twice), one hand-over, and the records
task run by twenty workers at once still one record per serial."""

from __future__ import annotations

import pytest

from builds.models import Server
from tests.builds.bench_rig import GPUS_L1
from tests.system.race_rig import THREADS, race, require_postgresql, split
from tests.warranty.handover_rig import INSTALLED, bench, handed, world  # noqa: F401 (fixtures)
from warranty.models import WarrantyClaim, WarrantyRecord
from warranty.services import claim_open, server_hand_over, warranty_records_create
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgres_only():
    require_postgresql()


def test_twenty_claims_on_one_record_open_one(handed):  # noqa: F811
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    results = race(
        [
            lambda n=n: claim_open(record=record, actor=handed.t.user_a, description=f"caller {n}")
            for n in range(THREADS)
        ]
    )
    won, refused = split(results, WarrantyClaim)
    assert len(won) == 1 and len(refused) == THREADS - 1
    assert {getattr(exc, "code", type(exc).__name__) for exc in refused} == {"claim_refused"}
    assert WarrantyClaim.objects.filter(record=record).count() == 1


def test_twenty_claims_on_twenty_records_get_twenty_numbers(handed):  # noqa: F811
    records = list(WarrantyRecord.objects.filter(kind="component"))
    callers = (records * THREADS)[:THREADS]
    results = race(
        [
            lambda record=record: claim_open(record=record, actor=handed.t.pm, description="batch failure")
            for record in callers
        ]
    )
    won, _refused = split(results, WarrantyClaim)
    assert len(won) == len(records) == len(INSTALLED)
    numbers = list(WarrantyClaim.objects.values_list("number", flat=True))
    assert len(numbers) == len(set(numbers)) == len(records)


def test_twenty_hand_overs_of_one_server_and_twenty_record_runs(world):  # noqa: F811
    server = world.server
    results = race([lambda: server_hand_over(server=server, actor=world.t.pm) for _ in range(THREADS)])
    won, refused = split(results, Server)
    assert len(won) == 1 and len(refused) == THREADS - 1
    assert AuditEvent.objects.for_object(server).filter(verb="server.hand_over").count() == 1
    # The hand-over's task already made the records on commit; made again from nothing, by twenty at once:
    assert WarrantyRecord.objects.filter(server=server).count() == len(INSTALLED) + 1
    WarrantyRecord.objects.filter(server=server).delete()
    runs = race([lambda: warranty_records_create(server=server, actor=None) for _ in range(THREADS)])
    assert sorted(len(created) for created in runs) == [0] * (THREADS - 1) + [len(INSTALLED) + 1]
    assert WarrantyRecord.objects.filter(server=server).count() == len(INSTALLED) + 1
