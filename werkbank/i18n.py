"""The language of the pages: a member's organization language, unless the language switch chose another.

At login the user's language (the language of their organization; PMs keep the site default) and their
roles are put in the session, so no page pays a query for them. Django's `set_language` view (the switch in
the frame, `/i18n/setlang/`) sets the language cookie, and a cookie always wins: LocaleMiddleware reads it,
and this middleware then leaves the request alone. A change of the organization's language applies from the
member's next login. The API speaks English to everyone: its error texts are part of its contract.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.signals import user_logged_in
from django.http import HttpRequest, HttpResponse
from django.utils import translation

from werkbank.access import is_pm
from werkbank.audiences import audiences_of

#: Session keys written at login.
SESSION_LANGUAGE = "werkbank_language"
SESSION_ROLES = "werkbank_roles"


def user_language(user: Any) -> str | None:
    """The language of the user's organization (the first membership's, by organization name), or None."""
    if is_pm(user):
        return None
    language = (
        user.memberships.order_by("organization__name")
        .values_list("organization__language", flat=True)
        .first()
    )
    known = {code for code, _ in settings.LANGUAGES}
    return language if language in known else None


def _remember_at_login(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    if request is None or not hasattr(request, "session"):
        return
    language = user_language(user)
    if language:
        request.session[SESSION_LANGUAGE] = language
    else:
        request.session.pop(SESSION_LANGUAGE, None)
    request.session[SESSION_ROLES] = sorted(str(audience) for audience in audiences_of(user))


def connect() -> None:
    user_logged_in.connect(_remember_at_login, dispatch_uid="werkbank.i18n.remember_at_login")


class OrganizationLanguageMiddleware:
    """Activates the session's organization language for pages, when no language cookie says otherwise."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):
            translation.activate(settings.LANGUAGE_CODE)
            request.LANGUAGE_CODE = settings.LANGUAGE_CODE
        elif settings.LANGUAGE_COOKIE_NAME not in request.COOKIES and hasattr(request, "session"):
            language = request.session.get(SESSION_LANGUAGE)
            if language:
                translation.activate(language)
                request.LANGUAGE_CODE = language
        return self.get_response(request)
