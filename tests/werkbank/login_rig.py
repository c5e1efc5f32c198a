"""Login attempts for the lockout tests: one fresh client per attempt, from a chosen address."""

from __future__ import annotations

from django.test import Client
from rest_framework.test import APIClient

WRONG = "not-the-password-9f3k"
#: The failure limit the lockout tests count against (the `known_lockout` fixture sets it).
LOCKOUT_LIMIT = 5

# (path, username) for each login; the admin's login takes staff only.
PATHS = {
    "api": ("/api/v1/auth/login/", "alice"),
    "accounts": ("/accounts/login/", "alice"),
    "admin": ("/admin/login/", "pm"),
}


def post_login(path: str, username: str, password: str, **headers: str):
    """One login attempt on `path`, as a fresh client (no cookie ties the attempts together).

    ``REMOTE_ADDR="…"`` in `headers` sets the socket address the attempt comes from."""
    if path.startswith("/api/"):
        return APIClient().post(path, {"username": username, "password": password}, format="json", **headers)
    return Client().post(path, {"username": username, "password": password}, **headers)


def logged_in(path: str, response) -> bool:
    if path.startswith("/api/"):
        return response.status_code == 200 and "token" in response.json()
    return response.status_code == 302 and "sessionid" in response.cookies


def fail(path: str, username: str, address: str, times: int) -> list[int]:
    """`times` wrong passwords for `username` from `address`; the status of each answer."""
    return [post_login(path, username, WRONG, REMOTE_ADDR=address).status_code for _ in range(times)]
