"""Tenant isolation over the PM's warranty report and the spares near their supplier warranty's end
(/api/v1/warranty/report/, /spares-ending/, warranty/api/report.py): both read every customer's records and
the whole stock, so only PMs see them; every member, customer or partner, the records' own customer
included, gets an empty list (the meta-test: test_isolation.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from dateutil.relativedelta import relativedelta
from django.utils import timezone

from tests.tenants_rig import api_client
from tests.warranty.report_rig import records_ending, stock, supplier
from tests.werkbank.isolation_rig import World
from tests.werkbank.isolation_rig import world as isolation_world

pytestmark = pytest.mark.django_db

world = isolation_world


def _members(w: World) -> list[Any]:
    return [w.t.user_a, *w.intruders]


def _listed_to_pms_only(url: str, make: Callable[[World], str]) -> Callable[[World], None]:
    def case(w: World) -> None:
        serial = make(w)
        assert serial in {row["serial"] for row in api_client(w.t.pm).get(url).json()["results"]}
        for user in _members(w):
            response = api_client(user).get(url)
            assert response.status_code == 200, user.username
            assert response.json()["results"] == [], user.username
            assert api_client(user).post(url, {}, format="json").status_code in (403, 405), user.username

    return case


def _record(w: World) -> str:
    records_ending(w.t.customer_a, {"ISO-REPORT-1": 12})
    return "ISO-REPORT-1"


def _spare(w: World) -> str:
    received = timezone.localdate() + timedelta(days=15) - relativedelta(months=36)
    stock(supplier("Isolation Parts GmbH", 36), {"ISO-SPARE-1": received})
    return "ISO-SPARE-1"


REPORT_CASES: dict[str, Callable[[World], None]] = {
    "warranty-report-list": _listed_to_pms_only("/api/v1/warranty/report/", _record),
    "warranty-spares-ending-list": _listed_to_pms_only("/api/v1/warranty/spares-ending/", _spare),
}


@pytest.mark.parametrize("route", sorted(REPORT_CASES))
def test_isolation(world, route):
    REPORT_CASES[route](world)
