"""The bench's API token page (/bench/tokens/): an assembly partner's member creates and revokes their own API
tokens, for the probe's upload (`python -m probe upload`, probe/__main__.py).

As the portal's token page (portal/views/customer.py), on the same services (`werkbank.services`) and within
the same cap (REST_KNOX["TOKEN_LIMIT_PER_USER"]); the templates share werkbank/_api_tokens.html. Whoever has
a bench has the page (partners' members and PMs, as `BenchMixin`); customers and outsiders get a 404. A new
token is shown on the answer that created it only, with the upload command filled in for each server on the
user's bench that waits for its report or is in burn-in.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views import View

from builds.choices import ServerStatus
from builds.models import Server
from builds.views import BenchMixin
from werkbank.access import Purpose
from werkbank.errors import RuleViolation
from werkbank.services import api_token_create, live_api_tokens
from werkbank.views import token_page_response, token_revoke_response

if TYPE_CHECKING:
    from django.contrib.auth.models import User

#: The statuses whose servers the probe uploads a burn-in report for: the upload moves an assembled server
#: into burn-in (`burnin.services.ingest`), and a rerun goes to a server in burn-in.
UPLOAD_STATUSES = (ServerStatus.ASSEMBLED, ServerStatus.BURN_IN)
#: The most servers a new token's page writes a command for (a PM's bench holds the whole fleet).
COMMANDS_SHOWN = 20
#: The report file the README's commissioning steps write (`probe burnin --out burnin.json`).
REPORT_FILE = "burnin.json"


@dataclass(frozen=True)
class UploadCommand:
    """The probe's upload command for one server, with the new token in it."""

    hostname: str
    asset_tag: str
    status_label: str
    command: str


def upload_command(*, token: str, asset_tag: str) -> str:
    """`python3 -m probe upload` as probe/__main__.py spells it: the report, the base URL
    (WERKBANK_PUBLIC_URL), the token and the server's asset tag, each quoted for a POSIX shell."""
    return " ".join(
        [
            "python3 -m probe upload",
            shlex.quote(REPORT_FILE),
            "--url",
            shlex.quote(settings.WERKBANK_PUBLIC_URL),
            "--token",
            shlex.quote(token),
            "--server",
            shlex.quote(asset_tag),
        ]
    )


def upload_servers(user: Any) -> tuple[list[Server], int]:
    """The servers on the user's bench that take a burn-in upload now (at most COMMANDS_SHOWN, by asset
    tag), and how many there are in all."""
    servers = Server.objects.visible_to(user, purpose=Purpose.BENCH).filter(status__in=UPLOAD_STATUSES)
    shown = list(servers.order_by("asset_tag").only("pk", "hostname", "asset_tag", "status")[:COMMANDS_SHOWN])
    total = len(shown) if len(shown) < COMMANDS_SHOWN else servers.count()
    return shown, total


def _user(request: HttpRequest) -> User:
    # BenchMixin let only an authenticated user with a bench this far.
    return cast("User", request.user)


class BenchTokensView(BenchMixin, View):
    """GET: the user's live tokens. POST: create one and show it, with the upload commands, on this answer
    only; at the cap, the refusal (409) and nothing created."""

    http_method_names = ["get", "post"]

    def get(self, request: HttpRequest) -> HttpResponse:
        return self.render()

    def post(self, request: HttpRequest) -> HttpResponse:
        try:
            _row, raw = api_token_create(user=_user(request), actor=request.user)
        except RuleViolation:
            refusal = _(
                "No token was created: you already hold %(limit)d live tokens, the most allowed. "
                "Revoke one first."
            ) % {"limit": settings.REST_KNOX["TOKEN_LIMIT_PER_USER"]}
            return self.render(refusal=refusal, status=409)
        servers, total = upload_servers(request.user)
        commands = [
            UploadCommand(
                hostname=server.hostname,
                asset_tag=server.asset_tag,
                status_label=server.get_status_display(),
                command=upload_command(token=raw, asset_tag=server.asset_tag),
            )
            for server in servers
        ]
        return self.render(new_token=raw, commands=commands, more_servers=total - len(commands))

    def render(self, *, status: int = 200, **context: Any) -> HttpResponse:
        response = TemplateResponse(
            self.request,
            "bench/tokens.html",
            {
                "tokens": list(live_api_tokens(user=_user(self.request))),
                "limit": settings.REST_KNOX["TOKEN_LIMIT_PER_USER"],
                "public_url": settings.WERKBANK_PUBLIC_URL,
                "new_token": "",
                "commands": [],
                "more_servers": 0,
                "refusal": "",
                **context,
            },
            status=status,
        )
        return token_page_response(response)


class BenchTokenRevokeView(BenchMixin, View):
    """POST: revoke one of the user's own tokens by its prefix (another user's is a 404)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> HttpResponse:
        return token_revoke_response(request, back="bench:tokens")
