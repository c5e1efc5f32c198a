"""The language of the pages: a member of a German organization gets German pages after login, the switch
(POST /i18n/setlang/) turns them to English, PMs keep the site default, and the API speaks English to all
(werkbank/i18n.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client

from tests import factories
from werkbank.i18n import SESSION_LANGUAGE

pytestmark = pytest.mark.django_db


def _log_in(user, **headers: str) -> Client:
    """A real login through the login page, as the browser does it (the login signal fills the session)."""
    client = Client(**headers)
    response = client.post("/accounts/login/", {"username": user.username, "password": factories.PASSWORD})
    assert response.status_code == 302, response.content.decode()
    return client


@pytest.fixture
def german_partner(tenants):
    tenants.partner_p.language = "de"
    tenants.partner_p.save(update_fields=["language"])
    return tenants.user_p


def test_a_member_of_a_german_organization_sees_the_pages_in_german(german_partner):
    client = _log_in(german_partner)
    assert client.session[SESSION_LANGUAGE] == "de"
    response = client.get("/bench/")
    html = response.content.decode()
    assert response["Content-Language"] == "de"
    assert '<html lang="de">' in html
    assert ">Abmelden</button>" in html and ">Montageplatz</a>" in html
    assert "Zum Inhalt springen" in html
    assert ">Log out</button>" not in html


def test_the_switch_turns_the_pages_to_english_and_back(german_partner):
    client = _log_in(german_partner)
    response = client.post("/i18n/setlang/", {"language": "en", "next": "/bench/"})
    assert response.status_code == 302 and response["Location"] == "/bench/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "en"
    html = client.get("/bench/").content.decode()
    assert '<html lang="en">' in html and ">Log out</button>" in html and "Abmelden" not in html
    # The organization's language stays in the session: the cookie wins over it, in either direction.
    assert client.session[SESSION_LANGUAGE] == "de"
    client.post("/i18n/setlang/", {"language": "de", "next": "/bench/"})
    assert '<html lang="de">' in client.get("/bench/").content.decode()


def test_the_switch_on_the_page_posts_to_set_language_with_the_page_to_return_to(german_partner):
    html = _log_in(german_partner).get("/bench/?page=1").content.decode()
    assert '<form method="post" action="/i18n/setlang/" class="language">' in html
    assert '<input type="hidden" name="next" value="/bench/?page=1">' in html
    assert '<option value="de" selected lang="de">Deutsch</option>' in html


def test_an_english_organization_keeps_english(tenants):
    client = _log_in(tenants.user_p)
    assert client.session[SESSION_LANGUAGE] == "en"
    assert '<html lang="en">' in client.get("/bench/").content.decode()


def test_a_pm_gets_the_default_language(tenants, german_partner):
    # The PM is no member of the German partner; a PM's pages are in the site's language.
    client = _log_in(tenants.pm)
    assert SESSION_LANGUAGE not in client.session
    response = client.get("/bench/")
    assert response["Content-Language"] == settings.LANGUAGE_CODE == "en"
    assert '<html lang="en">' in response.content.decode()


def test_the_api_stays_english_for_a_german_member(german_partner):
    client = _log_in(german_partner)
    response = client.get("/api/v1/servers/999999/")
    assert response.status_code == 404
    assert response["Content-Language"] == "en"
    assert response.json()["detail"] == "Not found."  # in German it would be "Nicht gefunden."
    # The same member's pages, in the same session, are German.
    assert client.get("/bench/")["Content-Language"] == "de"


def test_the_login_page_speaks_the_browser_language_before_login(client):
    html = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert '<html lang="de">' in html
    assert "<h1>Anmelden</h1>" in html and "Benutzername" in html and "Passwort" in html


def test_a_german_member_who_logs_out_lands_on_a_german_login_page(german_partner):
    client = _log_in(german_partner)
    response = client.post("/accounts/logout/", follow=True)
    html = response.content.decode()
    assert response.redirect_chain == [("/accounts/login/", 302)]
    assert '<html lang="de">' in html and "Sie sind abgemeldet." in html
    assert "_auth_user_id" not in client.session


def test_the_lockout_speaks_german_on_the_page_and_english_on_the_api(tenants, settings):
    from axes.utils import reset as axes_reset
    from rest_framework.test import APIClient

    settings.AXES_FAILURE_LIMIT = 1
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    axes_reset()
    try:
        wrong = {"username": "petr", "password": "wrong"}
        page = Client().post("/accounts/login/", wrong, HTTP_ACCEPT_LANGUAGE="de")
        assert page.status_code == 429
        html = page.content.decode()
        assert "<h1>Anmeldung gesperrt</h1>" in html
        assert "1 fehlgeschlagene Anmeldungen für einen Benutzernamen von einer Client-Adresse" in html
        assert "15 Minuten" in html and "Versuchen Sie es in 900 Sekunden wieder." in html
        api = APIClient().post("/api/v1/auth/login/", wrong, format="json", HTTP_ACCEPT_LANGUAGE="de")
        assert api.status_code == 429
        assert api.json()["rule"].startswith("1 failed logins for one username from one client address")
    finally:
        axes_reset()
