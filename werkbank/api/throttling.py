"""API throttling per token (REST_FRAMEWORK["DEFAULT_THROTTLE_CLASSES"]).

Each API token (knox) gets `WERKBANK_API_RATE` requests, e.g. "600/min"; a browser session's requests count
per user. The counts live in the cache `CACHES["throttle"]`: Redis when REDIS_URL is set, so that every
worker process counts against the same limit, local memory otherwise. Past the rate the API answers 429 with
a JSON `detail` and a `Retry-After` header. Anonymous requests are not counted here: the only anonymous
write is the login, which has its own limit.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.cache import caches
from rest_framework.throttling import SimpleRateThrottle

THROTTLE_CACHE = "throttle"


class SharedCacheThrottle(SimpleRateThrottle):
    """A rate counted in `CACHES["throttle"]`, which every web process shares (Redis where configured)."""

    def __init__(self) -> None:
        self.cache = caches[THROTTLE_CACHE]
        super().__init__()


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
