"""The frame's navigation by role (werkbank/navigation.py): the entries this branch provides resolve, and a
customer's menu leads to them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests import factories
from werkbank.navigation import ENTRIES, menu, search_url

pytestmark = pytest.mark.django_db

#: The entries whose pages exist here (the lead adds the others as their pages land).
PROVIDED = {"pm:pipeline", "admin:index", "bench:list", "portal:orders", "portal:tokens"}


def test_the_provided_entries_resolve():
    names = {name for _, _, name in ENTRIES}
    assert names >= PROVIDED
    for name in PROVIDED:
        assert reverse(name)


def test_a_customers_menu_leads_to_its_orders_and_tokens():
    links = {link["name"]: link["url"] for link in menu({"customer"})}
    assert links["portal:orders"] == "/portal/" and links["portal:tokens"] == "/portal/tokens/"


def test_a_customer_sees_the_menu_in_the_frame_after_login(client, tenants):
    response = client.post("/accounts/login/", {"username": "alice", "password": factories.PASSWORD})
    assert response.status_code == 302
    page = client.get("/portal/").content.decode()
    assert '<a href="/portal/" aria-current="page">Orders</a>' in page
    assert '<a href="/portal/tokens/">API tokens</a>' in page


def test_a_pms_menu_starts_with_the_pipeline():
    links = menu({"pm"})
    assert links[0] == {"label": "Pipeline", "url": "/pm/", "name": "pm:pipeline"}
    assert [link["name"] for link in links][:2] == ["pm:pipeline", "admin:index"]


def test_pms_and_partners_get_the_search_box_customers_do_not():
    assert search_url({"pm"}) == search_url({"partner"}) == reverse("pm:search")
    assert search_url({"customer"}) is None and search_url(set()) is None
