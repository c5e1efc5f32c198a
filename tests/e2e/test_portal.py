"""The customer portal in a real browser: a customer's round trip, the German portal and its switch, and a
customer trying the builder's and another customer's URLs.

Each flow keeps a screenshot of its final state under var/screenshots/ (git-ignored), as a test artifact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

from tests import factories
from tests.e2e.browser_rig import DESKTOP, PHONE, screenshot
from tests.portal import portal_rig
from tests.portal.portal_rig import BLACKLIST_EVIDENCE

# The portal tests' world (tests/portal/portal_rig.py), made available to this folder's tests.
audience_world = portal_rig.audience_world
portal_world = portal_rig.portal_world


@pytest.fixture
def world(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue("portal_world")


SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


def _shots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def _login(browser: Any, live_server: Any, username: str) -> None:
    browser.get(f"{live_server.url}/accounts/login/")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)


@pytest.mark.django_db(transaction=True)
def test_a_customer_follows_an_order_to_a_servers_serials_and_logs_out(live_server, browser, world):
    w = world
    wait = WebDriverWait(browser, 10)
    _login(browser, live_server, w.t.user_a.username)
    wait.until(ec.url_to_be(f"{live_server.url}/portal/"))
    orders = {
        item.get_attribute("data-order") for item in browser.find_elements(By.CSS_SELECTOR, "[data-order]")
    }
    from orders.models import Order

    own = set(Order.objects.filter(customer=w.t.customer_a).values_list("reference", flat=True))
    assert {w.iso.order_a.reference, w.events_order.reference, w.deployment.ready.order.reference} <= own
    assert orders == own
    assert w.iso.order_b.reference not in browser.page_source
    # Keyboard use: Tab reaches the skip link first, and the focus is visible (an outline, not colour alone).
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    focused = browser.switch_to.active_element
    assert focused.get_attribute("class") == "skip"
    assert browser.execute_script("return getComputedStyle(arguments[0]).outlineStyle", focused) == "solid"

    browser.find_element(By.LINK_TEXT, w.iso.order_a.reference).click()
    wait.until(ec.url_to_be(f"{live_server.url}/portal/orders/{w.iso.order_a.pk}/"))
    assert browser.find_element(By.CSS_SELECTOR, "ol.stages li.current").text.endswith("ROI review")
    browser.find_element(By.LINK_TEXT, w.builds.server.hostname).click()
    wait.until(ec.url_to_be(f"{live_server.url}/portal/servers/{w.builds.server.pk}/"))
    slot = browser.find_element(By.CSS_SELECTOR, 'tr[data-slot="PCIe-1"]')
    assert "P-SERIAL-1" in slot.text
    assert "PCIe link trains at x8 only" in browser.page_source
    assert BLACKLIST_EVIDENCE not in browser.page_source
    screenshot(browser, _shots() / "portal-server-desktop.png", width=DESKTOP[0])
    screenshot(browser, _shots() / "portal-server-phone.png", width=PHONE[0])

    # Keyboard use: the logout button is reachable and works with Enter.
    logout = browser.find_element(By.CSS_SELECTOR, "header.top form[action='/accounts/logout/'] button")
    logout.send_keys(Keys.ENTER)
    wait.until(ec.url_contains("/accounts/login/"))
    assert browser.find_elements(By.NAME, "username")
    browser.get(f"{live_server.url}/portal/servers/{w.builds.server.pk}/")
    wait.until(ec.url_contains("/accounts/login/?next="))
    assert "P-SERIAL-1" not in browser.page_source
    screenshot(browser, _shots() / "portal-logged-out.png", width=PHONE[0])


@pytest.mark.django_db(transaction=True)
def test_a_german_customer_reads_the_portal_in_german_and_switches_to_english(live_server, browser, world):
    w = world
    w.t.customer_a.language = "de"
    w.t.customer_a.save(update_fields=["language"])
    wait = WebDriverWait(browser, 10)
    _login(browser, live_server, w.t.user_a.username)
    wait.until(ec.url_to_be(f"{live_server.url}/portal/"))
    assert browser.find_element(By.TAG_NAME, "html").get_attribute("lang") == "de"
    assert browser.find_element(By.TAG_NAME, "h1").text == "Ihre Aufträge"
    browser.find_element(By.LINK_TEXT, w.events_order.reference).click()
    wait.until(ec.url_to_be(f"{live_server.url}/portal/orders/{w.events_order.pk}/"))
    assert "Ihr Auftrag wurde freigegeben." in browser.page_source
    screenshot(browser, _shots() / "portal-order-de.png", width=DESKTOP[0])

    Select(browser.find_element(By.ID, "language-select")).select_by_value("en")
    german_page = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(By.CSS_SELECTOR, "form.language button").click()
    # The switch posts and redirects back: wait for the German document to go, then read the new one.
    wait.until(ec.staleness_of(german_page))
    wait.until(lambda driver: driver.execute_script("return document.readyState") == "complete")
    assert browser.execute_script("return document.documentElement.lang") == "en"
    assert browser.current_url == f"{live_server.url}/portal/orders/{w.events_order.pk}/"
    assert "Your order was approved." in browser.page_source
    assert "What happened" in browser.find_element(By.ID, "timeline-title").text
    screenshot(browser, _shots() / "portal-order-en.png", width=DESKTOP[0])


@pytest.mark.django_db(transaction=True)
def test_a_customer_typing_builder_or_foreign_urls_gets_404_or_the_login(live_server, browser, world):
    w = world
    foreign = factories.OrderFactory(customer=w.t.customer_b, server_count=1, notes="Internal: Beta's secret")
    [foreign_server] = factories.make_servers(foreign)
    wait = WebDriverWait(browser, 10)
    _login(browser, live_server, w.t.user_a.username)
    wait.until(ec.url_to_be(f"{live_server.url}/portal/"))
    never = [
        foreign.reference,
        foreign_server.hostname,
        "Beta's secret",
        w.iso.po_p.number,
        w.iso.po_p.supplier.name,
        "Strategic account",
    ]
    attempts = {
        "/admin/": "login",
        f"/admin/orders/order/{w.iso.order_a.pk}/change/": "login",
        f"/pm/orders/{w.iso.order_a.pk}/roi/": 404,
        "/pm/": 404,
        f"/pm/orders/{w.iso.order_a.pk}/": 404,
        "/bench/": 404,
        f"/bench/servers/{w.builds.server.pk}/": 404,
        f"/portal/orders/{foreign.pk}/": 404,
        f"/portal/servers/{foreign_server.pk}/": 404,
        f"/api/v1/orders/{foreign.pk}/": 404,
        f"/api/v1/inventory/purchase-orders/{w.iso.po_p.pk}/": 404,
    }
    for path, expected in attempts.items():
        browser.get(f"{live_server.url}{path}")
        source = browser.page_source
        if expected == "login":
            assert "/login/" in browser.current_url, path
            assert browser.find_elements(By.NAME, "password"), path
        else:
            assert "Not Found" in source or "Not found" in source, (path, source[:300])
        leaked = [text for text in never if text in source]
        assert not leaked, (path, leaked)
    browser.get(f"{live_server.url}/portal/orders/{foreign.pk}/")
    screenshot(browser, _shots() / "portal-foreign-order-404.png", width=PHONE[0])
