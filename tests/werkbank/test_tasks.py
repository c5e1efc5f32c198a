"""Tasks are enqueued through one helper, once the transaction commits, and never when it rolls back; an
outbox row written in the same transaction lets a periodic sweep publish a task whose message was lost."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core import mail
from django.db import transaction
from django.utils import timezone
from kombu.exceptions import OperationalError

from builds.models import BuildPhoto, Server
from orders.models import StatusNotice
from orders.services import order_submit
from orders.tasks import order_status_notify_task
from tests import factories
from werkbank.files import save_with_file
from werkbank.models import AuditEvent, TaskOutbox
from werkbank.tasks import enqueue_on_commit, outbox_sweep, outbox_sweep_task

pytestmark = pytest.mark.django_db


class Boom(Exception):
    pass


class Task:
    """Stands in for a Celery task: records what `apply_async` got, or fails like a broker that is down."""

    def __init__(self, *, name: str = "tests.fake_task", broker_down: bool = False) -> None:
        self.name = name
        self.calls: list[dict] = []
        self.task_ids: list[str] = []
        self.broker_down = broker_down

    def apply_async(self, *, kwargs: dict, task_id: str) -> None:
        if self.broker_down:
            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        self.calls.append(kwargs)
        self.task_ids.append(task_id)


def test_a_task_is_enqueued_once_when_the_transaction_commits(django_capture_on_commit_callbacks):
    task = Task()
    with django_capture_on_commit_callbacks(execute=True):
        enqueue_on_commit(task, event_id=7)
        assert task.calls == []
        # The outbox row is written in the caller's transaction, unsent until the commit publishes it.
        row = TaskOutbox.objects.get()
        assert (row.task, row.kwargs, row.sent_at, row.attempts) == (
            "tests.fake_task",
            {"event_id": 7},
            None,
            0,
        )
    assert task.calls == [{"event_id": 7}]
    row.refresh_from_db()
    assert row.sent_at is not None and row.attempts == 1
    assert task.task_ids == [str(row.idempotency_key)]  # the row's key is the Celery task id


def test_no_task_after_a_rollback(django_capture_on_commit_callbacks):
    task = Task()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(Boom), transaction.atomic():
        enqueue_on_commit(task, event_id=7)
        raise Boom
    assert task.calls == []
    assert not TaskOutbox.objects.exists()  # nothing left for the sweeper either
    assert outbox_sweep(older_than_s=0) == 0


def test_a_task_named_by_its_celery_name_is_enqueued_and_an_unknown_name_refused(
    monkeypatch, django_capture_on_commit_callbacks
):
    """Services name their tasks by string (the rule in enqueue_on_commit's docstring): the name resolves
    to the registered task; a name no task has fails at once, before anything is written."""
    published: list[dict] = []
    monkeypatch.setattr(order_status_notify_task, "apply_async", lambda **kw: published.append(kw["kwargs"]))
    with django_capture_on_commit_callbacks(execute=True):
        enqueue_on_commit("orders.tasks.order_status_notify_task", event_id=7)
    assert published == [{"event_id": 7}]
    assert TaskOutbox.objects.get().task == order_status_notify_task.name

    with pytest.raises(LookupError, match="no_such_task"):
        enqueue_on_commit("orders.tasks.no_such_task", event_id=8)
    assert TaskOutbox.objects.count() == 1


def test_a_broker_failure_leaves_the_rest_of_the_commit_to_run(
    settings, django_capture_on_commit_callbacks, caplog
):
    down, up = Task(name="tests.down", broker_down=True), Task(name="tests.up")
    server = Server.objects.create(
        order=factories.OrderFactory(), sequence=1, hostname="t-01", asset_tag="T-01"
    )
    with django_capture_on_commit_callbacks(execute=True):
        enqueue_on_commit(down, event_id=1)
        photo = save_with_file(
            BuildPhoto(server=server, content_type="image/png", size_bytes=3), field="file", content=b"png"
        )
        enqueue_on_commit(up, event_id=2)

    assert up.calls == [{"event_id": 2}]
    assert (Path(settings.MEDIA_ROOT) / photo.file.name).read_bytes() == b"png"
    assert "Connection refused" in caplog.text
    # The refused task stays in the outbox, unsent, with the error, for the sweeper.
    refused = TaskOutbox.objects.get(task="tests.down")
    assert (refused.sent_at, refused.attempts) == (None, 1)
    assert "Connection refused" in refused.last_error
    assert TaskOutbox.objects.get(task="tests.up").sent_at is not None


def _submitted_without_publishing(tenants, django_capture_on_commit_callbacks) -> AuditEvent:
    """A committed transition whose notification was never published: the process died after the commit."""
    order = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        order_submit(order=order, actor=tenants.pm)
    assert len(callbacks) == 1  # the publish that never ran
    return AuditEvent.objects.get(verb="order.submit")


def test_the_sweeper_runs_a_lost_task_once(tenants, django_capture_on_commit_callbacks):
    event = _submitted_without_publishing(tenants, django_capture_on_commit_callbacks)
    row = TaskOutbox.objects.get()
    assert (row.task, row.kwargs, row.sent_at) == (
        order_status_notify_task.name,
        {"event_id": event.pk},
        None,
    )

    # Too young: the publish after the commit may still be on its way.
    assert outbox_sweep_task.delay().get() == 0
    assert not StatusNotice.objects.exists()

    TaskOutbox.objects.update(created_at=timezone.now() - timedelta(seconds=121))
    assert outbox_sweep_task.delay().get() == 1

    assert StatusNotice.objects.filter(event=event).count() == 1
    assert len(mail.outbox) == 1 and mail.outbox[0].to == sorted(
        [tenants.user_a.email, tenants.customer_a.contact_email]
    )
    row.refresh_from_db()
    assert row.sent_at is not None and row.attempts == 1
    # Published rows are not published again.
    assert outbox_sweep(older_than_s=0) == 0
    assert len(mail.outbox) == 1


def test_the_sweeper_keeps_trying_while_the_broker_is_down(
    tenants, django_capture_on_commit_callbacks, monkeypatch
):
    event = _submitted_without_publishing(tenants, django_capture_on_commit_callbacks)

    def refuse(**kwargs):
        raise OperationalError("Connection refused.")

    monkeypatch.setattr(order_status_notify_task, "apply_async", refuse)
    assert outbox_sweep(older_than_s=0) == 0
    row = TaskOutbox.objects.get()
    assert (row.sent_at, row.attempts) == (None, 1)

    monkeypatch.undo()
    assert outbox_sweep(older_than_s=0) == 1
    row.refresh_from_db()
    assert row.sent_at is not None and row.attempts == 2
    assert StatusNotice.objects.filter(event=event).count() == 1 and len(mail.outbox) == 1


def test_a_row_of_an_unknown_task_is_kept_and_reported(caplog):
    TaskOutbox.objects.create(task="nowhere.tasks.gone", kwargs={})
    assert outbox_sweep(older_than_s=0) == 0
    row = TaskOutbox.objects.get()
    assert (row.sent_at, row.attempts, row.last_error) == (
        None,
        1,
        "no task named 'nowhere.tasks.gone' is registered",
    )
    assert "unknown task 'nowhere.tasks.gone'" in caplog.text


def test_sent_rows_are_forgotten_after_the_retention(settings):
    settings.WERKBANK_OUTBOX_KEEP_DAYS = 7
    now = timezone.now()
    old = TaskOutbox.objects.create(task="tests.old", sent_at=now - timedelta(days=8))
    recent = TaskOutbox.objects.create(task="tests.recent", sent_at=now - timedelta(days=6))
    outbox_sweep()
    assert list(TaskOutbox.objects.values_list("pk", flat=True)) == [recent.pk]
    assert not TaskOutbox.objects.filter(pk=old.pk).exists()


def test_beat_sweeps_the_outbox_so_a_lost_task_runs_within_five_minutes():
    entry = django_settings.CELERY_BEAT_SCHEDULE["werkbank.outbox_sweep"]
    assert entry["task"] == outbox_sweep_task.name == "werkbank.tasks.outbox_sweep_task"
    every = entry["schedule"]
    assert every <= 60
    # Unsent for RETRY_AFTER, then picked up at the next beat at the latest.
    assert django_settings.WERKBANK_OUTBOX_RETRY_AFTER_S + every <= 5 * 60
