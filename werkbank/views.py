"""Core views: the health endpoint, the logout page, and the mixin HTML views use to apply `visible_to`."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.mixins import LoginRequiredMixin
from django.db import connection
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import resolve_url
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from werkbank.access import is_pm
from werkbank.choices import OrganizationKind
from werkbank.errors import DomainError
from werkbank.i18n import SESSION_LANGUAGE
from werkbank.models import member_organizations
from werkbank.services import api_token_revoke

logger = logging.getLogger(__name__)


class VisibleToViewMixin(LoginRequiredMixin):
    """For ListView/DetailView: the queryset is the model's rows visible to the user.

    An object outside the user's view is then a 404 from `get_object()`.
    """

    model: Any

    def get_queryset(self) -> QuerySet:
        return self.model.objects.visible_to(self.request.user)  # type: ignore[attr-defined]


def _check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def _check_redis() -> str:
    import redis

    client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    try:
        client.ping()
    finally:
        client.close()
    return "ok"


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when the database (and Redis, when configured) answer; 503 otherwise.

    Anyone may ask, so each check answers only "ok" or "failed": the error, which can name internal hosts
    and ports, goes to the log.
    """
    checks: dict[str, str] = {}
    for name, check in (("database", _check_database), ("redis", _check_redis)):
        if name == "redis" and not settings.REDIS_URL:
            continue
        try:
            check()
        except Exception:  # a health check reports any failure instead of raising it
            logger.exception("Health check %s failed", name)
            checks[name] = "failed"
        else:
            checks[name] = "ok"
    healthy = all(value == "ok" for value in checks.values())
    return JsonResponse({"status": "ok" if healthy else "failed", **checks}, status=200 if healthy else 503)


def home(request: HttpRequest) -> HttpResponseRedirect:
    """Where "/" and a fresh login lead: PMs to their pipeline, partner members to their bench, customers to
    their orders, anyone else to the login page."""
    user = request.user
    if not user.is_authenticated:
        return HttpResponseRedirect(reverse("login"))
    if is_pm(user):
        return HttpResponseRedirect(reverse("pm:pipeline"))
    kinds = set(member_organizations(user).values_list("organization__kind", flat=True))
    if OrganizationKind.PARTNER in kinds:
        return HttpResponseRedirect("/bench/")
    return HttpResponseRedirect(reverse("portal:orders"))


class LogoutView(auth_views.LogoutView):
    """`/accounts/logout/`: a GET shows a page in the frame with a "Log out" button, the POST logs out.

    Django's view answers only POST (a GET that logged out could be set off by any page's `<img>`), so a GET
    got a 405 with an empty body: a blank page for whoever followed a link or typed the address. The POST
    lands on the login page saying "You are logged out", in the language the member had: the flushed session
    gets the organization's language back, so the login page does not switch to English under them.
    """

    http_method_names = ["get", "post", "options"]
    template_name = "registration/logout.html"
    next_page = "login"

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return HttpResponseRedirect(resolve_url(settings.LOGIN_URL))
        return super().get(request, *args, **kwargs)

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        was_logged_in = request.user.is_authenticated
        language = request.session.get(SESSION_LANGUAGE)
        response = super().post(request, *args, **kwargs)
        if language:
            request.session[SESSION_LANGUAGE] = language
        if was_logged_in:
            messages.success(request, _("You are logged out."))
        return response


# --- API tokens: the portal's and the bench's token pages (portal/views/customer.py, builds/token_views.py)


def token_page_response(response: HttpResponse) -> HttpResponse:
    """A token page's answer: a raw token appears on it once, so no cache may keep it."""
    response["Cache-Control"] = "no-store"
    return response


def token_revoke_response(request: HttpRequest, *, back: str) -> HttpResponse:
    """POST: revoke one of the user's own tokens by its prefix (another user's, or none, is a 404), then
    back to the token page named `back` (303) with a message."""
    token_key = request.POST.get("token_key", "")
    try:
        api_token_revoke(user=request.user, token_key=token_key, actor=request.user)
    except DomainError:
        raise Http404("No such token.") from None
    messages.success(request, _("The token %(prefix)s… was revoked.") % {"prefix": token_key})
    return HttpResponseRedirect(reverse(back), status=303)
