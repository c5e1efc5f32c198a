"""Tasks are enqueued through one helper, once the transaction commits, and never when it rolls back."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import transaction
from kombu.exceptions import OperationalError

from builds.models import BuildPhoto, Server
from tests import factories
from werkbank.files import save_with_file
from werkbank.tasks import enqueue_on_commit

pytestmark = pytest.mark.django_db


class Boom(Exception):
    pass


class Task:
    """Stands in for a Celery task: records what `delay` got, or fails like a broker that is down."""

    def __init__(self, *, broker_down: bool = False) -> None:
        self.calls: list[dict] = []
        self.broker_down = broker_down

    def delay(self, **kwargs) -> None:
        if self.broker_down:
            raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        self.calls.append(kwargs)


def test_a_task_is_enqueued_once_when_the_transaction_commits(django_capture_on_commit_callbacks):
    task = Task()
    with django_capture_on_commit_callbacks(execute=True):
        enqueue_on_commit(task, event_id=7)
        assert task.calls == []
    assert task.calls == [{"event_id": 7}]


def test_no_task_after_a_rollback(django_capture_on_commit_callbacks):
    task = Task()
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(Boom), transaction.atomic():
        enqueue_on_commit(task, event_id=7)
        raise Boom
    assert task.calls == []


def test_a_broker_failure_leaves_the_rest_of_the_commit_to_run(
    settings, django_capture_on_commit_callbacks, caplog
):
    down, up = Task(broker_down=True), Task()
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
