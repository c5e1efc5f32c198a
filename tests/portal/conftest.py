"""The portal tests' world: customer A's orders, built by partner P, in burn-in and in a rack, with the
builder's internal notes, reasons, purchase orders and usernames on every row (the API audience test's
world, reused), plus a blacklisted connector with the partner's internal evidence."""

from __future__ import annotations

from typing import Any

import pytest

from builds.services import connector_blacklist
from tests.werkbank.test_audiences import World
from tests.werkbank.test_audiences import world as audience_world  # noqa: F401 - a fixture

#: Texts the builder keeps to itself; no portal page may show them to a customer.
BLACKLIST_EVIDENCE = "Internal: Petr says the riser was bent by the courier"


@pytest.fixture
def portal_world(request: pytest.FixtureRequest) -> World:
    w: World = request.getfixturevalue("audience_world")
    connector_blacklist(
        actor=w.t.user_p,
        connector=w.builds.connector,
        reason="PCIe link trains at x8 only",
        evidence=BLACKLIST_EVIDENCE,
    )
    return w


def portal_get(client: Any, user: Any, url: str) -> Any:
    client.force_login(user)
    return client.get(url)
