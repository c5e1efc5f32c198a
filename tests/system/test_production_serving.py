"""System test: the production profile, served for real (issue #16, build 6).

The Procfile's `web` (gunicorn) and `worker` (Celery) run under honcho, as `make serve` runs them, with
WERKBANK_ENV=production against the PostgreSQL test database and Redis. Over plain HTTP on loopback a PM
created with `manage.py createsuperuser` logs in for an API token, creates an order, gives it a paying ROI
assessment, submits and approves it; the worker then writes the customer's status e-mails (file backend).
WhiteNoise serves the collected static files under their hashed names.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.conf import settings

from tests import factories
from tests.system.worker_rig import free_port, stop_group, worker_database_url

pytestmark = [pytest.mark.system, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
PM_PASSWORD = "Serve-me-for-real-2026!"


@dataclass
class Served:
    base: str
    env: dict[str, str]
    mail_dir: Path
    static_root: Path
    log: Path

    def mails(self) -> list[str]:
        return [path.read_text() for path in sorted(self.mail_dir.glob("*.log"))]

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
        request = urllib.request.Request(f"{self.base}{path}", method=method)
        request.add_header("Accept", "application/json")
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Token {token}")
        try:
            with urllib.request.urlopen(request, data=data, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")[:2000]


def _manage(env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"


def _wait_for(condition: Callable[[], bool], what: str, log: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; honcho log:\n{log.read_text()[-6000:]}")
        time.sleep(0.3)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    if not settings.REDIS_URL:
        pytest.skip("REDIS_URL is not set")
    database_url = worker_database_url()  # skips unless the test database is PostgreSQL
    port = free_port()
    mail_dir, static_root, var_dir = tmp_path / "mail", tmp_path / "static", tmp_path / "var"
    for folder in (mail_dir, static_root, var_dir):
        folder.mkdir()
    empty_env_file = tmp_path / "empty.env"  # so that a developer's .env in the checkout cannot interfere
    empty_env_file.write_text("")
    env = {
        **{key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "PYTEST_"))},
        "DJANGO_SETTINGS_MODULE": "werkbank.settings",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "WERKBANK_ENV": "production",
        "SECRET_KEY": f"system-test-{uuid.uuid4().hex}{uuid.uuid4().hex}-Zq7!",
        "ALLOWED_HOSTS": "127.0.0.1",
        "WERKBANK_SECRETS_KEYS": Fernet.generate_key().decode(),
        "WERKBANK_SIGNING_KEYS": base64.b64encode(os.urandom(32)).decode(),  # signs handover packs
        "DATABASE_URL": database_url,
        "REDIS_URL": settings.REDIS_URL,
        "CELERY_QUEUE": f"werkbank-serve-{uuid.uuid4().hex[:8]}",
        "SECURE_SSL_REDIRECT": "0",  # plain HTTP on loopback; behind TLS in real life
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(mail_dir),
        "STATIC_ROOT": str(static_root),
        "MEDIA_ROOT": str(tmp_path / "media"),
        "WERKBANK_VAR_DIR": str(var_dir),
        "WEB_CONCURRENCY": "2",
        "PYTHONUNBUFFERED": "1",
    }
    _manage(env, "collectstatic", "--noinput", "--verbosity", "0")
    env_with_password = {**env, "DJANGO_SUPERUSER_PASSWORD": PM_PASSWORD}
    _manage(env_with_password, "createsuperuser", "--noinput", "--username", "ops-pm", "--email", "pm@x.test")
    # Four eyes hold in production (WERKBANK_APPROVAL_FOUR_EYES on by default): a second PM approves.
    _manage(
        env_with_password, "createsuperuser", "--noinput", "--username", "ops-pm2", "--email", "pm2@x.test"
    )

    log = tmp_path / "honcho.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "honcho", "-e", str(empty_env_file), "-f", str(ROOT / "Procfile"),
             "start", "-p", str(port), "web", "worker"],
            cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    served = Served(f"http://127.0.0.1:{port}", env, mail_dir, static_root, log)
    try:

        def answering() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"honcho exited:\n{log.read_text()[-6000:]}")
            try:
                return served.call("GET", "/api/v1/")[0] in {200, 401, 403}
            except OSError:
                return False

        _wait_for(answering, "gunicorn", log)
        _wait_for(lambda: "ready." in log.read_text(), "the Celery worker", log)
        yield served
    finally:
        stop_group(process)


def test_production_profile_serves_an_order_approval_and_the_worker_mails_the_customer(served, tenants):
    configuration = factories.ConfigurationFactory()
    customer = tenants.customer_a

    # Log in for an API token, as the PM made with manage.py.
    status, body = served.call("POST", "/api/v1/auth/login/", {"username": "ops-pm", "password": PM_PASSWORD})
    assert status == 200, body
    token = body["token"]

    order_body = {"customer": customer.pk, "configuration": configuration.pk, "server_count": 2}
    status, order = served.call("POST", "/api/v1/orders/", order_body, token)
    assert status == 201, order
    roi = {
        "capex": "40000.00", "gpu_count": 8, "price_per_gpu_hour": "0.9000", "utilization": "0.7000",
        "power_active_kw": "6.000", "power_idle_kw": "0.900", "energy_price_kwh": "0.1500", "pue": "1.30",
        "colo_month": "600.00",
    }  # fmt: skip
    status, assessment = served.call("POST", f"/api/v1/orders/{order['id']}/roi-assessments/", roi, token)
    assert status == 201, assessment
    status, submitted = served.call("POST", f"/api/v1/orders/{order['id']}/submit/", {}, token)
    assert status == 200, submitted
    status, refused = served.call("POST", f"/api/v1/orders/{order['id']}/approve/", {"note": "Pays"}, token)
    assert status == 409 and "four_eyes" in refused, refused  # an error body comes back as text
    status, body = served.call(
        "POST", "/api/v1/auth/login/", {"username": "ops-pm2", "password": PM_PASSWORD}
    )
    assert status == 200, body
    second = body["token"]
    status, approved = served.call("POST", f"/api/v1/orders/{order['id']}/approve/", {"note": "Pays"}, second)
    assert status == 200, approved
    assert approved["status"] == "approved"

    # The web process only enqueued the notices; the worker sends them.
    subject = f"Subject: [Werkbank] Order {order['reference']}: Approved"
    _wait_for(lambda: any(subject in mail for mail in served.mails()), "the approval e-mail", served.log)
    mail = next(mail for mail in served.mails() if subject in mail)
    assert f"To: {tenants.user_a.email}" in mail
    log = served.log.read_text()
    assert "worker" in log and "orders.tasks.order_status_notify_task" in log
    assert "succeeded" in log

    # Static files: collected with hashed names and served by WhiteNoise, cached for good.
    manifest = json.loads((served.static_root / "staticfiles.json").read_text())["paths"]
    hashed = manifest["admin/css/base.css"]
    with urllib.request.urlopen(f"{served.base}/static/{hashed}", timeout=30) as response:
        assert response.status == 200
        assert "immutable" in response.headers["Cache-Control"]
        assert b"body" in response.read()
