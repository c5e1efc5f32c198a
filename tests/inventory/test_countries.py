"""Countries are ISO 3166-1 alpha-2 codes that exist (issue 26, finding 11): `XX` was a valid site.

One list (inventory.countries, from Babel's CLDR data) checks suppliers, lot origins and sites.
"""

from __future__ import annotations

import pytest

from inventory.countries import is_country, iso_3166_alpha2
from inventory.eu import EU_MEMBER_STATES
from tests.tenants_rig import api_client

SITE = {"name": "Nowhere Colo", "kind": "colocation", "operator": "O", "address": "A"}


def test_the_list_is_iso_3166_1s_249_assigned_codes():
    codes = iso_3166_alpha2()
    assert len(codes) == 249  # ISO 3166-1 as of 2024; CLDR regions and reserved codes are not in it
    assert {"DE", "BG", "GR", "TW", "US", "CH", "GB", "SS", "AQ"} <= codes
    assert not codes & {"XX", "EU", "UN", "ZZ", "XK", "UK", "EL", "001"}
    assert codes >= EU_MEMBER_STATES
    assert is_country("DE") and not is_country("XX") and not is_country("de")


@pytest.mark.django_db
@pytest.mark.parametrize("country", ["XX", "EU", "ZZ", "uk"])
def test_a_site_in_no_country_is_a_400(tenants, country):
    response = api_client(tenants.pm).post("/api/v1/sites/", {**SITE, "country": country}, format="json")
    assert response.status_code == 400, response.content
    assert "ISO 3166-1 alpha-2" in response.json()["country"][0]


@pytest.mark.django_db
def test_a_site_in_greece_may_be_given_the_eus_code(tenants):
    response = api_client(tenants.pm).post("/api/v1/sites/", {**SITE, "country": "el"}, format="json")
    assert response.status_code == 201, response.content
    assert (response.json()["country"], response.json()["eu"]) == ("GR", True)


@pytest.mark.django_db
def test_a_supplier_in_no_country_is_a_400(tenants):
    body = {"name": "Nowhere Parts", "country": "XX"}
    response = api_client(tenants.pm).post("/api/v1/inventory/suppliers/", body, format="json")
    assert response.status_code == 400, response.content
    assert "ISO 3166" in response.json()["country"][0]
