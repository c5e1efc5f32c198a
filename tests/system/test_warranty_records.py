"""Warranty records with a real Celery worker, Redis and the PostgreSQL test database: a worker killed
with SIGKILL in the middle of the records task, the task redelivered and run twice more, and still one
record per serial (the records' partial unique constraints, ON CONFLICT DO NOTHING, under the server's
row lock)."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
from django.db import connection, transaction

from builds.choices import ServerStatus
from builds.models import Server
from builds.services import server_install
from inventory.models import Component
from tests.builds.bench_rig import bench  # noqa: F401  (the fixture)
from tests.system.worker_rig import Worker, start_worker, stop_worker, wait_for
from tests.warranty.handover_rig import INSTALLED
from warranty.choices import RecordKind
from warranty.models import WarrantyRecord
from warranty.tasks import warranty_records_create_task

pytestmark = [pytest.mark.system, pytest.mark.django_db(transaction=True)]

TASK = warranty_records_create_task.name


def _waiting_for_a_lock() -> bool:
    """Another session of this database waits for a row lock: the worker's task, at the server's lock."""
    with connection.cursor() as cursor:
        # Inside a transaction PostgreSQL answers from a snapshot of the activity taken at first access.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0] > 0


def _results(worker: Worker) -> list[int]:
    """What each run of the records task returned (the records it created), in order."""
    return [int(n) for n in re.findall(rf"Task {re.escape(TASK)}\[[^\]]+\] succeeded in [0-9.e-]+s: (\d+)",
                                       worker.log.read_text())]  # fmt: skip


def test_records_task_killed_mid_way_then_run_twice_creates_each_record_once(
    bench,  # noqa: F811
    worker_queue,
    tmp_path: Path,
):
    server = bench.server
    for serial, connector in INSTALLED:
        server_install(
            server=server,
            actor=bench.t.pm,
            component=Component.objects.get(serial=serial),
            connector_name=connector,
        )
    Server.objects.filter(pk=server.pk).update(status=ServerStatus.HANDED_OVER)

    first = start_worker(tmp_path, worker_queue, name="first")
    try:
        # The test holds the server's row lock, so the task stops at its first statement that matters;
        # then the whole worker dies (SIGKILL to its process group), its message taken but not acknowledged.
        with transaction.atomic():
            Server.objects.select_for_update().get(pk=server.pk)
            warranty_records_create_task.apply_async(kwargs={"server_id": server.pk})
            wait_for(_waiting_for_a_lock, first)
            os.killpg(first.process.pid, signal.SIGKILL)
            first.process.wait(timeout=10)
    finally:
        stop_worker(first.process)
    assert not WarrantyRecord.objects.exists()

    # After the visibility timeout (1 s here) the next worker gets the message back and runs it; the task
    # is also enqueued twice more, as a repeated hand-over effect or a sweep would.
    time.sleep(1.5)
    second = start_worker(tmp_path, worker_queue, name="second", env={"CELERY_VISIBILITY_TIMEOUT": "1"})
    try:
        for _ in range(2):
            warranty_records_create_task.apply_async(kwargs={"server_id": server.pk})
        wait_for(lambda: len(_results(second)) >= 3, second)
    finally:
        stop_worker(second.process)

    expected = len(INSTALLED) + 1  # every installed serial, and the server itself
    assert sorted(_results(second)) == [0, 0, expected]
    records = WarrantyRecord.objects.filter(server=server)
    assert records.count() == expected
    assert records.filter(kind=RecordKind.SERVER).count() == 1
    assert sorted(records.filter(kind=RecordKind.COMPONENT).values_list("serial", flat=True)) == sorted(
        serial for serial, _ in INSTALLED
    )
