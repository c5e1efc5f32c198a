"""A handover pack rendered by a real Celery worker (Redis, the PostgreSQL test database), which is killed
with SIGKILL in the middle of the render: a new worker takes the pack again, and exactly one ready
revision exists, whose ZIP verifies against its manifest."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from tests.system.worker_rig import start_worker, stop_worker
from tests.system.worker_rig import wait_for as _wait_for
from tests.warranty.packs_rig import load_demo
from warranty.choices import PackStatus
from warranty.documents import verify_zip
from warranty.models import HandoverPack
from warranty.services.packs import pack_request

pytestmark = [pytest.mark.system, pytest.mark.django_db(transaction=True)]


def test_a_worker_killed_mid_render_leaves_exactly_one_ready_pack_that_verifies(
    worker_queue, tmp_path: Path, settings
):
    demo = load_demo()
    media = Path(settings.MEDIA_ROOT)
    hold = tmp_path / "hold"
    hold.touch()
    marker = hold.with_suffix(".rendering")
    env = {"MEDIA_ROOT": str(media), "WERKBANK_TEST_PACK_HOLD": str(hold)}
    first = start_worker(
        tmp_path, worker_queue, name="first", env=env, args=("--include", "tests.system.held_pack")
    )
    try:
        pack, _ = pack_request(server=demo.fleet, actor=demo.pm)  # commits: the task is published
        _wait_for(marker.exists, first)
        running = HandoverPack.objects.get(pk=pack.pk)
        assert (running.status, running.attempts, running.progress) == (PackStatus.RUNNING, 1, 30)
        # The whole worker dies mid-render (a lost host, the OOM killer): nothing was stored.
        os.killpg(first.process.pid, signal.SIGKILL)
        first.process.wait(timeout=10)
    finally:
        stop_worker(first.process)
    assert HandoverPack.objects.get(pk=pack.pk).status == PackStatus.RUNNING
    assert not any((media / "handover").rglob("*.*"))

    # The message was taken but never acknowledged (acks_late): once the visibility timeout (1 s here,
    # 3 h in production) has passed, the next worker gives it back to the queue and runs it.
    hold.unlink()
    time.sleep(1.5)
    second = start_worker(
        tmp_path,
        worker_queue,
        name="second",
        env={"MEDIA_ROOT": str(media), "CELERY_VISIBILITY_TIMEOUT": "1"},
    )
    try:
        _wait_for(lambda: HandoverPack.objects.get(pk=pack.pk).status == PackStatus.READY, first, second)
    finally:
        stop_worker(second.process)

    packs = list(HandoverPack.objects.filter(server=demo.fleet))
    assert [(p.revision, p.status) for p in packs] == [(1, PackStatus.READY)]
    ready = packs[0]
    assert ready.attempts == 2
    assert verify_zip(media / ready.zip.name) == []
    assert (media / ready.pdf.name).stat().st_size == ready.pdf_size
    assert not list((media / ".incoming").iterdir())  # every temporary file was renamed into place
