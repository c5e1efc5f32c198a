"""The web app served by gunicorn, as the Procfile's `web` serves it, against the test database.

Django's development server (pytest-django's `live_server`) reads whatever a view left of a request body
after it has answered (`django.core.servers.basehttp.ServerHandler.close`); gunicorn's sync worker does
not: it closes the connection, and a client still sending gets a reset instead of the answer. What a view
does with an unread body shows under gunicorn only.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests
from django.conf import settings

from tests.system.worker_rig import free_port, stop_group, worker_database_url

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def gunicorn(tmp_path: Path) -> Iterator[str]:
    """gunicorn serving `werkbank.wsgi` (one sync worker) on a free port, until the block ends; its URL.
    Skips unless the test database is PostgreSQL (the server shares it)."""
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "PYTEST_"))},
        "DJANGO_SETTINGS_MODULE": "werkbank.settings",
        "DATABASE_URL": worker_database_url(),
        "REDIS_URL": settings.REDIS_URL or "",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "WERKBANK_VAR_DIR": str(tmp_path / "var"),
        "PYTHONUNBUFFERED": "1",
    }
    port = free_port()
    log = tmp_path / "gunicorn.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "werkbank.wsgi", "--bind", f"127.0.0.1:{port}",
             "--workers", "1", "--access-logfile", "-", "--no-control-socket"],
            cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise AssertionError(f"gunicorn exited:\n{log.read_text()[-4000:]}")
            try:
                requests.get(f"{url}/api/v1/", timeout=30)  # the first answer loads the URLconf
                break
            except requests.ConnectionError:
                if time.monotonic() > deadline:
                    raise AssertionError(f"gunicorn did not answer:\n{log.read_text()[-4000:]}") from None
                time.sleep(0.2)
        yield url
    finally:
        stop_group(process)
