"""Fixtures of the system tests: a real Celery worker process on a queue of the test's own
(tests/system/worker_rig.py starts and stops it)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from tests.system.worker_rig import Worker, start_worker, stop_worker
from werkbank.celery import app as celery_app


@pytest.fixture
def worker_queue() -> Iterator[str]:
    """A queue of this test's own, which the test process publishes to (not eagerly)."""
    if not settings.REDIS_URL:
        pytest.skip("REDIS_URL is not set")
    queue = f"werkbank-test-{uuid.uuid4().hex[:8]}"
    previous = (celery_app.conf.task_default_queue, celery_app.conf.task_always_eager)
    celery_app.conf.task_default_queue = queue
    celery_app.conf.task_always_eager = False
    try:
        yield queue
    finally:
        celery_app.conf.task_default_queue, celery_app.conf.task_always_eager = previous


@pytest.fixture
def celery_worker(tmp_path: Path, worker_queue: str) -> Iterator[Worker]:
    worker = start_worker(tmp_path, worker_queue)
    try:
        yield worker
    finally:
        stop_worker(worker.process)
