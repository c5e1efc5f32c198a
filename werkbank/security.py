"""Login lockout (django-axes) and the client address it counts by.

One rule holds on every login path (``/api/v1/auth/login/``, ``/accounts/login/``, ``/admin/login/``) and
in every process: axes keeps the failed attempts in the database (``AxesDatabaseHandler``, one row per
username, address and user agent, with its count and the time of its last failure), which all web
workers share. A failure counts until ``AXES_COOLOFF_TIME`` (15 minutes) has passed since the last
failure of its (username, address) row. Three limits read those rows (``LockoutHandler``):

1. **Username at an address.** ``AXES_FAILURE_LIMIT`` (5) failures for one username from one address lock
   that username *at that address*: every login for it from there is refused, the right password
   included, until the cool-off has passed since that pair's last failure. Axes counts this pair itself
   (``AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]``).
2. **Address.** ``WERKBANK_LOGIN_ADDRESS_FAILURE_LIMIT`` (50) failures from one address, for any
   usernames, lock that address for every username, until enough of its failures have aged out of the
   cool-off (at the latest a cool-off after its last failure). Below it, a shared address (a proxy, an
   office) does not keep its users out.
3. **Username alone: a delay, never a lock.** From ``AXES_FAILURE_LIMIT`` failures for one username across
   all addresses on, an address that has failed for that username waits before its next try: 1 second
   at the limit, doubling with each further failure of the username, at most
   ``WERKBANK_LOGIN_USERNAME_DELAY_MAX_SECONDS`` (60), counted from that address's own last failure for
   it. The failure that starts a wait already answers 429 with ``Retry-After``. An address that has not
   failed for the username is not delayed.

So strangers who know a username cannot lock its owner out, and a correct password from an address that
has not failed is never refused. An attempt refused by any of the three is not checked and is not
counted as a failure (``AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False``): hammering a lock does
not prolong it, and a wait cannot grow into a lock. A successful login resets only its own pair's count
(so a user with an account cannot wipe the failures counted against another username at the same
address). Every refusal answers 429 with ``Retry-After``: JSON on the API (``code: login_locked_out``,
the ``reason``, the rule), a readable page on the HTML logins. A PM unlocks early in the admin ("Access
attempts") or with ``manage.py axes_reset``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from axes.attempts import get_cool_off_threshold
from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off, get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _

#: Why a login is refused; the API's ``reason``.
PAIR, ADDRESS, USERNAME_DELAY = "username_at_address", "address", "username_delay"


@dataclass(frozen=True)
class Refusal:
    """A lockout verdict for one attempt: which rule, and the seconds until it no longer holds."""

    reason: str
    retry_after: int


def client_ip(request: Any) -> str | None:
    """The address a login attempt is counted by.

    ``X-Forwarded-For`` is a header any client can write, so it counts only behind proxies the operator
    declared: with ``WERKBANK_TRUSTED_PROXY_COUNT = n`` (n > 0) the n-th address from the right of
    ``X-Forwarded-For`` is the client, as each proxy appends the address it received the request from.
    With 0 (the default) the header is ignored and the socket's ``REMOTE_ADDR`` counts.
    """
    meta = request.META
    remote = meta.get("REMOTE_ADDR") or None
    count = int(getattr(settings, "WERKBANK_TRUSTED_PROXY_COUNT", 0))
    if count <= 0:
        return remote
    hops = [hop.strip() for hop in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if len(hops) < count:
        # Fewer hops than declared proxies: the request did not come through them all. Count the socket.
        return remote
    return hops[-count]


def lockout_rule() -> str:
    """The rule in words, as the lockout answers name it."""
    return _(
        "%(limit)s failed logins for one username from one client address lock that username at that "
        "address for %(minutes)s minutes. %(address_limit)s failed logins from one address, for any "
        "usernames, lock that address. From %(limit)s failed logins for one username on, from any "
        "addresses, an address that failed for it waits before its next try: 1 second, doubling with each "
        "further failure, at most %(max_delay)s seconds. The right password from an address that has not "
        "failed is never refused."
    ) % {
        "limit": settings.AXES_FAILURE_LIMIT,
        "minutes": int(get_cool_off(None).total_seconds() // 60),
        "address_limit": settings.WERKBANK_LOGIN_ADDRESS_FAILURE_LIMIT,
        "max_delay": settings.WERKBANK_LOGIN_USERNAME_DELAY_MAX_SECONDS,
    }


def _seconds_until(moment: datetime, now: datetime) -> int:
    """Whole seconds from `now` to `moment`, rounded up, at least 1 (a ``Retry-After`` of 0 invites a
    retry that is refused again)."""
    return max(1, math.ceil((moment - now).total_seconds()))


def _address_lock_ends(rows: list[tuple[datetime, int]], limit: int, cool_off: timedelta) -> datetime | None:
    """When an address's lock ends, or None if it is below `limit`: the moment so many of its failures
    (`rows` of last failure and count, oldest first) have aged out of the cool-off that the rest are below."""
    left = sum(failures for _, failures in rows)
    if left < limit:
        return None
    for last_failure, failures in rows:
        left -= failures
        if left < limit:
            return last_failure + cool_off
    return None


def _refusal(request: Any, credentials: dict | None, pair_failures: int) -> Refusal | None:
    """Which of the three rules (module docstring) refuses this attempt, if any. `pair_failures` is axes'
    count for the attempt's (username, address) within the cool-off."""
    limit = get_failure_limit(request, credentials)
    cool_off = get_cool_off(request)
    now = timezone.now()  # not the request's start: a row just created is stamped when it is saved
    recent = AccessAttempt.objects.filter(attempt_time__gte=get_cool_off_threshold(request))
    username, address = get_client_username(request, credentials), request.axes_ip_address
    pair = recent.filter(username=username, ip_address=address)
    if pair_failures >= limit:
        last = pair.aggregate(last=Max("attempt_time"))["last"] or now
        return Refusal(PAIR, _seconds_until(last + cool_off, now))
    if address is not None:
        rows = recent.filter(ip_address=address).order_by("attempt_time")
        ends = _address_lock_ends(
            list(rows.values_list("attempt_time", "failures_since_start")),
            settings.WERKBANK_LOGIN_ADDRESS_FAILURE_LIMIT,
            cool_off,
        )
        if ends is not None:
            return Refusal(ADDRESS, _seconds_until(ends, now))
    if pair_failures > 0:
        username_failures = (
            recent.filter(username=username).aggregate(n=Sum("failures_since_start"))["n"] or 0
        )
        if username_failures >= limit:
            cap = settings.WERKBANK_LOGIN_USERNAME_DELAY_MAX_SECONDS
            wait = timedelta(seconds=min(2 ** min(username_failures - limit, 30), cap))
            last = pair.aggregate(last=Max("attempt_time"))["last"] or now
            if last + wait > now:
                return Refusal(USERNAME_DELAY, _seconds_until(last + wait, now))
    return None


class LockoutHandler(AxesDatabaseHandler):
    """axes' database handler with the three rules of the module docstring (``AXES_HANDLER``).

    axes compares ``get_failures()`` with ``AXES_FAILURE_LIMIT`` before the password is checked and again
    after a failure is recorded; it counts the (username, address) pair itself. An address past its
    limit, or an address in its username's delay, answers as a pair at the limit; the verdict, with its
    reason and wait, is kept on the request for ``lockout_response``.
    """

    def get_failures(self, request: Any, credentials: dict | None = None) -> int:
        pair_failures = super().get_failures(request, credentials)
        refusal = _refusal(request, credentials, pair_failures)
        request.werkbank_refusal = refusal
        if refusal is None:
            return pair_failures
        return max(pair_failures, get_failure_limit(request, credentials))


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """What a refused login answers (axes' ``AXES_LOCKOUT_CALLABLE``): 429 with ``Retry-After``, JSON
    naming the reason and the rule on the API, a readable page on the HTML logins."""
    status = settings.AXES_HTTP_RESPONSE_CODE
    refusal = getattr(request, "werkbank_refusal", None) or Refusal(
        PAIR, int(get_cool_off(request).total_seconds())
    )
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {
                "detail": "Too many failed logins. Try again later.",
                "code": "login_locked_out",
                "reason": refusal.reason,
                "rule": lockout_rule(),
                "retry_after_seconds": refusal.retry_after,
                "retry_after_minutes": math.ceil(refusal.retry_after / 60),
            },
            status=status,
        )
    else:
        context = {
            "rule": lockout_rule(),
            "retry_after": refusal.retry_after,
            "username": get_client_username(request, credentials) or "",
        }
        response = render(request, "registration/locked_out.html", context, status=status)
    response["Retry-After"] = str(refusal.retry_after)
    return response


class LockoutBackend(AxesStandaloneBackend):
    """axes' lockout check, first in ``AUTHENTICATION_BACKENDS``.

    ``authenticate()`` without a request is not an HTTP login (the test client's ``login()``, a shell):
    there is no client to count, so the check steps aside instead of raising. Every login view passes its
    request; tests/werkbank/test_security_auth.py and test_security_lockout.py prove the rules on all three.
    """

    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, *args, **kwargs)
