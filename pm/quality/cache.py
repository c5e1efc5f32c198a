"""The fleet's four quality tables, computed once and reused while nothing they count has changed.

At 10,000 servers the tables cost about a second of SQL (bench/bench_quality.py): every installation and
every attribution of the fleet is folded into its rows. The page, its CSV and the API's lists read them
from here instead: a cache entry keyed by the language (the labels are translated) and by a fingerprint of
what the rows count, read in two cheap aggregate queries: the installations (how many, the newest, how many
removed) and the attributions (how many, the newest, the last confirmed), plus a generation that every saved
or deleted attribution bumps (pm/apps.py), since a rule's re-proposal changes a cause in place. So a new
finding, a claim, an installed or removed card and a PM's correction show at once; only unit-years, which
grow with the clock, may be up to `QUALITY_CACHE_SECONDS` old, and the page says when its figures were made.

The cache is `caches["quality"]`: Redis when REDIS_URL is set, so every web process shares one computation
and one generation; a process-local memory cache otherwise (one process, as `make demo` serves).
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

from django.core.cache import caches
from django.db.models import Count, Max
from django.utils import timezone
from django.utils.translation import get_language

from builds.models import Installation
from pm.quality.rows import QualityRow
from pm.quality.selectors import quality_tables
from warranty.models import Attribution

#: The longest a table is reused while nothing it counts changed (seconds): only unit-years age.
QUALITY_CACHE_SECONDS = 300

_GENERATION = "generation"

logger = logging.getLogger(__name__)


def _cache() -> Any:
    return caches["quality"]


def bump_generation(**_: Any) -> None:
    """A receiver of Attribution's post_save and post_delete: the next read recomputes the tables."""
    cache = _cache()
    try:
        cache.incr(_GENERATION)
    except Exception:  # not there yet, or not an integer: any new value differs from what the keys hold
        try:
            cache.set(_GENERATION, time.time_ns(), timeout=None)  # an integer: Redis' INCR needs one
        except Exception:  # Redis away: the fingerprint's counts still move on a new attribution
            logger.warning("quality cache unreachable: generation not bumped", exc_info=True)


def fingerprint() -> tuple[Any, ...]:
    """What the rows count, in two aggregate queries (index scans of two tables), with the generation."""
    installations = Installation.objects.aggregate(n=Count("pk"), last=Max("pk"), removed=Count("removed_at"))
    attributions = Attribution.objects.aggregate(n=Count("pk"), last=Max("pk"), confirmed=Max("confirmed_at"))
    return (
        installations["n"],
        installations["last"],
        installations["removed"],
        attributions["n"],
        attributions["last"],
        attributions["confirmed"],
        _cache().get(_GENERATION),
    )


def fleet_tables() -> tuple[dict[str, list[QualityRow]], Any]:
    """The four tables (as `quality_tables` ranks them) and when they were computed. Two queries when
    they are in the cache, five when not; with the cache unreachable, computed every time."""
    cache = _cache()
    try:
        digest = hashlib.sha256(repr(fingerprint()).encode()).hexdigest()[:32]
        key = f"tables:{get_language()}:{digest}"
        entry = cache.get(key)
    except Exception:  # Redis away: the figures are still answered, only slower
        logger.warning("quality cache unreachable: tables computed afresh", exc_info=True)
        key, entry = None, None
    if entry is None:
        now = timezone.now()
        entry = (quality_tables(now=now), now)
        if key is not None:
            try:
                cache.set(key, entry, timeout=QUALITY_CACHE_SECONDS)
            except Exception:
                logger.warning("quality cache unreachable: tables not kept", exc_info=True)
    return entry
