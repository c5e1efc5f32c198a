"""The portal's pages for a customer member: who may open them, and what each shows.

Decision (portal/views/customer.py): the portal is for members of customer organizations. PMs have the
admin and partners the bench; for them, as for a user of no organization, every portal page is a 404.
Anonymous visitors are sent to the login page.
"""

from __future__ import annotations

import pytest
from django.core import mail
from knox.models import AuthToken

from orders.services import order_submit
from tests import factories
from tests.portal.portal_rig import BLACKLIST_EVIDENCE
from werkbank.audiences import CUSTOMER_ORDER_VERBS
from werkbank.models import AuditEvent
from werkbank.services import api_token_create

pytestmark = pytest.mark.django_db


def _urls(w) -> dict[str, str]:
    return {
        "orders": "/portal/",
        "order": f"/portal/orders/{w.iso.order_a.pk}/",
        "server": f"/portal/servers/{w.builds.server.pk}/",
        "placed-server": f"/portal/servers/{w.deployment.ready.pk}/",
        "tokens": "/portal/tokens/",
    }


def test_a_customer_sees_its_own_orders_only(client, portal_world):
    w = portal_world
    client.force_login(w.t.user_a)
    page = client.get("/portal/").content.decode()
    for order in (w.iso.order_a, w.events_order):
        assert f'data-order="{order.reference}"' in page
    assert w.iso.order_b.reference not in page


def test_another_customers_order_and_server_are_404(client, portal_world):
    w = portal_world
    foreign = factories.OrderFactory(customer=w.t.customer_b, server_count=1)
    [server_b] = factories.make_servers(foreign)
    client.force_login(w.t.user_a)
    for url in (f"/portal/orders/{foreign.pk}/", f"/portal/servers/{server_b.pk}/"):
        assert client.get(url).status_code == 404, url
    client.force_login(w.t.user_b)
    for url in (f"/portal/orders/{w.iso.order_a.pk}/", f"/portal/servers/{w.builds.server.pk}/"):
        assert client.get(url).status_code == 404, url
    assert w.iso.order_a.reference not in client.get("/portal/").content.decode()


@pytest.mark.parametrize("who", ["pm", "user_p", "outsider"])
def test_pms_partners_and_outsiders_get_404_on_every_portal_page(client, portal_world, who):
    client.force_login(getattr(portal_world.t, who))
    for name, url in _urls(portal_world).items():
        assert client.get(url).status_code == 404, name
    assert client.post("/portal/tokens/").status_code == 404


def test_anonymous_visitors_are_sent_to_the_login(client, portal_world):
    for name, url in _urls(portal_world).items():
        response = client.get(url)
        assert response.status_code == 302, name
        assert response["Location"].startswith("/accounts/login/?next="), name


def test_the_timeline_tells_a_customer_what_happened_in_plain_words(client, portal_world):
    w = portal_world
    client.force_login(w.t.user_a)
    page = client.get(f"/portal/orders/{w.events_order.pk}/").content.decode()
    sentences = [
        "Your business case went to review.",
        "Your order was approved.",
        "We ordered the parts for your servers.",
    ]
    positions = [page.index(sentence) for sentence in sentences]
    assert positions == sorted(positions)
    for internal in ("order.submit", "order_approve", "approve_override", "Strategic account", "PM note"):
        assert internal not in page, internal


def test_every_customer_facing_event_has_a_sentence():
    from portal.customer import EVENT_TEXTS

    assert set(EVENT_TEXTS) == CUSTOMER_ORDER_VERBS


def test_the_order_page_shows_the_business_case_sizing_power_and_servers(client, portal_world):
    w = portal_world
    client.force_login(w.t.user_a)
    response = client.get(f"/portal/orders/{w.iso.order_a.pk}/")
    page = response.content.decode()
    assert "20.0 months" in page  # the payback of the ROI assessment
    assert 'class="cashflow-chart"' in page
    assert "Llama-3.1-8B" in page and "GB" in page
    assert "W" in page and "usable with redundancy" in page
    for server in w.iso.order_a.servers.all():
        assert f'data-server="{server.hostname}"' in page
    assert '<ol class="stages"' in page and 'aria-current="step"' in page


def test_the_server_page_lists_serials_by_slot_the_blacklist_and_burnin(client, portal_world):
    w = portal_world
    client.force_login(w.t.user_a)
    page = client.get(f"/portal/servers/{w.builds.server.pk}/").content.decode()
    assert 'data-slot="PCIe-1"' in page and "P-SERIAL-1" in page
    assert 'data-blacklisted="PCIe-2"' in page and "PCIe link trains at x8 only" in page
    assert BLACKLIST_EVIDENCE not in page
    # The waived finding shows that it was waived and why; not who waived it.
    assert "Waived" in page and "Riser reseated; x16 confirmed by hand" in page
    assert 'class="temperature-chart' in page or "<svg" in page
    assert f"/burnin/servers/{w.builds.server.pk}/" in page


def test_the_server_page_shows_the_rack_placement_with_its_elevation(client, portal_world):
    w = portal_world
    client.force_login(w.t.user_a)
    page = client.get(f"/portal/servers/{w.deployment.ready.pk}/").content.decode()
    # The drawing in the page's language (the API's own answers are English).
    assert f'src="/api/v1/racks/{w.deployment.rack.pk}/elevation.svg?lang=en"' in page
    assert "Sofia (BG), rack R1, U1–U" in page
    # The elevation the page embeds answers the customer.
    assert client.get(f"/api/v1/racks/{w.deployment.rack.pk}/elevation.svg?lang=en").status_code == 200


def test_the_server_page_shows_its_warranty_and_its_documents(client, portal_world):
    from datetime import date

    from django.utils import timezone

    from warranty.choices import PackStatus, RecordKind
    from warranty.models import HandoverPack, WarrantyRecord

    w = portal_world
    server = w.deployment.ready
    HandoverPack.objects.filter(server=server).update(
        status=PackStatus.READY, progress=100, pdf="handover/p.pdf", zip="handover/p.zip",
        pdf_sha256="a" * 64, zip_sha256="b" * 64, finished_at=timezone.now(),
    )  # fmt: skip
    pack = HandoverPack.objects.get(server=server)
    record = WarrantyRecord.objects.create(
        kind=RecordKind.SERVER, server=server, order=server.order, customer=server.order.customer,
        serial="CHASSIS-4711", description=server.hostname, start_date=date(2026, 11, 2), term_months=36,
        end_date=date(2029, 11, 2),
    )  # fmt: skip
    client.force_login(w.t.user_a)
    html = client.get(f"/portal/servers/{server.pk}/").content.decode()
    assert f'href="/portal/packs/{pack.pk}/handover.pdf"' in html
    assert f'href="/portal/packs/{pack.pk}/handover.zip"' in html
    assert "b" * 64 in html  # the ZIP's SHA-256, to check a download against
    assert f'href="/portal/warranty/records/{record.pk}/"' in html and "CHASSIS-4711" in html
    assert f'href="/portal/orders/{server.order_id}/warranty-certificate.pdf"' in html
    # A server without a ready pack says so.
    other = client.get(f"/portal/servers/{w.builds.server.pk}/").content.decode()
    assert "The handover pack of this server is not ready yet." in other


# --- API tokens ------------------------------------------------------------------------------------------


def test_a_customer_creates_a_token_sees_it_once_lists_and_revokes_it(client, portal_world):
    user = portal_world.t.user_a
    client.force_login(user)
    response = client.post("/portal/tokens/")
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    raw = response.context["new_token"]
    token = AuthToken.objects.get(user=user)
    assert raw.startswith(token.token_key) and raw in response.content.decode()
    # The token works on the API, and the page never shows it again.
    api = client.__class__()
    assert api.get("/api/v1/orders/", HTTP_AUTHORIZATION=f"Token {raw}").status_code == 200
    listing = client.get("/portal/tokens/").content.decode()
    assert f'data-token="{token.token_key}"' in listing and raw not in listing
    event = AuditEvent.objects.get(verb="api_token.create")
    assert event.after["token_key"] == token.token_key and token.digest not in str(event.after)

    revoked = client.post("/portal/tokens/revoke/", {"token_key": token.token_key})
    assert revoked.status_code == 303
    assert not AuthToken.objects.filter(user=user).exists()
    assert AuditEvent.objects.filter(verb="api_token.revoke", object_id=str(user.pk)).exists()
    assert api.get("/api/v1/orders/", HTTP_AUTHORIZATION=f"Token {raw}").status_code == 401


def test_a_customer_cannot_revoke_someone_elses_token(client, portal_world):
    other, _ = api_token_create(user=portal_world.t.user_b, actor=portal_world.t.user_b)
    client.force_login(portal_world.t.user_a)
    assert client.post("/portal/tokens/revoke/", {"token_key": other.token_key}).status_code == 404
    assert AuthToken.objects.filter(pk=other.pk).exists()


def test_the_eleventh_token_is_refused(client, portal_world, settings):
    user = portal_world.t.user_a
    for _ in range(10):
        api_token_create(user=user, actor=user)
    client.force_login(user)
    response = client.post("/portal/tokens/", follow=True)
    assert AuthToken.objects.filter(user=user).count() == 10
    assert "most live tokens allowed" in response.content.decode()
    assert response.context.get("new_token") == ""


# --- the status e-mail links to the portal ---------------------------------------------------------------


@pytest.mark.parametrize(("language", "words"), [("en", "Follow the order"), ("de", "Verfolgen Sie")])
def test_the_status_email_links_to_the_orders_portal_page(
    tenants, settings, django_capture_on_commit_callbacks, language, words
):
    settings.WERKBANK_PUBLIC_URL = "https://werkbank.example"
    tenants.customer_a.language = language
    tenants.customer_a.save(update_fields=["language"])
    tenants.user_a.email = "alice@alpha.example"
    tenants.user_a.save(update_fields=["email"])
    order = factories.pass_gate(factories.OrderFactory(customer=tenants.customer_a))
    with django_capture_on_commit_callbacks(execute=True):
        order_submit(order=order, actor=tenants.pm)
    assert mail.outbox
    body = mail.outbox[-1].body
    assert words in body
    assert f"https://werkbank.example/portal/orders/{order.pk}/" in body


def test_a_german_customer_reads_the_portal_in_german_until_the_switch_says_english(client, portal_world):
    w = portal_world
    w.t.customer_a.language = "de"
    w.t.customer_a.save(update_fields=["language"])
    client.post("/accounts/login/", {"username": "alice", "password": factories.PASSWORD})
    page = client.get(f"/portal/orders/{w.events_order.pk}/").content.decode()
    assert '<html lang="de">' in page
    for german in ("Ihre Aufträge", "Was bisher geschah", "Ihr Auftrag wurde freigegeben.", "Freigegeben"):
        assert german in page, german
    client.post("/i18n/setlang/", {"language": "en", "next": "/portal/"})
    page = client.get(f"/portal/orders/{w.events_order.pk}/").content.decode()
    assert '<html lang="en">' in page and "Your order was approved." in page


def test_the_cash_flow_chart_speaks_the_customers_language(client, portal_world):
    w = portal_world
    client.force_login(w.t.user_a)
    client.cookies["django_language"] = "de"
    page = client.get(f"/portal/orders/{w.iso.order_a.pk}/").content.decode()
    assert "Break-even im Monat 17" in page and "kumulierter Zahlungsstrom (EUR)" in page


def test_a_404_is_a_page_of_the_frame_that_names_nothing(client, portal_world):
    w = portal_world
    client.force_login(w.t.user_b)
    response = client.get(f"/portal/orders/{w.iso.order_a.pk}/")
    page = response.content.decode()
    assert response.status_code == 404
    assert "Not found" in page and 'href="/portal/"' in page  # the frame's menu
    assert w.iso.order_a.reference not in page
