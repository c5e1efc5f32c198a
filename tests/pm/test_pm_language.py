"""The PM's pages speak the page's language down to the rule sentences (what blocks an order or a server),
while the API answers the same checks in English, and a sentence that is stored stays English."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from builds.models import Server
from orders.choices import OrderStatus
from orders.models import Order
from tests import factories
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _german(user: Any) -> Client:
    """A client of `user` whose language cookie (the frame's switch) chose German."""
    client = Client()
    client.force_login(user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"
    return client


@pytest.fixture
def blocked(tenants) -> Order:
    """An order in assembly whose burn-in is blocked: server 01 is assembling, server 02 is planned and has
    no assembly partner yet."""
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ASSEMBLY, server_count=2)
    first, second = factories.make_servers(order)
    Server.objects.filter(pk=first.pk).update(status="assembling", partner=tenants.partner_p)
    Server.objects.filter(pk=second.pk).update(partner=None)
    return order


def _hostname(order: Order, sequence: int) -> str:
    return Server.objects.get(order=order, sequence=sequence).hostname


@pytest.mark.parametrize("page", ["order", "pipeline"])
def test_a_german_page_says_what_blocks_in_german(tenants, blocked, page):
    url = f"/pm/orders/{blocked.pk}/" if page == "order" else "/pm/"
    response = _german(tenants.pm).get(url)
    assert response.status_code == 200 and response["Content-Language"] == "de"
    html = response.content.decode()

    # The order's gate (builds), with the server status's German label.
    assert (
        f"Server {_hostname(blocked, 1)} ist im Status „In Montage“; er muss zuerst montiert werden." in html
    )
    assert "it must be assembled first" not in html
    # The planned server's own next step (builds.gates.assembly_start_missing).
    assert "ein zugewiesener Montagepartner" in html
    assert "an assigned assembly partner" not in html


def test_the_same_page_in_english_keeps_the_english_sentences(tenants, blocked):
    client = Client()
    client.force_login(tenants.pm)
    html = client.get(f"/pm/orders/{blocked.pk}/").content.decode()
    assert f"Server {_hostname(blocked, 1)} is assembling; it must be assembled first." in html
    assert "an assigned assembly partner" in html


def test_the_api_answers_the_checks_in_english_under_a_german_cookie(tenants, blocked):
    client = api_client(tenants.pm)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "de"
    sentence = f"Server {_hostname(blocked, 1)} is assembling; it must be assembled first."

    checks = client.get(f"/api/v1/orders/{blocked.pk}/transition-checks/", HTTP_ACCEPT_LANGUAGE="de")
    assert checks.status_code == 200 and checks["Content-Language"] == "en"
    burn_in = next(entry for entry in checks.json()["transitions"] if entry["action"] == "start_burn_in")
    assert burn_in["missing"][0] == sentence

    refused = client.post(f"/api/v1/orders/{blocked.pk}/start-burn-in/", {}, format="json")
    assert refused.status_code == 409 and refused.json()["missing"][0] == sentence


def test_an_override_from_a_german_page_is_audited_in_english(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)
    client = _german(tenants.pm)
    page = client.get(f"/pm/orders/{order.pk}/").content.decode()
    assert "Noch keine ROI-Bewertung: Legen Sie vor der Freigabe eine an." in page

    response = client.post(f"/pm/orders/{order.pk}/approve/", {"approve-override_reason": "Pilot customer"})
    assert response.status_code == 303
    override = AuditEvent.objects.get(verb="order.approve_override")
    assert "No ROI assessment yet: add one before approval." in override.before["failed_checks"]
    assert not any("ROI-Bewertung" in sentence for sentence in override.before["failed_checks"])
