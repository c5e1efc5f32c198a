"""Issue #12's acceptance, end to end, with real Celery workers, Redis and the PostgreSQL test database.

A deployed server with its installed components (the demo fleet's first server) walks the whole handover:

1. A PM asks for its pack through the API; a worker starts rendering it and is killed with SIGKILL in the
   middle of the render. A new worker gets the message back and the pack becomes ready: exactly one ready
   revision.
2. The PM hands the server over through the API; the records task runs on a worker, which is killed while
   the task waits for the server's row lock (held by the test, so the moment is deterministic). A new
   worker gets that message back too, and the task is enqueued twice more by hand: one record per
   installed serial and one for the server, none twice.
3. The customer downloads the ZIP through the portal, and it verifies with `manage.py verify-pack`; another
   customer gets 404, an anonymous visitor the login page.

A killed worker's message is taken but not acknowledged (acks_late). The next worker started with a
visibility timeout of 1 s (3 h in production) gives it back to the queue once it is older than that: the
test waits for exactly that condition, read from the broker, before it starts the next worker.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import time
from io import StringIO
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.core.management import call_command
from django.db import transaction
from django.shortcuts import resolve_url
from django.test import Client

from builds.choices import ServerStatus
from builds.models import Server
from tests.system.test_warranty_records import _results, _waiting_for_a_lock
from tests.system.worker_rig import Worker, start_worker, stop_worker, wait_for
from tests.tenants_rig import api_client
from tests.warranty.packs_rig import installed_serials, load_demo
from warranty.choices import PackStatus, RecordKind
from warranty.models import HandoverPack, WarrantyRecord
from warranty.selectors import server_warranty_serial as server_serial
from warranty.tasks import handover_pack_generate_task, warranty_records_create_task

pytestmark = [pytest.mark.system, pytest.mark.django_db(transaction=True)]

PACK = handover_pack_generate_task.name
RECORDS = warranty_records_create_task.name
#: The redelivering workers' visibility timeout (seconds): a message taken this long ago and never
#: acknowledged goes back to the queue when such a worker starts.
VISIBILITY_S = 1
#: Generous: a slow CI host must not fail the test, and a healthy run takes a fraction of it.
TIMEOUT_S = 60


def _unacked_on(queue: str) -> list[float]:
    """When each message taken from `queue` and not yet acknowledged was delivered (epoch seconds), read
    from the Redis transport's own bookkeeping (the `unacked` hash and its `unacked_index` by time)."""
    delivered = []
    with redis.Redis.from_url(settings.REDIS_URL) as broker:
        for tag, payload in broker.hgetall("unacked").items():
            _message, _exchange, routing_key = json.loads(payload)
            if routing_key == queue:
                delivered.append(broker.zscore("unacked_index", tag) or 0.0)
    return delivered


def _received(worker: Worker, task: str) -> list[str]:
    """The ids of the messages of `task` the worker received, in order."""
    return re.findall(rf"Task {re.escape(task)}\[([^\]]+)\] received", worker.log.read_text())


def _kill(worker: Worker) -> None:
    """SIGKILL to the worker's whole process group (a lost host, the OOM killer): no shutdown runs."""
    os.killpg(worker.process.pid, signal.SIGKILL)
    worker.process.wait(timeout=10)


def _redelivering_worker(tmp_path: Path, queue: str, name: str, env: dict[str, str]) -> Worker:
    """A worker that gives the killed worker's unacknowledged message back to the queue: started once every
    message taken from the queue and not acknowledged is older than the visibility timeout (the condition,
    not a fixed sleep)."""
    wait_for(lambda: all(time.time() - at > VISIBILITY_S for at in _unacked_on(queue)), seconds=TIMEOUT_S)
    return start_worker(
        tmp_path, queue, name=name, env={**env, "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_S)}
    )


def test_pack_then_handover_then_download_survives_killed_workers(worker_queue, tmp_path: Path):
    demo = load_demo()
    server = demo.fleet
    assert server.status == ServerStatus.DEPLOYED
    serials = installed_serials(server)
    assert serials  # the fleet's first server has its components installed
    media = Path(settings.MEDIA_ROOT)
    env = {"MEDIA_ROOT": str(media)}
    pm = api_client(demo.pm)

    # --- 1. The pack: requested through the API, its first worker killed mid-render. -----------------------
    hold = tmp_path / "hold"
    hold.touch()
    rendering = hold.with_suffix(".rendering")
    first = start_worker(
        tmp_path,
        worker_queue,
        name="pack-first",
        env={**env, "WERKBANK_TEST_PACK_HOLD": str(hold)},
        args=("--include", "tests.system.held_pack"),
    )
    try:
        response = pm.post("/api/v1/handover/packs/", {"server": server.pk}, format="json")
        assert response.status_code == 201, response.content
        assert response.data["revision"] == 1
        pack_id = response.data["id"]
        wait_for(rendering.exists, first, seconds=TIMEOUT_S)
        assert HandoverPack.objects.get(pk=pack_id).status == PackStatus.RUNNING
        _kill(first)
    finally:
        stop_worker(first.process)
    assert HandoverPack.objects.get(pk=pack_id).status == PackStatus.RUNNING
    assert not any((media / "handover").rglob("*.*"))  # nothing was stored by the killed render
    hold.unlink()

    second = _redelivering_worker(tmp_path, worker_queue, "pack-second", env)
    try:
        wait_for(
            lambda: HandoverPack.objects.get(pk=pack_id).status == PackStatus.READY,
            first,
            second,
            seconds=TIMEOUT_S,
        )
    finally:
        stop_worker(second.process)  # a warm shutdown: the hand-over's tasks wait in the queue
    # The new worker ran the killed worker's own message: the one pack task there ever was.
    assert _received(second, PACK) == _received(first, PACK) and len(_received(first, PACK)) == 1
    packs = list(HandoverPack.objects.filter(server=server))
    assert [(p.pk, p.revision, p.status, p.attempts) for p in packs] == [(pack_id, 1, PackStatus.READY, 2)]
    listed = pm.get("/api/v1/handover/packs/", {"server": server.pk}).data["results"]
    assert [(p["id"], p["status"]) for p in listed] == [(pack_id, PackStatus.READY)]

    # --- 2. The hand-over through the API; the records task's worker killed while it waits. --------------
    response = pm.post(f"/api/v1/handover/servers/{server.asset_tag}/hand-over/", {"note": ""}, format="json")
    assert response.status_code == 200, response.content
    assert response.data["handed_over"] is True
    assert Server.objects.get(pk=server.pk).status == ServerStatus.HANDED_OVER
    assert not WarrantyRecord.objects.filter(server=server).exists()  # the task has not run: no worker

    third = None
    try:
        # The test holds the server's row lock, so the records task stops at its lock; then its whole
        # worker dies, the message taken but not acknowledged, the task's transaction rolled back. A prefork
        # worker (one child): its main process answers the start-up ping while the child waits at the lock.
        with transaction.atomic():
            Server.objects.select_for_update().get(pk=server.pk)
            third = start_worker(tmp_path, worker_queue, name="records-first", env=env, pool="prefork")
            wait_for(_waiting_for_a_lock, third, seconds=TIMEOUT_S)
            _kill(third)
    finally:
        if third is not None:
            stop_worker(third.process)
    assert not WarrantyRecord.objects.filter(server=server).exists()

    fourth = _redelivering_worker(tmp_path, worker_queue, "records-second", env)
    try:
        # Enqueued twice more by hand, as a repeated hand-over effect or the outbox sweep would.
        for _ in range(2):
            warranty_records_create_task.apply_async(kwargs={"server_id": server.pk})
        wait_for(lambda: len(_results(fourth)) >= 3, fourth, seconds=TIMEOUT_S)
    finally:
        stop_worker(fourth.process)
    # The killed worker's message ran again on the new worker, besides the two enqueued by hand.
    killed = _received(third, RECORDS)
    assert (
        len(killed) == 1 and killed[0] in _received(fourth, RECORDS) and len(_received(fourth, RECORDS)) == 3
    )
    expected = len(serials) + 1  # every installed serial, and the server itself
    assert sorted(_results(fourth)) == [0, 0, expected]
    records = WarrantyRecord.objects.filter(server=server)
    assert records.count() == expected
    assert list(records.filter(kind=RecordKind.SERVER).values_list("serial", flat=True)) == [
        server_serial(server)
    ]
    assert sorted(records.filter(kind=RecordKind.COMPONENT).values_list("serial", flat=True)) == sorted(
        serials
    )
    assert set(records.values_list("customer_id", flat=True)) == {demo.vastfleet.pk}

    # --- 3. The customer's download through the portal, verified; nobody else gets it. -------------------
    url = f"/portal/packs/{pack_id}/handover.zip"
    customer = Client()
    customer.force_login(demo.member)
    response = customer.get(url)
    assert response.status_code == 200
    content = b"".join(response.streaming_content)
    ready = HandoverPack.objects.get(pk=pack_id)
    assert (hashlib.sha256(content).hexdigest(), len(content)) == (ready.zip_sha256, ready.zip_size)
    downloaded = tmp_path / "downloaded.zip"
    downloaded.write_bytes(content)
    out = StringIO()
    call_command("verify-pack", str(downloaded), stdout=out)
    assert "every file matches the manifest" in out.getvalue()

    stranger = Client()
    stranger.force_login(demo.stranger)
    assert stranger.get(url).status_code == 404
    anonymous = Client().get(url)
    assert anonymous.status_code == 302
    assert anonymous.url.startswith(resolve_url(settings.LOGIN_URL))
