"""The tenants of the isolation tests and an API client for any of their users.

The `tenants` fixture (tests/conftest.py) builds a `Tenants`; test modules import the type and
`api_client` from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rest_framework.test import APIClient


@dataclass
class Tenants:
    """Customer A and B, partner P and Q, a PM and a user with no membership."""

    pm: Any
    customer_a: Any
    customer_b: Any
    partner_p: Any
    partner_q: Any
    user_a: Any
    user_b: Any
    user_p: Any
    user_q: Any
    outsider: Any


def api_client(user: Any | None) -> APIClient:
    """An API client authenticated as `user`, or anonymous for None."""
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client
