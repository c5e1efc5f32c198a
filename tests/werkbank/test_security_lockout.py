"""The login lockout cannot be turned against users (issue #26, finding 3): failures lock a username only
at the address they came from, an address only past a higher limit, and a username alone only slows down
the addresses that failed for it. A correct password from an address that has not failed always works."""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings as django_settings

from tests import factories
from tests.werkbank.login_rig import LOCKOUT_LIMIT, PATHS, WRONG, fail, logged_in, post_login

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("known_lockout")]

LIMIT = LOCKOUT_LIMIT
A, B, C = "198.51.100.1", "198.51.100.2", "198.51.100.3"


def _plain(path: str) -> int:
    """A wrong password's answer below every limit: the API's 400, the login form shown again."""
    return 400 if path.startswith("/api/") else 200


def _assert_refused(response, reason: str) -> int:
    """A lockout answer for `reason`; the seconds its Retry-After names."""
    assert response.status_code == 429, response.status_code
    retry_after = int(response["Retry-After"])
    assert retry_after >= 1
    if response["Content-Type"].startswith("application/json"):
        body = response.json()
        assert (body["code"], body["reason"]) == ("login_locked_out", reason)
        assert body["retry_after_seconds"] == retry_after
    return retry_after


def _age_failures(seconds: float) -> None:
    """Move every recorded failure `seconds` into the past."""
    for attempt in AccessAttempt.objects.all():
        attempt.attempt_time -= timedelta(seconds=seconds)
        attempt.save(update_fields=["attempt_time"])


@pytest.mark.parametrize("failures", [LIMIT, 20])
@pytest.mark.parametrize("which", sorted(PATHS))
def test_failures_from_one_address_do_not_lock_the_username_at_another(tenants, which, failures):
    """The DoS case: strangers at A who know the username cannot keep its owner at B out."""
    path, username = PATHS[which]
    fail(path, username, A, failures)
    assert logged_in(path, post_login(path, username, factories.PASSWORD, REMOTE_ADDR=B))


@pytest.mark.parametrize("which", sorted(PATHS))
def test_the_username_is_locked_at_the_address_that_failed(tenants, which):
    path, username = PATHS[which]
    assert fail(path, username, A, LIMIT) == [_plain(path)] * (LIMIT - 1) + [429]
    retry_after = _assert_refused(
        post_login(path, username, factories.PASSWORD, REMOTE_ADDR=A), "username_at_address"
    )
    assert 14 * 60 < retry_after <= 15 * 60
    # Only that pair: the same username elsewhere, and other usernames at A, log in.
    assert logged_in(path, post_login(path, username, factories.PASSWORD, REMOTE_ADDR=B))
    other = "petr" if username != "petr" else "alice"
    if which != "admin":  # the admin's login takes staff only
        assert logged_in(path, post_login(path, other, factories.PASSWORD, REMOTE_ADDR=A))


def test_a_shared_address_does_not_lock_its_users_below_the_address_limit(tenants):
    """Behind one proxy, one client failing for many usernames does not keep the others out."""
    path = "/accounts/login/"
    for number in range(10):
        fail(path, f"nobody{number}", A, LIMIT - 1)
    fail(path, "alice", A, LIMIT - 1)  # 44 failures from A in all
    assert logged_in(path, post_login(path, "bob", factories.PASSWORD, REMOTE_ADDR=A))
    assert logged_in(path, post_login(path, "alice", factories.PASSWORD, REMOTE_ADDR=A))


@pytest.mark.parametrize("which", sorted(PATHS))
def test_an_address_is_locked_for_everyone_past_the_address_limit(tenants, which):
    path, username = PATHS[which]
    address_limit = django_settings.WERKBANK_LOGIN_ADDRESS_FAILURE_LIMIT
    assert address_limit == 50  # the shipped limit
    statuses = [fail(path, f"nobody{number}", A, 1)[0] for number in range(address_limit)]
    assert statuses == [_plain(path)] * (address_limit - 1) + [429]
    # Every username at A is refused, the right password included; A's neighbours are not.
    _assert_refused(post_login(path, username, factories.PASSWORD, REMOTE_ADDR=A), "address")
    assert logged_in(path, post_login(path, username, factories.PASSWORD, REMOTE_ADDR=B))
    # The lock ends a cool-off after the address's last failure.
    _age_failures(15 * 60 + 1)
    assert logged_in(path, post_login(path, username, factories.PASSWORD, REMOTE_ADDR=A))


def test_failures_for_a_username_across_addresses_slow_down_the_addresses_that_failed(tenants):
    path = "/api/v1/auth/login/"
    addresses = [f"203.0.113.{number}" for number in range(1, 21)]
    statuses = [fail(path, "pm", address, 1)[0] for address in addresses[:LIMIT]]
    assert statuses == [400] * (LIMIT - 1) + [429]  # from the limit on, a failure answers with a delay
    assert AccessAttempt.objects.count() == LIMIT  # no address reached any lock of its own

    # An address that failed waits, the right password included; an address that has not failed does not.
    assert (
        _assert_refused(
            post_login(path, "pm", factories.PASSWORD, REMOTE_ADDR=addresses[0]), "username_delay"
        )
        == 1
    )
    assert logged_in(path, post_login(path, "pm", factories.PASSWORD, REMOTE_ADDR=B))

    # The delay doubles with each further failure, up to its cap.
    delays = []
    for address in addresses[LIMIT:]:
        delays.append(_assert_refused(post_login(path, "pm", WRONG, REMOTE_ADDR=address), "username_delay"))
    cap = django_settings.WERKBANK_LOGIN_USERNAME_DELAY_MAX_SECONDS
    assert delays == [min(2**step, cap) for step in range(1, len(delays) + 1)]

    # Once its wait has passed, an address that failed may try again.
    _age_failures(cap + 1)
    assert logged_in(path, post_login(path, "pm", factories.PASSWORD, REMOTE_ADDR=addresses[0]))


def test_a_refused_attempt_is_not_a_failure(tenants):
    """The owner's typo at B during an attack from many addresses costs a short wait, never a lock: the
    attempts refused while waiting were never checked and do not count toward the pair's limit."""
    path = "/accounts/login/"
    fail(path, "alice", B, 1)  # the owner's typo
    for number in range(1, 11):
        fail(path, "alice", f"203.0.113.{number}", 1)
    for _ in range(2 * LIMIT):
        _assert_refused(post_login(path, "alice", factories.PASSWORD, REMOTE_ADDR=B), "username_delay")
    _age_failures(django_settings.WERKBANK_LOGIN_USERNAME_DELAY_MAX_SECONDS + 1)
    assert logged_in(path, post_login(path, "alice", factories.PASSWORD, REMOTE_ADDR=B))


def test_a_success_resets_only_its_own_pair(tenants):
    """An attacker who holds an account cannot wipe the failures counted against another user at A."""
    path = "/api/v1/auth/login/"
    fail(path, "pm", A, LIMIT - 1)
    assert logged_in(path, post_login(path, "alice", factories.PASSWORD, REMOTE_ADDR=A))
    assert fail(path, "pm", A, 1) == [429]


def test_the_right_password_from_an_address_that_has_not_failed_always_works(tenants):
    """Every rule at once against pm: the pair at A locked, address C locked, pm failing across addresses."""
    path = "/admin/login/"
    fail(path, "pm", A, LIMIT)
    for number in range(50):
        fail(path, f"nobody{number}", C, 1)
    for number in range(1, 31):
        fail(path, "pm", f"203.0.113.{number}", 1)
    assert logged_in(path, post_login(path, "pm", factories.PASSWORD, REMOTE_ADDR=B))
