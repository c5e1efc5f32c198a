"""The portal tests' world: customer A's orders, built by partner P, in burn-in and in a rack, with the
builder's internal notes, reasons, purchase orders and usernames on every row (the API audience test's
world, reused), plus a blacklisted connector with the partner's internal evidence.

The `portal_world` fixture lives here beside the evidence text it plants; tests/portal/conftest.py registers
it (and the audience world it stands on) for this folder, and other folders import both from here.
"""

from __future__ import annotations

import pytest

from builds.services import connector_blacklist
from tests.werkbank.audience_rig import World
from tests.werkbank.audience_rig import world as audience_world  # noqa: F401 - a fixture, for portal_world

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
