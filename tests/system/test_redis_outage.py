"""System test: the web app keeps answering while Redis is down (issue #26, finding 2).

gunicorn serves the app against the PostgreSQL test database and a Redis of the test's own
(tests/system/outage_rig.py), which the test stops before the first request. The API answers a list (the
rate limiter fails open and warns once), and a PM's handover pack request is accepted: its task waits
unsent in the outbox, since the broker refused it. Then Redis comes back on the same port, a worker starts
with beat inside it, beat's outbox sweep publishes the task, and the worker renders the pack.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings
from knox.models import AuthToken

from tests.system.outage_rig import (
    ThrowawayRedis,
    app_env,
    call,
    start_web,
    start_worker_with_beat,
    wait_until,
)
from tests.system.worker_rig import free_port, stop_group
from tests.warranty.packs_rig import load_demo
from warranty.choices import PackStatus
from warranty.models import HandoverPack
from warranty.tasks import handover_pack_generate_task
from werkbank.models import TaskOutbox

pytestmark = [pytest.mark.system, pytest.mark.django_db(transaction=True)]


def _pack_row(pack_id: int) -> TaskOutbox:
    rows = [
        row
        for row in TaskOutbox.objects.filter(task=handover_pack_generate_task.name)
        if pack_id in row.kwargs.values()
    ]
    assert len(rows) == 1, rows
    return rows[0]


def test_the_api_answers_with_redis_down_and_the_pack_is_published_when_it_returns(tmp_path: Path):
    if not settings.REDIS_URL:
        pytest.skip("REDIS_URL is not set")  # the system tests' policy: Redis is at hand where they run
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed: the test starts and stops a Redis of its own")
    throwaway = ThrowawayRedis(free_port(), tmp_path / "redis.log")
    env = app_env(tmp_path, throwaway.url, f"werkbank-outage-{uuid.uuid4().hex[:8]}", settings.MEDIA_ROOT)
    demo = load_demo()
    _token, token = AuthToken.objects.create(user=demo.pm)
    throwaway.start()
    throwaway.stop()  # down before the app's first request: the port refuses connections
    web_log, worker_log = tmp_path / "web.log", tmp_path / "worker.log"
    port = free_port(besides=throwaway.port)  # the Redis port is free while Redis is down
    base = f"http://127.0.0.1:{port}"
    web = start_web(env, port, web_log)
    worker = None
    try:
        # --- Redis down: the API answers, uncounted, and the pack's task waits in the outbox. ---------------
        status, listed = call(base, "GET", "/api/v1/orders/", token)
        assert status == 200, listed
        assert listed["count"] >= 1
        status, pack = call(base, "POST", "/api/v1/handover/packs/", token, {"server": demo.fleet.pk})
        assert status in {201, 202}, pack
        row = _pack_row(pack["id"])
        assert row.sent_at is None and row.attempts == 1 and "onnect" in row.last_error
        assert HandoverPack.objects.get(pk=pack["id"]).status == PackStatus.QUEUED
        warned = [line for line in web_log.read_text().splitlines() if "werkbank.throttling" in line]
        assert len(warned) == 1, warned  # two requests, one warning: at most one a minute per process

        # --- Redis back on the same port: beat's sweep publishes the task and a worker renders the pack. ----
        throwaway.start()
        worker = start_worker_with_beat(env, tmp_path, worker_log)
        wait_until(
            lambda: HandoverPack.objects.get(pk=pack["id"]).status == PackStatus.READY,
            "the pack to be rendered",
            worker_log,
            web_log,
        )
        row.refresh_from_db()
        assert row.sent_at is not None and row.attempts == 2
        assert "outbox sweep published 1 task" in worker_log.read_text()

        # The limiter counts again, in the Redis that came back.
        assert call(base, "GET", "/api/v1/orders/", token)[0] == 200
        assert throwaway.answers()
        with redis.Redis.from_url(throwaway.url) as client:
            assert list(client.scan_iter(match="throttle:*")), "the request was not counted"
    finally:
        if worker is not None:
            stop_group(worker)
        stop_group(web)
        if throwaway.process is not None:
            stop_group(throwaway.process)
