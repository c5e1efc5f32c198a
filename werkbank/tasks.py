"""Enqueueing Celery tasks on commit, through one helper.

A task enqueued inside a transaction could run before the transaction commits (and find nothing) or after
it rolled back (and act on what never happened), so every task is enqueued once the transaction commits,
and never when it rolls back.
"""

from __future__ import annotations

from typing import Any

from celery import Task
from django.db import transaction


def enqueue_on_commit(task: Task, **kwargs: Any) -> None:
    """Enqueue `task` with `kwargs` (ids, never objects) once the current transaction commits.

    Outside a transaction it is enqueued at once. Robust: when the broker refuses it, the error is logged
    and the other on-commit work of the committed transaction (files, further tasks) still runs, since
    raising could not undo the commit anyway.
    """
    transaction.on_commit(lambda: task.delay(**kwargs), robust=True)
