"""The API rate limiter (werkbank/api/throttling.py): a fixed window counted atomically, and open when its
store is unreachable (issue #26, findings 2 and 4). The same over real servers:
tests/system/test_rate_parallel.py and tests/system/test_redis_outage.py."""

from __future__ import annotations

import logging
import socket
import threading
import time
from types import SimpleNamespace

import pytest
from knox.models import AuthToken
from rest_framework.test import APIClient

from werkbank.api import throttling

#: A minute's start, 45 s into it: 15 s of its window are left.
MINUTE = 29_000_000 * 60
WINDOW_MOSTLY_GONE = MINUTE + 45


def _token_client(user) -> APIClient:
    _token, raw = AuthToken.objects.create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    return client


def _closed_port() -> int:
    """A port nothing listens on (bound for a moment, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def clock(monkeypatch):
    """The throttle's clock, held still at `clock.now` until a test moves it."""
    held = SimpleNamespace(now=float(WINDOW_MOSTLY_GONE))
    monkeypatch.setattr(throttling, "_clock", lambda: held.now)
    return held


@pytest.mark.django_db
def test_the_window_is_fixed_and_retry_after_counts_to_its_end(settings, tenants, clock):
    settings.WERKBANK_API_RATE = "3/min"
    client = _token_client(tenants.user_a)
    assert [client.get("/api/v1/orders/").status_code for _ in range(3)] == [200, 200, 200]

    refused = client.get("/api/v1/orders/")
    assert refused.status_code == 429
    assert "throttled" in refused.json()["detail"]
    assert refused["Retry-After"] == "15"  # the seconds left to the minute's end, not a full minute
    clock.now = MINUTE + 59.2
    assert client.get("/api/v1/orders/")["Retry-After"] == "1"  # rounded up, never 0

    clock.now = MINUTE + 60  # the next window: a fresh allowance, whatever came before
    assert [client.get("/api/v1/orders/").status_code for _ in range(4)] == [200, 200, 200, 429]


def test_parallel_requests_are_counted_exactly(settings, clock):
    """8 threads ask 80 times each on one token, 600 allowed: exactly 40 refused, in Redis when REDIS_URL is
    set (else in local memory). A read-append-write count lets most of them through."""
    settings.WERKBANK_API_RATE = "600/min"
    request = SimpleNamespace(
        user=SimpleNamespace(is_authenticated=True, pk=1), auth=SimpleNamespace(digest="parallel")
    )
    start = threading.Barrier(8)
    answers: list[bool] = []

    def ask() -> None:
        start.wait()
        mine = [throttling.TokenRateThrottle().allow_request(request, None) for _ in range(80)]
        answers.extend(mine)

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (answers.count(True), answers.count(False)) == (600, 40)


@pytest.mark.django_db
def test_an_unreachable_store_lets_requests_through_and_warns_once_a_minute(
    settings, tenants, monkeypatch, caplog
):
    """Redis refuses the connection: the API answers as if there were no limit, and says so in the log
    once, not once per request; a minute later, still down, once more."""
    settings.WERKBANK_API_RATE = "1/min"
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{_closed_port()}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        },
    }
    monkeypatch.setattr(throttling, "_last_warning", None)
    client = _token_client(tenants.user_a)

    def warnings() -> list[str]:
        return [
            r.getMessage()
            for r in caplog.records
            if r.name == "werkbank.throttling" and r.levelno == logging.WARNING
        ]

    with caplog.at_level(logging.WARNING, logger="werkbank.throttling"):
        assert [client.get("/api/v1/orders/").status_code for _ in range(3)] == [200, 200, 200]
        assert len(warnings()) == 1 and "unreachable" in warnings()[0]

        monkeypatch.setattr(throttling, "_last_warning", time.monotonic() - throttling.WARN_EVERY_S - 1)
        assert client.get("/api/v1/orders/").status_code == 200
        assert len(warnings()) == 2
