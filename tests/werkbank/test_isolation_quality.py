"""Tenant isolation over the fleet's quality routes (/api/v1/quality/..., pm/api): the rates read every
customer's failures and every supplier's lots, so only PMs see them; every member, customer or partner,
the servers' own included, gets an empty list and a 404 for a row (the meta-test: test_isolation.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.pm import quality_rig
from tests.tenants_rig import api_client
from tests.werkbank.isolation_rig import World, _assert_404
from tests.werkbank.isolation_rig import world as isolation_world

pytestmark = pytest.mark.django_db

world = isolation_world

#: Route name stem → URL segment.
KINDS = {"lot": "lots", "supplier": "suppliers", "part": "parts", "position": "positions"}


def _fleet(w: World) -> tuple[Any, dict[str, str]]:
    """Customer A's servers built by partner P, with a GPU and a connector that failed; each table's key."""
    fleet = quality_rig.fleet(servers=2, lots={"L-ISO": 2}, customer=w.t.customer_a)
    fleet.order.servers.update(partner=w.t.partner_p)
    quality_rig.fail(fleet.servers[0], component=fleet.gpus[0], stage="claim")
    quality_rig.fail(fleet.servers[1], connector="PCIe-2", stage="bench")
    keys = {
        "lots": fleet.lot_key("L-ISO"),
        "suppliers": fleet.supplier_key(),
        "parts": str(fleet.part.pk),
        "positions": fleet.position_key("PCIe-2"),
    }
    return fleet, keys


def _members(w: World) -> list[Any]:
    """Even the servers' customer A and partner P: the rates are purchasing's, across every customer."""
    return [w.t.user_a, *w.intruders]


def _list(segment: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        _, keys = _fleet(w)
        url = f"/api/v1/quality/{segment}/"
        rows = api_client(w.t.pm).get(url).json()["results"]
        assert keys[segment] in {row["key"] for row in rows}
        for user in _members(w):
            response = api_client(user).get(url)
            assert response.status_code == 200, user.username
            assert response.json()["results"] == [], user.username
            assert api_client(user).post(url, {}, format="json").status_code in (403, 405), user.username

    return case


def _detail(segment: str) -> Callable[[World], None]:
    def case(w: World) -> None:
        _, keys = _fleet(w)
        url = f"/api/v1/quality/{segment}/{keys[segment]}/"
        assert api_client(w.t.pm).get(url).status_code == 200
        _assert_404(_members(w), "get", url)

    return case


QUALITY_CASES: dict[str, Callable[[World], None]] = {
    **{f"quality-{stem}-list": _list(segment) for stem, segment in KINDS.items()},
    **{f"quality-{stem}-detail": _detail(segment) for stem, segment in KINDS.items()},
}


@pytest.mark.parametrize("route", sorted(QUALITY_CASES))
def test_isolation(world, route):
    QUALITY_CASES[route](world)
