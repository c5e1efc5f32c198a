"""One frame for every page that is not the admin (templates/base.html): the bench, burn-in, deployment, ROI,
login and logout pages, with the shared stylesheet, the menu by role, the status badges, and a logout that
works from a link too."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.deployment.rack_rig import make_rack_world

pytestmark = pytest.mark.django_db

STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)">')


def _pages(world) -> list[str]:
    server = world.server_a
    return [
        "/bench/",
        f"/bench/servers/{server.pk}/",
        f"/burnin/servers/{server.pk}/",
        f"/deployment/sites/{world.site.pk}/",
        f"/deployment/racks/{world.rack.pk}/",
        f"/deployment/servers/{server.pk}/",
        f"/pm/orders/{server.order_id}/roi/",
        "/pm/",
        f"/pm/orders/{server.order_id}/",
        "/accounts/logout/",
    ]


def _assert_framed(html: str) -> None:
    assert STYLESHEET.findall(html) == ["/static/werkbank/site.css"]  # one stylesheet, for every page
    assert '<a class="skip" href="#content">' in html and '<main id="content">' in html
    assert 'action="/i18n/setlang/"' in html  # the language switch
    assert 'class="status"' not in html  # the pages' own status pills are gone: badges only


def test_every_page_of_a_pm_is_in_the_frame_with_the_menu(tenants):
    world = make_rack_world(tenants)
    client = Client()
    client.force_login(tenants.pm)
    for path in _pages(world):
        response = client.get(path)
        assert response.status_code == 200, path
        html = response.content.decode()
        _assert_framed(html)
        assert '<nav aria-label="Main">' in html and 'href="/admin/"' in html, path
        assert '<form method="post" action="/accounts/logout/">' in html, path


def test_a_partner_and_a_customer_see_their_pages_in_the_frame(tenants):
    world = make_rack_world(tenants)
    server = world.server_a
    partner = Client()
    partner.force_login(tenants.user_p)
    for path in ("/bench/", f"/bench/servers/{server.pk}/", f"/burnin/servers/{server.pk}/"):
        html = partner.get(path).content.decode()
        _assert_framed(html)
        assert 'href="/admin/"' not in html  # the menu is the partner's
        assert '<a href="/bench/"' in html
    customer = Client()
    customer.force_login(tenants.user_a)
    for path in (f"/deployment/racks/{world.rack.pk}/", f"/deployment/servers/{server.pk}/"):
        html = customer.get(path).content.decode()
        _assert_framed(html)
        assert 'href="/bench/"' not in html and 'href="/admin/"' not in html


def test_statuses_are_badges_with_a_symbol_and_the_word(tenants):
    world = make_rack_world(tenants)
    client = Client()
    client.force_login(tenants.pm)
    passed = (
        '<span class="badge badge-ok" data-status="burn_in_passed"><span aria-hidden="true">✓</span> '
        "Burn-in passed</span>"
    )
    for path in (
        "/bench/",
        f"/bench/servers/{world.server_a.pk}/",
        f"/deployment/racks/{world.rack.pk}/",
        f"/deployment/servers/{world.server_a.pk}/",
    ):
        assert passed in client.get(path).content.decode(), path


def test_the_login_page_is_in_the_frame_without_a_menu(client):
    html = client.get("/accounts/login/").content.decode()
    _assert_framed(html)
    assert "<nav" not in html and 'action="/accounts/logout/"' not in html
    assert "<title>Log in · Werkbank</title>" in html


def test_the_frame_costs_no_query(tenants, django_assert_num_queries):
    client = Client()
    client.force_login(tenants.user_p)
    with django_assert_num_queries(2):  # the session and the user; the menu's roles are in the session
        response = client.get("/accounts/logout/")
    assert '<a href="/bench/"' in response.content.decode()


# --- Logout ----------------------------------------------------------------------------------------------


def test_get_logout_asks_with_a_post_button_and_logs_nobody_out(client, tenants):
    client.force_login(tenants.user_p)
    response = client.get("/accounts/logout/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<form method="post" action="/accounts/logout/" id="logout-form">' in html
    assert "You are logged in as petr." in html
    assert '<button type="submit" class="wide">Log out</button>' in html
    assert client.session["_auth_user_id"] == str(tenants.user_p.pk)


def test_post_logout_lands_on_the_login_page_saying_so(client, tenants):
    client.force_login(tenants.user_p)
    response = client.post("/accounts/logout/", follow=True)
    assert response.redirect_chain == [("/accounts/login/", 302)]
    html = response.content.decode()
    assert '<li class="success">You are logged out.</li>' in html
    assert "_auth_user_id" not in client.session
    assert client.get("/bench/").status_code == 302  # the bench asks for a login again


def test_get_logout_when_logged_out_goes_to_the_login_page(client):
    response = client.get("/accounts/logout/")
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"


def test_logout_needs_the_csrf_token(tenants):
    client = Client(enforce_csrf_checks=True)
    client.force_login(tenants.user_p)
    assert client.post("/accounts/logout/").status_code == 403
    assert client.session["_auth_user_id"] == str(tenants.user_p.pk)


def test_the_logout_button_on_a_page_posts_with_its_token(tenants):
    client = Client(enforce_csrf_checks=True)
    client.force_login(tenants.user_p)
    html = client.get("/bench/").content.decode()
    token = re.search(
        r'<form method="post" action="/accounts/logout/"><input type="hidden" name="csrfmiddlewaretoken" '
        r'value="([^"]+)">',
        html,
    ).group(1)
    response = client.post("/accounts/logout/", {"csrfmiddlewaretoken": token})
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert "_auth_user_id" not in client.session
