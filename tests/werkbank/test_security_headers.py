"""What anyone on the network sees: the Content-Security-Policy, the health endpoint, and whether the API
schema and docs are published (issue #16, defect 13)."""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client

from tests import factories

pytestmark = pytest.mark.django_db

NONCE = re.compile(r"'nonce-([A-Za-z0-9+/=]+)'")
INLINE_TAG = re.compile(r"<(script|style)(?![^>]*\bsrc=)([^>]*)>", re.IGNORECASE)


def _policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    directives = {}
    for part in header.split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


def _assert_inline_tags_carry_the_nonce(response) -> None:
    policy = _policy(response)
    [nonce] = {NONCE.fullmatch(value).group(1) for value in policy["script-src"] if NONCE.fullmatch(value)}
    assert f"'nonce-{nonce}'" in policy["style-src"]
    page = response.content.decode()
    inline = INLINE_TAG.findall(page)
    assert inline, "the page has inline <style> or <script>"
    for tag, attributes in inline:
        assert f'nonce="{nonce}"' in attributes, f"<{tag}{attributes}> lacks the response's nonce"


def _assert_no_inline_code(response) -> None:
    """A page of the frame with no page-only styles inlines nothing: its styles are all in site.css."""
    assert "Content-Security-Policy" in response
    assert INLINE_TAG.findall(response.content.decode()) == []


def test_the_policy_allows_no_inline_code_but_nonced_and_nothing_foreign(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    policy = _policy(response)
    assert policy["default-src"] == ["'self'"]
    for directive in ("script-src", "style-src"):
        assert "'unsafe-inline'" not in policy[directive]
        assert "'unsafe-eval'" not in policy[directive]
        assert [value for value in policy[directive] if not value.startswith("'nonce-")] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["form-action"] == ["'self'"]
    _assert_no_inline_code(response)


def test_each_response_gets_its_own_nonce(client, tenants):
    client.force_login(tenants.user_p)
    first = _policy(client.get("/bench/"))["script-src"]
    second = _policy(client.get("/bench/"))["script-src"]
    assert first != second


def test_the_swagger_page_inlines_only_nonced_code(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    _assert_inline_tags_carry_the_nonce(response)


def test_the_admin_and_bench_pages_carry_the_policy(tenants, monkeypatch):
    client = Client()
    client.force_login(tenants.pm)
    index = client.get("/admin/")
    assert index.status_code == 200
    assert "script-src 'self'" in index["Content-Security-Policy"]
    # A change list without actions, where Django inlines a <style> (templates/admin/change_list.html).
    user_admin = admin.site._registry[get_user_model()]
    monkeypatch.setattr(user_admin, "actions_on_top", False)
    monkeypatch.setattr(user_admin, "actions_on_bottom", False)
    users = client.get("/admin/auth/user/")
    assert users.status_code == 200
    assert "#changelist table thead th:first-child" in users.content.decode()
    _assert_inline_tags_carry_the_nonce(users)

    client.force_login(tenants.user_p)
    bench = client.get("/bench/")
    assert bench.status_code == 200
    _assert_inline_tags_carry_the_nonce(bench)


def test_the_lockout_page_carries_the_policy(tenants, settings):
    settings.AXES_FAILURE_LIMIT = 1
    response = Client().post("/accounts/login/", {"username": "alice", "password": "wrong"})
    assert response.status_code == 429
    _assert_no_inline_code(response)


# --- Health ---------------------------------------------------------------------------------------------


def test_healthz_says_only_ok_or_failed_and_never_where(client, settings, caplog):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "failed", "database": "ok", "redis": "failed"}
    assert b"127.0.0.1" not in response.content and b"Error" not in response.content
    # The operator still finds the reason in the log.
    assert any("127.0.0.1" in str(record.exc_info[1]) for record in caplog.records if record.exc_info)


# --- The schema and docs --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"])
def test_the_schema_and_docs_answer_404_when_not_published(client, settings, path):
    settings.WERKBANK_PUBLIC_API_DOCS = False
    assert client.get(path).status_code == 404
    pm = Client()
    pm.force_login(factories.make_pm())
    assert pm.get(path).status_code == 404  # not even to a PM: it is a deployment choice

    settings.WERKBANK_PUBLIC_API_DOCS = True
    assert client.get(path).status_code == 200
