"""Login lockout (django-axes) and the client address it counts by.

One limit holds on every login path (`/api/v1/auth/login/`, `/accounts/login/`, `/admin/login/`) and in
every process: axes keeps the failed attempts in the database (``AxesDatabaseHandler``), which all web
workers share. After ``AXES_FAILURE_LIMIT`` failures for one username, or from one client address, within
``AXES_COOLOFF_TIME``, every login for that username or from that address is refused, the right password
included, until the cool-off has passed or a PM resets it (admin, "Access attempts", or
``manage.py axes_reset``).
"""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_client_username
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _


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
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return _(
        "%(limit)s failed logins for one username, or from one client address, lock logins for that "
        "username or address for %(minutes)s minutes."
    ) % {"limit": settings.AXES_FAILURE_LIMIT, "minutes": minutes}


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict | None = None
) -> HttpResponse:
    """What a locked-out login answers (axes' ``AXES_LOCKOUT_CALLABLE``): 429 with JSON naming the rule
    on the API, a readable page on the HTML logins."""
    status = settings.AXES_HTTP_RESPONSE_CODE
    if request.path.startswith("/api/"):
        return JsonResponse(
            {
                "detail": "Too many failed logins. Try again later.",
                "code": "login_locked_out",
                "rule": lockout_rule(),
                "retry_after_minutes": int(settings.AXES_COOLOFF_TIME.total_seconds() // 60),
            },
            status=status,
        )
    context = {"rule": lockout_rule(), "username": get_client_username(request, credentials) or ""}
    return render(request, "registration/locked_out.html", context, status=status)


class LockoutBackend(AxesStandaloneBackend):
    """axes' lockout check, first in ``AUTHENTICATION_BACKENDS``.

    ``authenticate()`` without a request is not an HTTP login (the test client's ``login()``, a shell):
    there is no client to count, so the check steps aside instead of raising. Every login view passes its
    request; tests/werkbank/test_security_auth.py proves the lockout on all three.
    """

    def authenticate(self, request: HttpRequest | None, *args: Any, **kwargs: Any) -> None:
        if request is None:
            return None
        return super().authenticate(request, *args, **kwargs)
