"""The bench's API token page (/bench/tokens/): a partner's member creates a token for the probe, sees it once
with the upload command for each server waiting for its report, and revokes it (issue #24, item 3)."""

from __future__ import annotations

import html
import shlex
from typing import Any

import pytest
from django.test import Client
from knox.models import AuthToken
from knox.settings import knox_settings

from builds.choices import ServerStatus
from builds.models import Server
from tests import factories
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

URL = "/bench/tokens/"


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def bench(tenants: Any) -> dict[str, Server]:
    """Partner P builds four servers of customer A's order (assembled, in burn-in, assembling, passed);
    partner Q one assembled server of customer B's."""
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=4)
    servers = factories.make_servers(order)
    for server, status in zip(
        servers,
        (ServerStatus.ASSEMBLED, ServerStatus.BURN_IN, ServerStatus.ASSEMBLING, ServerStatus.BURN_IN_PASSED),
        strict=True,
    ):
        Server.objects.filter(pk=server.pk).update(status=status, partner=tenants.partner_p)
    order_q = factories.OrderFactory(customer=tenants.customer_b, server_count=1)
    [other] = factories.make_servers(order_q, status=ServerStatus.ASSEMBLED)
    Server.objects.filter(pk=other.pk).update(partner=tenants.partner_q)
    assembled, burn_in, assembling, passed = (Server.objects.get(pk=server.pk) for server in servers)
    return {
        "assembled": assembled,
        "burn_in": burn_in,
        "assembling": assembling,
        "passed": passed,
        "other": other,
    }


def test_a_partner_creates_a_token_sees_it_once_with_the_upload_commands_and_revokes_it(
    tenants, bench, settings
):
    settings.WERKBANK_PUBLIC_URL = "https://werkbank.example"
    client = _client(tenants.user_p)
    assert client.get(URL).status_code == 200
    assert f'href="{URL}"' in client.get("/bench/").content.decode()  # linked from the bench list

    created = client.post(URL)

    assert created.status_code == 200
    assert created["Cache-Control"] == "no-store"
    raw = created.context["new_token"]
    token = AuthToken.objects.get(user=tenants.user_p)
    assert raw.startswith(token.token_key)
    page = html.unescape(created.content.decode())
    assert f'value="{raw}"' in page
    commands = {command.asset_tag: command.command for command in created.context["commands"]}
    # The servers on P's bench that take a burn-in upload now, and no other.
    assert sorted(commands) == sorted([bench["assembled"].asset_tag, bench["burn_in"].asset_tag])
    for asset_tag, command in commands.items():
        # As probe/__main__.py parses it: the subcommand, the report, --url, --token, --server.
        assert shlex.split(command) == [
            "python3", "-m", "probe", "upload", "burnin.json",
            "--url", "https://werkbank.example", "--token", raw, "--server", asset_tag,
        ]  # fmt: skip
        assert command in page
    assert bench["other"].asset_tag not in page and bench["assembling"].asset_tag not in page
    assert AuditEvent.objects.filter(verb="api_token.create", actor=tenants.user_p).count() == 1

    # Shown once: the next look lists the token by its prefix only.
    listing = client.get(URL)
    assert raw not in listing.content.decode()
    assert f'data-token="{token.token_key}"' in listing.content.decode()
    assert listing.context["commands"] == []

    # Another user's token is not theirs to revoke.
    foreign, _raw = AuthToken.objects.create(user=tenants.user_q)
    assert client.post("/bench/tokens/revoke/", {"token_key": foreign.token_key}).status_code == 404
    assert AuthToken.objects.filter(pk=foreign.pk).exists()

    revoked = client.post("/bench/tokens/revoke/", {"token_key": token.token_key})
    assert revoked.status_code == 303 and revoked["Location"] == URL
    assert not AuthToken.objects.filter(user=tenants.user_p).exists()
    assert f"The token {token.token_key}… was revoked." in html.unescape(client.get(URL).content.decode())
    assert AuditEvent.objects.filter(verb="api_token.revoke", actor=tenants.user_p).count() == 1


def test_without_a_server_waiting_for_a_report_the_page_shows_the_command_with_a_placeholder(tenants):
    created = _client(tenants.user_q).post(URL)
    assert created.status_code == 200
    assert created.context["commands"] == []
    page = html.unescape(created.content.decode())
    assert 'id="no-upload-servers"' in page
    assert f"--token {created.context['new_token']} --server ASSET_TAG" in page


def test_at_the_cap_the_refusal_is_shown_and_nothing_is_created(tenants):
    limit = knox_settings.TOKEN_LIMIT_PER_USER
    for _ in range(limit):
        AuthToken.objects.create(user=tenants.user_p)

    refused = _client(tenants.user_p).post(URL)

    assert refused.status_code == 409
    assert refused.context["new_token"] == ""
    assert f"you already hold {limit} live tokens, the most allowed" in html.unescape(
        refused.content.decode()
    )
    assert AuthToken.objects.filter(user=tenants.user_p).count() == limit
    assert not AuditEvent.objects.filter(verb="api_token.create").exists()


def test_customers_and_outsiders_get_a_404_and_pms_have_the_page_as_they_have_the_bench(tenants):
    for user in (tenants.user_a, tenants.outsider):
        client = _client(user)
        assert client.get(URL).status_code == 404, user.username
        assert client.post(URL).status_code == 404, user.username
        assert client.post("/bench/tokens/revoke/", {"token_key": "x"}).status_code == 404, user.username
    assert not AuthToken.objects.exists()
    # PMs have the bench (BenchListView), so they have its token page too.
    assert _client(tenants.pm).get(URL).status_code == 200
    # Anonymous: to the login page.
    response = Client().get(URL)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
