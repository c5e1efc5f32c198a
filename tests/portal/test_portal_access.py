"""Every portal route answers 404 to whoever is no customer member (issue 26, finding 9).

The routes are read from portal/urls.py, so a page added there is covered without touching this test:
each must be wrapped by portal.views.access.customer_required, and each answers a PM, a partner member
and a user of no organization with a 404, whatever the method, and an anonymous visitor with the login
page.
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from portal import urls as portal_urls

ROUTES = [pattern for pattern in portal_urls.urlpatterns if isinstance(pattern, URLPattern)]


def _url(pattern: URLPattern) -> str:
    # Any id will do: the guard answers before the view looks anything up.
    args = {name: 1 for name in pattern.pattern.converters}
    return reverse(f"portal:{pattern.name}", kwargs=args)


def test_the_portal_has_routes_and_all_are_plain_patterns():
    assert len(ROUTES) >= 10
    assert len(ROUTES) == len(portal_urls.urlpatterns)


@pytest.mark.parametrize("pattern", ROUTES, ids=lambda pattern: pattern.name)
def test_every_route_is_guarded_by_the_one_decorator(pattern):
    assert getattr(pattern.callback, "customer_required", False), pattern.name


@pytest.mark.django_db
@pytest.mark.parametrize("pattern", ROUTES, ids=lambda pattern: pattern.name)
def test_every_route_is_a_404_to_a_pm_a_partner_and_an_outsider(tenants, pattern):
    url = _url(pattern)
    for user in (tenants.pm, tenants.user_p, tenants.outsider):
        client = Client()
        client.force_login(user)
        for method in ("get", "post"):
            response = getattr(client, method)(url)
            assert response.status_code == 404, (url, user.username, method, response.status_code)


@pytest.mark.django_db
@pytest.mark.parametrize("pattern", ROUTES, ids=lambda pattern: pattern.name)
def test_every_route_sends_an_anonymous_visitor_to_the_login_page(pattern):
    response = Client().get(_url(pattern))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")
