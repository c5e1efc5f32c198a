"""API throttling per token (REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]).

Each API token (knox) gets `WERKBANK_API_RATE` requests, e.g. "600/min"; a browser session's requests count
per user. The counts live in the cache `CACHES["throttle"]`: Redis when REDIS_URL is set, so that every
worker process counts against the same limit, local memory otherwise. Past the rate the API answers 429 with
a JSON `detail` and a `Retry-After` header. Anonymous requests are not counted here: the only anonymous
write is the login, which has its own limit.

The count is a **fixed window**, not a sliding one: time is cut into windows of the rate's period (a minute
for "600/min"), aligned to the epoch (each minute from its second 0), and each (token, window) has one
counter. Every request, refused ones included, adds one to it atomically: in Redis an `INCR` and, on the
window's first request, an `EXPIRE` past the window's end, both in one Lua script (one round trip, no
other client in between); in local memory the cache's `add` and `incr`, which hold the cache's lock. A
request is allowed while its counter is at most the rate, so parallel requests are counted exactly: of 640
at once with 600/min allowed, 40 are refused. A refused request's `Retry-After` is the seconds left to the
window's end. A fixed window lets a client spend its allowance at the end of one window and again at the
start of the next (up to twice the rate within one period across the edge); the sliding log of DRF's
`SimpleRateThrottle` avoided that, but read, appended and wrote its list back without atomicity, so
parallel requests were not counted.

The limiter fails open: when its store is unreachable (Redis down, refused, timing out), the request goes on
uncounted, and a warning is logged at most once a minute per process while that lasts. An outage of the
broker costs the rate limit, never the API.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError
from rest_framework.throttling import BaseThrottle

THROTTLE_CACHE = "throttle"
#: While the store is unreachable, one warning per this many seconds per process.
WARN_EVERY_S = 60.0

logger = logging.getLogger("werkbank.throttling")

#: INCR the window's counter and give it its expiry on the window's first request, atomically.
_INCR_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then
    redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return count
"""
_DURATIONS = {"s": 1, "m": 60, "h": 3600, "d": 86400}

_warn_lock = threading.Lock()
_last_warning: float | None = None


def _clock() -> float:
    """The time the windows are cut from (epoch seconds); a test may hold it still."""
    return time.time()


def _warn_unreachable(exc: Exception) -> None:
    """Log that the store is unreachable, at most once per WARN_EVERY_S in this process."""
    global _last_warning
    now = time.monotonic()
    with _warn_lock:
        if _last_warning is not None and now - _last_warning < WARN_EVERY_S:
            return
        _last_warning = now
    logger.warning(
        "The API rate limit's store (CACHES[%r]) is unreachable; requests go on uncounted: %r",
        THROTTLE_CACHE,
        exc,
    )


def parse_rate(rate: str) -> tuple[int, int]:
    """ "600/min" → (600, 60): requests allowed per window, and the window's length in seconds."""
    count, period = rate.split("/")
    return int(count), _DURATIONS[period.strip()[0]]


class SharedCacheThrottle(BaseThrottle):
    """A rate counted in fixed windows in `CACHES["throttle"]`, which every web process shares (Redis where
    configured). A subclass names its `scope` and says its `get_rate` and `get_cache_key`."""

    scope = ""
    cache_format = "throttle_%(scope)s_%(ident)s"

    def __init__(self) -> None:
        self.cache = caches[THROTTLE_CACHE]
        self.window_end: float | None = None
        self.now: float = 0.0

    def get_rate(self) -> str | None:
        raise NotImplementedError

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        raise NotImplementedError

    def allow_request(self, request: Any, view: Any) -> bool:
        rate = self.get_rate()
        key = self.get_cache_key(request, view) if rate else None
        if not rate or key is None:
            return True
        allowed, period = parse_rate(rate)
        self.now = _clock()
        window = int(self.now // period)
        self.window_end = float((window + 1) * period)
        try:
            count = self._incr(f"{key}:{window}", period)
        except (RedisError, OSError) as exc:
            _warn_unreachable(exc)
            return True
        return count <= allowed

    def wait(self) -> float | None:
        """Seconds until the window ends (the Retry-After of a refused request), at least one."""
        if self.window_end is None:
            return None
        return float(max(1, math.ceil(self.window_end - self.now)))

    def _incr(self, key: str, period: int) -> int:
        """Add one to the counter `key` and answer its new value; the counter lives `period` seconds after
        its first request (longer than the rest of its window: it is never reset within the window)."""
        if isinstance(self.cache, RedisCache):
            full_key = self.cache.make_and_validate_key(key)
            client = self.cache._cache.get_client(full_key, write=True)
            return int(client.eval(_INCR_SCRIPT, 1, full_key, period + 1))
        if self.cache.add(key, 1, timeout=period + 1):
            return 1
        try:
            return int(self.cache.incr(key))
        except ValueError:  # it expired between the two calls: this is the window's first request again
            self.cache.set(key, 1, timeout=period + 1)
            return 1


class TokenRateThrottle(SharedCacheThrottle):
    scope = "api-token"

    def get_rate(self) -> str | None:
        return settings.WERKBANK_API_RATE or None

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        digest = getattr(request.auth, "digest", None)  # a knox token's digest: unique per token
        ident = f"token-{digest}" if digest else f"user-{user.pk}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
