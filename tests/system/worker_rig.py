"""A real Celery worker process against Redis and the test database: start it, wait on it, stop it.

tests/system/conftest.py makes a worker of a test's own queue a fixture.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from werkbank.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]


def free_port(*, besides: int = 0) -> int:
    """A port free now, other than `besides` (a port that is free only while its server is down)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port != besides:
            return port


def stop_group(process: subprocess.Popen, *, timeout: float = 30) -> None:
    """Terminate `process` with its own process group (`start_new_session=True`: gunicorn's workers, a
    worker's pool and beat too) and wait for it; killed if it has not ended within `timeout` seconds."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def worker_database_url() -> str:
    """The test database's URL, for a worker process; skips unless it is PostgreSQL."""
    db = connection.settings_dict
    if connection.vendor != "postgresql":
        pytest.skip("the worker shares the test database, which needs PostgreSQL")
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    def __init__(self, process: subprocess.Popen, mail_dir: Path, log: Path) -> None:
        self.process, self.mail_dir, self.log = process, mail_dir, log

    def mails(self) -> list[str]:
        return [path.read_text() for path in sorted(self.mail_dir.glob("*.log"))]


def start_worker(
    tmp_path: Path,
    queue: str,
    *,
    name: str = "worker",
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    mail_dir: Path | None = None,
    pool: str = "solo",
) -> Worker:
    """Start a worker on `queue` (solo pool unless `pool` says otherwise; a prefork pool gets one child),
    with extra `env` and command-line `args`, and wait until it answers a ping. Its e-mails go to
    `mail_dir` as files, its log to `tmp_path/<name>.log`."""
    if mail_dir is None:
        mail_dir = tmp_path / "mail"
    mail_dir.mkdir(exist_ok=True)
    log = tmp_path / f"{name}.log"
    full_env = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": queue,
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(mail_dir),
        "PYTHONUNBUFFERED": "1",
        **(env or {}),
    }
    hostname = f"{name}-{queue}@localhost"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "werkbank", "worker", f"--pool={pool}", "--loglevel=INFO",
             "-Q", queue, "-n", hostname, "--without-mingle", "--without-gossip", *args,
             *(("--concurrency=1",) if pool == "prefork" else ())],
            cwd=ROOT, env=full_env, stdout=log_file, stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own, which a test may kill whole
        )  # fmt: skip
    deadline = time.monotonic() + 60
    while not celery_app.control.ping(destination=[hostname], timeout=1.0):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_worker(process)
            raise RuntimeError(f"the Celery worker did not start:\n{log.read_text()}")
    return Worker(process, mail_dir, log)


def wait_for(condition: Callable[[], bool], *workers: Worker, seconds: float = 30) -> None:
    """Poll `condition` until it holds; past `seconds`, fail with the workers' logs."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            logs = "\n".join(worker.log.read_text() for worker in workers)
            raise AssertionError(f"timed out; worker logs:\n{logs}")
        time.sleep(0.1)


def stop_worker(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
