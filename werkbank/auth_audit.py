"""Logins, failed logins and logouts leave an AuditEvent.

The receivers hang on the auth framework's own signals, which every login path sends: Django's login
views and the admin's (``login()``/``logout()``/``authenticate()``), and knox's token login and logouts
(``knox.views`` sends ``user_logged_in`` and ``user_logged_out``; a failed token login goes through
``authenticate()``). The attempted password is never read: only the username, the path and the client
address are kept.

A login without an HTTP request (the test client's ``login()``/``force_login()``, a shell) is not a
login anyone made over the network, and leaves no row, as it is not counted toward the lockout either.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.contrib.contenttypes.models import ContentType
from django.db import transaction

from werkbank.audit import audit
from werkbank.models import AuditEvent
from werkbank.security import client_ip


def _over_http(request: Any) -> bool:
    """Whether the signal comes from a request a client sent (a bare HttpRequest has no path)."""
    return request is not None and bool(getattr(request, "path", ""))


def _context(request: Any) -> dict[str, Any]:
    return {"path": request.path[:200], "ip": client_ip(request)}


def _audit_login(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if not _over_http(request):
        return
    with transaction.atomic():
        audit(actor=user, verb="login", obj=user, after=_context(request))


def _audit_logout(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if user is None or not getattr(user, "pk", None) or not _over_http(request):
        return  # a logout without a session names nobody
    with transaction.atomic():
        audit(actor=user, verb="logout", obj=user, after=_context(request))


def _audit_login_failed(sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any) -> None:
    if not _over_http(request):
        return
    User = get_user_model()
    username = str(credentials.get(User.USERNAME_FIELD) or credentials.get("username") or "")[:150]
    user = User._default_manager.filter(**{User.USERNAME_FIELD: username}).first() if username else None
    after = {
        **_context(request),
        "username": username,
        # Set by axes' receiver, which runs first (axes is installed before the core app).
        "locked_out": bool(getattr(request, "axes_locked_out", False)),
    }
    with transaction.atomic():
        if user is not None:
            audit(actor=None, verb="login_failed", obj=user, after=after)
        else:  # no such user: the row names the attempted username, with no object id
            AuditEvent.objects.create(
                verb="login_failed",
                content_type=ContentType.objects.get_for_model(User),
                object_id="",
                object_repr=username,
                after=after,
            )


def connect() -> None:
    user_logged_in.connect(_audit_login, dispatch_uid="werkbank.audit.login")
    user_logged_out.connect(_audit_logout, dispatch_uid="werkbank.audit.logout")
    user_login_failed.connect(_audit_login_failed, dispatch_uid="werkbank.audit.login_failed")
