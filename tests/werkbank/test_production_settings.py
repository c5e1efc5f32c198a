"""The production profile refuses to start without DATABASE_URL, and publishes no API docs by default
(issue #16, defects 11 and 13). Each case starts a fresh process: settings are read once, at start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "WERKBANK_ENV": "production",
    "SECRET_KEY": "test-only-" + "x" * 60,
    "ALLOWED_HOSTS": "werkbank.example",
    "WERKBANK_SECRETS_KEYS": "dGVzdC1vbmx5LWtleS1ub3QtZm9yLXByb2R1Y3Rpb24=",
    "WERKBANK_SIGNING_KEYS": "dGVzdC1vbmx5LXNpZ25pbmcta2V5LW5vdC1yZWFsISE=",  # signs packs (warranty.E002)
}
# Port 9 (discard) on the loopback: nothing answers there, so any connection attempt would fail the run.
UNREACHABLE_DB = "postgres://werkbank:secret@127.0.0.1:9/werkbank"
UNREACHABLE_REDIS = "redis://127.0.0.1:9/0"


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {
        key: value
        for key, value in os.environ.items()
        if key
        not in {
            *("DATABASE_URL", "DEBUG", "WERKBANK_PUBLIC_API_DOCS", "DJANGO_SETTINGS_MODULE"),
            *("REDIS_URL", "WERKBANK_ALLOW_INPROCESS_TASKS"),
        }
    }
    environment.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


DEPLOY_CHECK = ("check", "--deploy", "--fail-level", "WARNING")


def test_production_without_database_url_refuses_to_start():
    result = _manage("check", **PRODUCTION)
    assert result.returncode != 0
    assert "ImproperlyConfigured: DATABASE_URL is required when WERKBANK_ENV=production" in result.stderr


def test_production_with_database_url_passes_the_deploy_check_without_connecting():
    """What `make lint` runs: the deploy check reads settings only, so an unreachable database is fine."""
    result = _manage(*DEPLOY_CHECK, **PRODUCTION, DATABASE_URL=UNREACHABLE_DB, REDIS_URL=UNREACHABLE_REDIS)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_without_redis_url_refuses_to_start():
    """Issue 26: without a broker every task would run in the web process; the check says so (E001)."""
    result = _manage("check", **PRODUCTION, DATABASE_URL=UNREACHABLE_DB)
    assert result.returncode != 0
    assert "werkbank.E001" in result.stderr and "REDIS_URL is not set" in result.stderr
    # gunicorn runs no system checks: the WSGI entry point refuses in the same words.
    wsgi = _manage(
        "shell", "--no-imports", "-c", "import werkbank.wsgi", **PRODUCTION, DATABASE_URL=UNREACHABLE_DB
    )
    assert wsgi.returncode != 0
    assert "ImproperlyConfigured: REDIS_URL is not set" in wsgi.stderr


def test_production_may_run_tasks_in_process_when_told():
    told = {"WERKBANK_ALLOW_INPROCESS_TASKS": "1"}
    result = _manage(*DEPLOY_CHECK, **PRODUCTION, DATABASE_URL=UNREACHABLE_DB, **told)
    assert result.returncode == 0, result.stderr
    development = _manage("check", WERKBANK_ENV="development")  # the embedded profile needs no broker
    assert development.returncode == 0, development.stderr


def test_production_publishes_no_api_docs_unless_told():
    code = "from django.conf import settings; print(settings.WERKBANK_PUBLIC_API_DOCS)"
    result = _manage("shell", "--no-imports", "-c", code, **PRODUCTION, DATABASE_URL=UNREACHABLE_DB)
    assert (result.returncode, result.stdout.strip()) == (0, "False"), result.stderr
    told = _manage(
        "shell",
        "--no-imports",
        "-c",
        code,
        **PRODUCTION,
        DATABASE_URL=UNREACHABLE_DB,
        WERKBANK_PUBLIC_API_DOCS="1",
    )
    assert told.stdout.strip() == "True", told.stderr
    development = _manage("shell", "--no-imports", "-c", code, WERKBANK_ENV="development")
    assert development.stdout.strip() == "True", development.stderr


def test_production_keeps_connections_with_health_checks():
    """Issue #15: production reuses a connection for 60 s and checks it before reuse; development closes
    each one after its request; DB_CONN_MAX_AGE overrides the age."""
    code = (
        "from django.conf import settings; d = settings.DATABASES['default']; "
        "print(d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS'])"
    )
    production = _manage("shell", "--no-imports", "-c", code, **PRODUCTION, DATABASE_URL=UNREACHABLE_DB)
    assert (production.returncode, production.stdout.strip()) == (0, "60 True"), production.stderr
    overridden = _manage(
        "shell", "--no-imports", "-c", code, **PRODUCTION, DATABASE_URL=UNREACHABLE_DB, DB_CONN_MAX_AGE="15"
    )
    assert overridden.stdout.strip() == "15 True", overridden.stderr
    development = _manage("shell", "--no-imports", "-c", code, WERKBANK_ENV="development")
    assert development.stdout.strip() == "0 False", development.stderr
