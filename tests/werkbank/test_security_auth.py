"""Logins: one lockout across processes and all three login paths, an audit row for each login, failed
login and logout, and a cap on API tokens per user (issue #16, defects 1, 9 and 13). The lockout's rules
against locking out users: test_security_lockout.py."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from tests import factories
from tests.werkbank.login_rig import LOCKOUT_LIMIT, PATHS, WRONG
from tests.werkbank.login_rig import logged_in as _logged_in
from tests.werkbank.login_rig import post_login as _post
from werkbank.models import AuditEvent

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("known_lockout")]

LIMIT = LOCKOUT_LIMIT


def _assert_locked_answer(path: str, response) -> None:
    assert response.status_code == 429, (path, response.status_code)
    if path.startswith("/api/"):
        body = response.json()
        assert body["code"] == "login_locked_out"
        assert f"{LIMIT} failed logins" in body["rule"] and "15 minutes" in body["rule"]
    else:
        assert response["Content-Type"].startswith("text/html")
        page = response.content.decode()
        assert "Login locked" in page and f"{LIMIT} failed logins" in page


@pytest.mark.parametrize("which", sorted(PATHS))
def test_fifty_wrong_passwords_with_a_new_forwarded_for_each_are_locked_out_at_the_limit(tenants, which):
    path, username = PATHS[which]
    statuses = []
    for attempt in range(50):
        response = _post(path, username, WRONG, HTTP_X_FORWARDED_FOR=f"203.0.113.{attempt + 1}")
        assert not _logged_in(path, response)
        statuses.append(response.status_code)
    refused_plainly = 400 if which == "api" else 200  # the API's 400, the login form shown again
    assert statuses[: LIMIT - 1] == [refused_plainly] * (LIMIT - 1)
    assert statuses[LIMIT - 1 :] == [429] * (50 - LIMIT + 1)
    _assert_locked_answer(path, response)

    # While locked, the right password is refused too.
    response = _post(path, username, factories.PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.99")
    _assert_locked_answer(path, response)
    assert not _logged_in(path, response)


@pytest.mark.parametrize("which", sorted(PATHS))
def test_the_limit_is_one_across_the_three_paths(tenants, which):
    """Failures on the other two logins count toward this one's lock."""
    path, username = PATHS[which]
    others = [PATHS[name][0] for name in sorted(PATHS) if name != which]
    for attempt in range(LIMIT):
        _post(others[attempt % 2], username, WRONG)
    _assert_locked_answer(path, _post(path, username, factories.PASSWORD))


def test_without_a_trusted_proxy_the_forwarded_for_header_is_ignored(tenants):
    """One username from one socket address: locked there, whatever X-Forwarded-For says."""
    for attempt in range(LIMIT):
        _post("/api/v1/auth/login/", "alice", WRONG, HTTP_X_FORWARDED_FOR=f"203.0.113.{attempt}")
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"127.0.0.1"}
    response = _post("/api/v1/auth/login/", "alice", factories.PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.1")
    _assert_locked_answer("/api/v1/auth/login/", response)
    # bob never failed: the address's five failures are far below its own limit.
    assert _logged_in("/api/v1/auth/login/", _post("/api/v1/auth/login/", "bob", factories.PASSWORD))


def test_behind_one_trusted_proxy_the_forwarded_address_is_counted(tenants, settings):
    settings.WERKBANK_TRUSTED_PROXY_COUNT = 1
    for attempt in range(LIMIT):
        # The proxy appends the address it saw; whatever the client wrote before it is not trusted.
        _post("/accounts/login/", "petr", WRONG, HTTP_X_FORWARDED_FOR=f"192.0.2.{attempt}, 198.51.100.7")
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"198.51.100.7"}

    # petr from another client behind the same proxy is not locked; petr at the failing one is.
    assert _logged_in(
        "/accounts/login/",
        _post("/accounts/login/", "petr", factories.PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.8"),
    )
    response = _post("/accounts/login/", "petr", factories.PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.7")
    _assert_locked_answer("/accounts/login/", response)


def test_the_lock_ends_after_the_cool_off(tenants):
    for _ in range(LIMIT):
        _post("/api/v1/auth/login/", "alice", WRONG)
    _assert_locked_answer("/api/v1/auth/login/", _post("/api/v1/auth/login/", "alice", factories.PASSWORD))
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=16))
    assert _logged_in("/api/v1/auth/login/", _post("/api/v1/auth/login/", "alice", factories.PASSWORD))


def test_a_success_before_the_limit_starts_the_count_again(tenants):
    address = {"REMOTE_ADDR": "198.51.100.20"}
    for _ in range(LIMIT - 1):
        _post("/accounts/login/", "alice", WRONG, **address)
    assert _logged_in("/accounts/login/", _post("/accounts/login/", "alice", factories.PASSWORD, **address))
    for _ in range(LIMIT - 1):
        response = _post("/accounts/login/", "alice", WRONG, **address)
    assert response.status_code == 200  # 4 more failures: still below the limit


# --- Audit --------------------------------------------------------------------------------------------


def _events(verb: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(verb=verb).order_by("pk"))


def _no_password_stored() -> None:
    stored = json.dumps(
        list(AuditEvent.objects.values("verb", "object_id", "object_repr", "before", "after", "note")),
        default=str,
    )
    assert WRONG not in stored and factories.PASSWORD not in stored
    assert not AccessAttempt.objects.filter(post_data__contains=WRONG).exists()


@pytest.mark.parametrize("which", sorted(PATHS))
def test_a_failed_login_leaves_an_audit_row_without_the_password(tenants, which):
    path, username = PATHS[which]
    _post(path, username, WRONG, REMOTE_ADDR="198.51.100.30")
    _post(path, "no-such-user", WRONG, REMOTE_ADDR="198.51.100.30")
    known, unknown = _events("login_failed")
    user = get_user_model().objects.get(username=username)
    assert (known.actor, known.object_id, known.object_repr) == (None, str(user.pk), username)
    assert known.after == {"path": path, "ip": "198.51.100.30", "username": username, "locked_out": False}
    assert (unknown.actor, unknown.object_id, unknown.object_repr) == (None, "", "no-such-user")
    _no_password_stored()


def test_a_refused_login_while_locked_is_audited_as_locked_out(tenants):
    for _ in range(LIMIT + 1):
        _post("/accounts/login/", "alice", WRONG)
    flags = [event.after["locked_out"] for event in _events("login_failed")]
    assert flags == [False] * (LIMIT - 1) + [True, True]


def test_api_login_and_logouts_are_audited(tenants):
    user = tenants.user_a
    client = APIClient()
    for _ in range(2):
        response = client.post(
            "/api/v1/auth/login/", {"username": "alice", "password": factories.PASSWORD}, format="json"
        )
        assert response.status_code == 200
    [login, _] = _events("login")
    assert (login.actor, login.object_id) == (user, str(user.pk))
    assert login.after == {"path": "/api/v1/auth/login/", "ip": "127.0.0.1"}

    client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
    assert client.post("/api/v1/auth/logout/").status_code == 204
    [logout] = _events("logout")
    assert (logout.actor, logout.after["path"]) == (user, "/api/v1/auth/logout/")

    token = client.post(
        "/api/v1/auth/login/", {"username": "alice", "password": factories.PASSWORD}, format="json"
    ).json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.post("/api/v1/auth/logoutall/").status_code == 204
    assert [event.after["path"] for event in _events("logout")] == [
        "/api/v1/auth/logout/",
        "/api/v1/auth/logoutall/",
    ]
    _no_password_stored()


@pytest.mark.parametrize(
    ("login_path", "logout_path", "username"),
    [("/accounts/login/", "/accounts/logout/", "alice"), ("/admin/login/", "/admin/logout/", "pm")],
)
def test_html_login_and_logout_are_audited(tenants, login_path, logout_path, username):
    client = Client()
    response = client.post(login_path, {"username": username, "password": factories.PASSWORD})
    assert response.status_code == 302
    user = get_user_model().objects.get(username=username)
    [login] = _events("login")
    assert (login.actor, login.object_id, login.after["path"]) == (user, str(user.pk), login_path)

    assert client.post(logout_path).status_code in {200, 302}
    [logout] = _events("logout")
    assert (logout.actor, logout.after["path"]) == (user, logout_path)
    _no_password_stored()


# --- Tokens per user ----------------------------------------------------------------------------------


def test_tokens_per_user_are_capped_with_a_clear_409(tenants, settings):
    from knox.settings import knox_settings

    assert knox_settings.TOKEN_LIMIT_PER_USER == 10  # the shipped cap
    client = APIClient()
    credentials = {"username": "alice", "password": factories.PASSWORD}
    tokens = [
        client.post("/api/v1/auth/login/", credentials, format="json").json()["token"] for _ in range(10)
    ]
    response = client.post("/api/v1/auth/login/", credentials, format="json")
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "token_limit"
    assert "10 live API tokens" in body["detail"]
    assert "token" not in body
    assert tenants.user_a.auth_token_set.count() == 10

    # Revoking one makes room for one.
    client.credentials(HTTP_AUTHORIZATION=f"Token {tokens[0]}")
    assert client.post("/api/v1/auth/logout/").status_code == 204
    client.credentials()
    assert client.post("/api/v1/auth/login/", credentials, format="json").status_code == 200


def test_a_login_without_an_http_request_is_neither_audited_nor_counted(tenants):
    """The test client's login() and force_login() (and a shell) send no request a client made."""
    client = Client()
    assert client.login(username="alice", password=factories.PASSWORD)
    client.force_login(tenants.pm)
    assert not client.login(username="alice", password=WRONG)
    assert not AuditEvent.objects.filter(verb__in=["login", "login_failed", "logout"]).exists()
    assert not AccessAttempt.objects.exists()
