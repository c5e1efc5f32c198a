"""Shared fixtures (the tenants of the isolation tests, an API client) and the service policy.

With WERKBANK_REQUIRE_SERVICES=1 (as in CI) the suite must run on PostgreSQL, and a skipped test fails
the run: a missing service can never pass for green.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from django.utils import translation
from rest_framework.test import APIClient

from tests import factories
from tests.flush_rig import sql_flush_past_triggers
from tests.tenants_rig import Tenants, api_client
from werkbank.celery import app as celery_app

REQUIRE_SERVICES = os.environ.get("WERKBANK_REQUIRE_SERVICES") == "1"


def pytest_configure(config: pytest.Config) -> None:
    if REQUIRE_SERVICES:
        from django.conf import settings

        engine = settings.DATABASES["default"]["ENGINE"]
        if "postgresql" not in engine:
            raise pytest.UsageError(
                f"WERKBANK_REQUIRE_SERVICES=1 needs PostgreSQL; DATABASE_URL gives {engine}"
            )
        if not settings.REDIS_URL:
            raise pytest.UsageError("WERKBANK_REQUIRE_SERVICES=1 needs REDIS_URL")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not REQUIRE_SERVICES:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if skipped:
        reporter.write_line(
            f"WERKBANK_REQUIRE_SERVICES=1: {skipped} test(s) skipped; failing the run.", red=True
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True, scope="session")
def _sqlite_flush_past_triggers():
    """A transactional test's flush empties the append-only tables on SQLite too (tests/flush_rig.py)."""
    from django.db.backends.sqlite3.base import DatabaseWrapper  # its module first: it imports the operations

    operations = DatabaseWrapper.ops_class
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(operations, "sql_flush", sql_flush_past_triggers(operations.sql_flush))
        yield


@pytest.fixture(autouse=True)
def _eager_celery(request: pytest.FixtureRequest):
    """Run tasks in-process, except in system tests, which publish to Redis for a real worker."""
    if request.node.get_closest_marker("system"):
        yield
        return
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _test_settings(settings: Any, tmp_path: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    # Stored files go to the test's own folder, never to the checkout's var/media.
    settings.MEDIA_ROOT = tmp_path / "media"
    # Password hashing is deliberately slow; the tests create many users.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_throttle_counts() -> None:
    """Every test starts with no API requests counted by the throttle (werkbank.api.throttling) and no
    quality tables kept (pm/quality/cache.py).

    Their caches outlive a test (Redis when REDIS_URL is set): only their own keys are removed, never the db.
    """
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    for name in ("throttle", "quality"):
        cache = caches[name]
        if isinstance(cache, RedisCache):
            client = cache._cache.get_client(write=True)
            for key in client.scan_iter(match=f"{cache.key_prefix}:*"):
                client.delete(key)
        else:
            cache.clear()


@pytest.fixture(autouse=True)
def _default_language_after_each_test():
    """A page request activates its reader's language in the thread (LocaleMiddleware), and nothing ends
    it: a German request would otherwise leave the next test's code outside a request German."""
    yield
    translation.deactivate()


@pytest.fixture
def tenants(db: None) -> Tenants:
    customer_a = factories.OrganizationFactory(name="Alpha Rentals GmbH")
    customer_b = factories.OrganizationFactory(name="Beta Research AG")
    partner_p = factories.PartnerFactory(name="Praha Werkstatt s.r.o.")
    partner_q = factories.PartnerFactory(name="Quelle Assembly GmbH")
    return Tenants(
        pm=factories.make_pm(username="pm"),
        customer_a=customer_a,
        customer_b=customer_b,
        partner_p=partner_p,
        partner_q=partner_q,
        user_a=factories.make_member(customer_a, username="alice"),
        user_b=factories.make_member(customer_b, username="bob"),
        user_p=factories.make_member(partner_p, username="petr"),
        user_q=factories.make_member(partner_q, username="quinn"),
        outsider=factories.UserFactory(username="outsider"),
    )


@pytest.fixture
def pm_client(tenants: Tenants) -> APIClient:
    return api_client(tenants.pm)
