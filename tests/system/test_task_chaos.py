"""Tasks under chaos, with real Celery workers, Redis and the PostgreSQL test database.

- A worker killed with SIGKILL in the middle of a task loses nothing and doubles nothing: the message is
  acknowledged only after the task (acks_late). When the pool process dies, the worker requeues it at once
  (task_reject_on_worker_lost); when the whole worker dies, a worker gives it back to the queue once the
  visibility timeout has passed. The killed transactions roll back, and the task completes once: one
  notice, one e-mail.
- A task enqueued in a transaction that rolls back never reaches the broker, nor the outbox.
- A task whose publish was lost after the commit is republished from its outbox row by the beat's sweep,
  and runs once.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import transaction
from kombu.exceptions import OperationalError

from orders.models import StatusNotice
from orders.services import order_approve, order_submit
from orders.tasks import order_status_notify_task
from tests import factories
from tests.system.worker_rig import Worker, start_worker, stop_worker
from tests.system.worker_rig import wait_for as _wait_for
from werkbank.models import AuditEvent, TaskOutbox

pytestmark = [pytest.mark.system, pytest.mark.django_db(transaction=True)]

NOTIFY = order_status_notify_task.name


def _received(worker: Worker, task_id: str) -> int:
    """How many times the worker received the task message with this id."""
    return len(re.findall(rf"Task {re.escape(NOTIFY)}\[{task_id}\] received", worker.log.read_text()))


def _submitted(tenants) -> tuple[object, AuditEvent]:
    order = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a))
    order_submit(order=order, actor=tenants.pm)  # commits; the task is published on commit
    return order, AuditEvent.objects.get(verb="order.submit")


class Boom(Exception):
    pass


def _running_in(marker: Path, *, not_pid: int = 0) -> Callable[[], bool]:
    """The held mail backend is inside the task, in a process other than `not_pid`."""
    return lambda: marker.exists() and marker.read_text().isdigit() and int(marker.read_text()) != not_pid


def test_a_worker_killed_mid_task_loses_nothing_and_doubles_nothing(tenants, worker_queue, tmp_path: Path):
    hold = tmp_path / "hold"
    hold.touch()
    marker = hold.with_suffix(".sending")
    first = start_worker(
        tmp_path,
        worker_queue,
        name="first",
        pool="prefork",
        env={"EMAIL_BACKEND": "tests.system.held_mail.HeldFileBackend", "WERKBANK_TEST_MAIL_HOLD": str(hold)},
    )
    try:
        order, submitted = _submitted(tenants)
        key = str(TaskOutbox.objects.get(kwargs={"event_id": submitted.pk}).idempotency_key)

        # 1. The pool process running the task is killed (as the OOM killer does), after the notice row is
        #    written, before the mail is out. The message was not acknowledged (acks_late), and the worker
        #    gives it back to the queue (task_reject_on_worker_lost): it runs again, in a new pool process.
        _wait_for(_running_in(marker), first)
        child = int(marker.read_text())
        os.kill(child, signal.SIGKILL)
        _wait_for(_running_in(marker, not_pid=child), first)
        assert not StatusNotice.objects.exists() and first.mails() == []

        # 2. Now the whole worker dies mid-task (SIGKILL to its process group: a lost host or container).
        os.killpg(first.process.pid, signal.SIGKILL)
        first.process.wait(timeout=10)
    finally:
        stop_worker(first.process)
    assert _received(first, key) == 2
    # Each killed transaction rolled back: no notice, no e-mail.
    assert not StatusNotice.objects.exists()
    assert first.mails() == []

    # The message was taken but never acknowledged. Once the visibility timeout (1 s here, 3 h in
    # production) has passed, the next worker to start gives it back to the queue, and runs it.
    hold.unlink()
    time.sleep(1.5)
    second = start_worker(tmp_path, worker_queue, name="second", env={"CELERY_VISIBILITY_TIMEOUT": "1"})
    try:
        _wait_for(lambda: StatusNotice.objects.filter(event=submitted).exists(), first, second)
        # The solo worker takes one message at a time in order: once the next transition's notice is
        # there, anything left of the first has been handled.
        order_approve(order=order, actor=tenants.pm)
        approved = AuditEvent.objects.get(verb="order.approve")
        _wait_for(lambda: StatusNotice.objects.filter(event=approved).exists(), second)
    finally:
        stop_worker(second.process)

    assert _received(second, key) == 1
    assert StatusNotice.objects.filter(event=submitted).count() == 1
    mails = second.mails()  # the workers share one mail folder
    assert len(mails) == 2, mails
    assert sum(f"Order {order.reference}: ROI review" in mail for mail in mails) == 1
    assert sum(f"Order {order.reference}: Approved" in mail for mail in mails) == 1


def test_a_task_enqueued_in_a_rolled_back_transaction_never_runs(tenants, celery_worker):
    order = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a))
    with pytest.raises(Boom), transaction.atomic():
        order_submit(order=order, actor=tenants.pm)
        assert TaskOutbox.objects.count() == 1  # written with the transition …
        raise Boom
    assert not TaskOutbox.objects.exists()  # … and gone with it
    assert not AuditEvent.objects.filter(verb="order.submit").exists()

    # The same transition, committed: once its notice is there, the solo worker has handled every message
    # published before it.
    order_submit(order=order, actor=tenants.pm)
    committed = AuditEvent.objects.get(verb="order.submit")
    _wait_for(lambda: StatusNotice.objects.filter(event=committed).exists(), celery_worker)

    assert celery_worker.log.read_text().count(f"Task {NOTIFY}[") == 2  # received and succeeded, once
    assert StatusNotice.objects.count() == 1
    assert len(celery_worker.mails()) == 1


def test_a_lost_publish_is_swept_from_the_outbox_by_beat_and_runs_once(
    tenants, worker_queue, tmp_path: Path, monkeypatch
):
    # A worker with beat, sweeping every second for rows unsent for 2 s (every 60 s for 120 s in production).
    worker = start_worker(
        tmp_path,
        worker_queue,
        env={"WERKBANK_OUTBOX_SWEEP_EVERY_S": "1", "WERKBANK_OUTBOX_RETRY_AFTER_S": "2"},
        args=("--beat", "--schedule", str(tmp_path / "beat-schedule")),
    )
    try:

        def broker_down(**kwargs):
            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

        # Redis refuses the publish after the commit: the transition stands, its message is lost.
        monkeypatch.setattr(order_status_notify_task, "apply_async", broker_down)
        order, submitted = _submitted(tenants)
        committed_at = time.monotonic()
        row = TaskOutbox.objects.get(task=NOTIFY)
        assert (row.sent_at, row.attempts) == (None, 1)
        assert "Connection refused" in row.last_error

        _wait_for(lambda: StatusNotice.objects.filter(event=submitted).exists(), worker)
        assert time.monotonic() - committed_at < 5 * 60
        row.refresh_from_db()
        assert row.sent_at is not None and row.attempts == 2
        # A few more sweeps: nothing is published again.
        sweeps = worker.log.read_text().count("werkbank.tasks.outbox_sweep_task")
        _wait_for(
            lambda: worker.log.read_text().count("werkbank.tasks.outbox_sweep_task") >= sweeps + 3, worker
        )
    finally:
        stop_worker(worker.process)

    assert _received(worker, str(row.idempotency_key)) == 1
    assert StatusNotice.objects.filter(event=submitted).count() == 1
    mails = worker.mails()
    assert len(mails) == 1 and f"Order {order.reference}: ROI review" in mails[0]
