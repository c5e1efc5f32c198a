"""A Redis of a test's own that it can take down and bring back, and the web app and a Celery worker (with
beat) started against it, as processes: tests/system/test_redis_outage.py.

The Redis is a throwaway `redis-server` on a free port, keeping nothing on disk; stopping it leaves the port
refusing connections, as a crashed or restarted Redis does. Every wait is for a condition, with a deadline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from tests.system.worker_rig import stop_group, worker_database_url

ROOT = Path(__file__).resolve().parents[2]
#: Generous: a slow CI host must not fail the test, and a healthy run takes a fraction of it.
TIMEOUT_S = 180


def wait_until(condition: Callable[[], bool], what: str, *logs: Path, seconds: float = TIMEOUT_S) -> None:
    """Poll `condition` until it holds; past `seconds`, fail with the processes' logs."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {log.name}\n{log.read_text()[-6000:]}" for log in logs if log.exists())
            raise AssertionError(f"timed out waiting for {what}\n{tails}")
        time.sleep(0.1)


class ThrowawayRedis:
    """`redis-server` on `port`, nothing saved; `start()` again after `stop()` brings it back, empty."""

    def __init__(self, port: int, log: Path) -> None:
        self.port, self.log = port, log
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen | None = None

    def answers(self) -> bool:
        try:
            with redis.Redis(port=self.port, socket_connect_timeout=0.5, socket_timeout=0.5) as client:
                return bool(client.ping())
        except redis.RedisError:
            return False

    def start(self) -> None:
        with self.log.open("a") as log_file:
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no"],
                stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip
        wait_until(self.answers, f"redis-server on port {self.port}", self.log, seconds=30)

    def stop(self) -> None:
        if self.process is not None:
            stop_group(self.process)
        wait_until(lambda: not self.answers(), "redis-server to stop", self.log, seconds=30)


def app_env(tmp_path: Path, redis_url: str, queue: str, media_root: Path) -> dict[str, str]:
    """The environment of the web app and the worker: the test database, `redis_url`, `queue`, and the
    test's media folder (the development profile; DEBUG off, so that an error is a plain 500)."""
    return {
        **{key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "DJANGO_SETTINGS_MODULE": "werkbank.settings",
        "DEBUG": "0",
        "DATABASE_URL": worker_database_url(),  # skips unless the test database is PostgreSQL
        "REDIS_URL": redis_url,
        "CELERY_QUEUE": queue,
        "MEDIA_ROOT": str(media_root),
        "WERKBANK_VAR_DIR": str(tmp_path / "var"),
        "PYTHONUNBUFFERED": "1",
    }


def start_web(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """gunicorn with one worker process (so that its log is one process's), answering on `port`."""
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "werkbank.wsgi", "--bind", f"127.0.0.1:{port}", "--workers",
             "1", "--timeout", "120", "--access-logfile", "-"],
            cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def answering() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"gunicorn exited:\n{log.read_text()[-6000:]}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).close()
        except urllib.error.HTTPError:
            return True  # 503 while Redis is down: it answers
        except OSError:
            return False
        return True

    wait_until(answering, "the web app", log, seconds=60)
    return process


def start_worker_with_beat(env: dict[str, str], tmp_path: Path, log: Path) -> subprocess.Popen:
    """A Celery worker on the env's queue with beat inside it, which sends the outbox sweep every second;
    the sweep publishes every unsent row at once (WERKBANK_OUTBOX_RETRY_AFTER_S=0)."""
    full_env = {**env, "WERKBANK_OUTBOX_SWEEP_EVERY_S": "1", "WERKBANK_OUTBOX_RETRY_AFTER_S": "0"}
    with log.open("w") as log_file:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "werkbank", "worker", "--pool=solo", "--loglevel=INFO",
             "-Q", env["CELERY_QUEUE"], "-n", f"outage-{env['CELERY_QUEUE']}@localhost", "--without-mingle",
             "--without-gossip", "--beat", "--schedule", str(tmp_path / "celerybeat-schedule")],
            cwd=ROOT, env=full_env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def call(base: str, method: str, path: str, token: str, body: Any = None) -> tuple[int, Any]:
    """One API request with a knox token; the status and the JSON answer (or the first of the text)."""
    request = urllib.request.Request(f"{base}{path}", method=method)
    request.add_header("Accept", "application/json")
    request.add_header("Authorization", f"Token {token}")
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, data=data, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")[:2000]
