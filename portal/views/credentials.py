"""Portal page: a handed-over server's BMC credentials, revealed to a member of its customer who types the
password again (issue #28, item 3).

The credentials appear only in the answer to that POST: never in a redirect, the session or a message, and
the answer is `Cache-Control: no-store`. Each reveal needs the password again and is audited by the service
(`deployment.bmc_reveal`, with the client address); a wrong password is counted by django-axes as a failed
login. Another customer's server, and any user who is no customer member, get a 404 (portal/views/access.py);
an anonymous visitor's GET goes to the login page, as on every portal page, and an anonymous POST is a 404.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.translation import gettext as _
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from django.views.decorators.http import require_http_methods

from builds.choices import ServerStatus
from builds.models import Server
from deployment.models import ServerNetwork
from deployment.services import bmc_credentials_reveal
from portal import selectors
from portal.customer import row
from portal.views.access import customer_required
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.security import client_ip
from werkbank.views import token_page_response

View = Callable[..., HttpResponse]


def bmc_context(server: Server) -> dict[str, Any]:
    """The server page's BMC block (templates/portal/_bmc_credentials.html): whether the server is handed
    over, whether credentials are on record (asked only then: one query, on handed-over servers only), and
    where to reveal them. Never the credentials."""
    handed_over = server.status == ServerStatus.HANDED_OVER
    stored = handed_over and ServerNetwork.objects.filter(server=server).exclude(bmc_credentials="").exists()
    return {
        "bmc": row(
            "server.bmc",
            handed_over=handed_over,
            stored=stored,
            reveal_url=reverse("portal:server-bmc-credentials", args=[server.pk]),
        )
    }


def _anonymous_post_not_found(view: View) -> View:
    """An anonymous POST answers 404 (it names nobody to reveal to); a GET goes on to the login page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method == "POST" and not request.user.is_authenticated:
            raise Http404("No such page.")
        return view(request, *args, **kwargs)

    return wrapped


def _refusal_text(error: RuleViolation) -> str:
    if error.code == "bmc_not_handed_over":
        return _("The BMC credentials can be revealed once the server is handed over.")
    return _("No BMC credentials are on record for this server. Your project manager can store them.")


@sensitive_post_parameters("password")
@_anonymous_post_not_found
@customer_required
@require_http_methods(["GET", "POST"])
@sensitive_variables("revealed", "credentials")
def bmc_credentials_page(request: HttpRequest, server_id: int) -> HttpResponse:
    """GET: the form that asks for the password again. POST: with the right password, this answer shows
    the BMC username and password (and only this answer); with a wrong one, the form says so (400)."""
    server = selectors.customer_server(request.user, server_id)
    if server is None:
        raise Http404("No such server.")
    status, error, revealed = 200, "", None
    if request.method == "POST":
        try:
            credentials = bmc_credentials_reveal(
                server=server,
                actor=request.user,
                password=request.POST.get("password", ""),
                client_ip=client_ip(request),
                request=request,
            )
        except UnknownObject:
            raise Http404("No such server.") from None
        except InvalidInput:
            status, error = 400, _("The password is not correct.")
        except RuleViolation as refusal:
            status, error = 409, _refusal_text(refusal)
        else:
            revealed = row("bmc.revealed", username=credentials["username"], password=credentials["password"])
    context = {
        "server": row(
            "bmc.server",
            id=server.pk,
            hostname=server.hostname,
            url=reverse("portal:server", args=[server.pk]),
        ),
        **bmc_context(server),
        "error": error,
        "revealed": revealed,
    }
    response = TemplateResponse(request, "portal/bmc_credentials.html", context, status=status)
    return token_page_response(response)  # no cache keeps the answer


urlpatterns: list[URLPattern] = [
    path("servers/<int:server_id>/bmc-credentials/", bmc_credentials_page, name="server-bmc-credentials"),
]
