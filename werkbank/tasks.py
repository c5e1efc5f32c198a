"""Enqueueing Celery tasks on commit, through one helper and a transactional outbox.

A task enqueued inside a transaction could run before the transaction commits (and find nothing) or after
it rolled back (and act on what never happened), so every task is enqueued once the transaction commits,
and never when it rolls back.

Publishing after the commit leaves a gap: the broker may refuse the message, or the process may die between
the commit and the publish. So the task is also written as a `TaskOutbox` row in the caller's transaction;
the publish marks the row sent, and `outbox_sweep_task` (run by Celery beat every
`WERKBANK_OUTBOX_SWEEP_EVERY_S`) publishes again every row left unsent for `WERKBANK_OUTBOX_RETRY_AFTER_S`.
A task may so arrive twice; every task of the project is idempotent by a database constraint.
"""

from __future__ import annotations

import importlib
import logging
from contextlib import nullcontext
from datetime import timedelta
from typing import Any

from celery import Task, shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from werkbank.models import TaskOutbox

logger = logging.getLogger("werkbank.tasks")

#: Rows one sweep publishes at most; the next sweep takes the rest.
SWEEP_BATCH = 500


def enqueue_on_commit(task: Task | str, **kwargs: Any) -> None:
    """Enqueue `task` with `kwargs` (ids, never objects) once the current transaction commits.

    The outbox row is written now, in the caller's transaction: it commits or rolls back with the caller's
    changes. Outside a transaction it is written and the task enqueued at once. Robust: when the broker
    refuses the task, the error is logged, the row stays unsent for the sweeper, and the other on-commit
    work of the committed transaction (files, further tasks) still runs, since raising could not undo the
    commit anyway.

    The rule that keeps services and tasks apart: a service names its task by its Celery name, a string
    (`"inventory.tasks.label_batch_render_task"`: the tasks module and the function), and never imports a
    tasks module; a tasks module imports the services it calls, at its top. So imports run one way, tasks →
    services, and the name is the one the outbox row keeps and the sweeper publishes again. A name that no
    task has is refused here, at once (LookupError), rather than after the commit.
    """
    if isinstance(task, str):
        found = _registered(task)
        if found is None:
            raise LookupError(f"No Celery task is named {task!r}.")
        task = found
    row = TaskOutbox.objects.create(task=task.name, kwargs=kwargs)
    transaction.on_commit(lambda: _publish(row, task), robust=True)


def _publish(row: TaskOutbox, task: Task, *, savepoint: bool = False) -> bool:
    """Publish one outbox row with its idempotency key as the task id; mark it sent. True when published.

    Inside a transaction (the sweep), the publish runs in a savepoint: in eager mode the task runs right
    here, and its failure must not break the sweep's transaction.
    """
    try:
        with transaction.atomic() if savepoint else nullcontext():
            task.apply_async(kwargs=row.kwargs, task_id=str(row.idempotency_key))
    except Exception as exc:
        TaskOutbox.objects.filter(pk=row.pk).update(attempts=F("attempts") + 1, last_error=repr(exc)[:500])
        logger.exception(
            "Publishing %s (outbox row %s) failed; the sweeper will try again.", row.task, row.pk
        )
        return False
    TaskOutbox.objects.filter(pk=row.pk).update(sent_at=timezone.now(), attempts=F("attempts") + 1)
    return True


def _registered(name: str) -> Task | None:
    from werkbank.celery import app

    if name not in app.tasks:
        # A process that has not imported the task's module yet (task names are "module.function").
        module = name.rpartition(".")[0]
        try:
            importlib.import_module(module)
        except ImportError:
            return None
    return app.tasks.get(name)


def outbox_sweep(*, older_than_s: int | None = None) -> int:
    """Publish again the outbox rows left unsent for more than `older_than_s` seconds (default: the setting
    WERKBANK_OUTBOX_RETRY_AFTER_S), and forget sent rows older than WERKBANK_OUTBOX_KEEP_DAYS. Returns how
    many were published.

    The rows are locked and skipped when locked, so two sweeps at once never publish the same row twice.
    """
    if older_than_s is None:
        older_than_s = settings.WERKBANK_OUTBOX_RETRY_AFTER_S
    now = timezone.now()
    published = 0
    with transaction.atomic():
        rows = list(
            TaskOutbox.objects.select_for_update(skip_locked=True)
            .filter(sent_at__isnull=True, created_at__lte=now - timedelta(seconds=older_than_s))
            .order_by("created_at", "pk")[:SWEEP_BATCH]
        )
        for row in rows:
            task = _registered(row.task)
            if task is None:
                TaskOutbox.objects.filter(pk=row.pk).update(
                    attempts=F("attempts") + 1, last_error=f"no task named {row.task!r} is registered"
                )
                logger.error("Outbox row %s names an unknown task %r.", row.pk, row.task)
                continue
            published += _publish(row, task, savepoint=True)
    TaskOutbox.objects.filter(sent_at__lt=now - timedelta(days=settings.WERKBANK_OUTBOX_KEEP_DAYS)).delete()
    if published:
        logger.warning("The outbox sweep published %d task(s) that had not reached the broker.", published)
    return published


@shared_task(ignore_result=True)
def outbox_sweep_task() -> int:
    """Celery beat runs this every WERKBANK_OUTBOX_SWEEP_EVERY_S; a second delivery finds nothing to do."""
    return outbox_sweep()
