"""A PM places a server by clicking a free U on the rack page's elevation, in a real browser (issue #28,
item 2); an occupied U and another customer's room are refused with the service's message. No CSP violation,
and no sideways scrolling at 390 px. Screenshots go to $WERKBANK_SCREENSHOTS/rack-placing/ when set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

from deployment.choices import SiteKind
from deployment.models import PlacementFeed, RackPlacement
from deployment.services import feed_create, rack_create, site_create
from tests import factories
from tests.deployment.rack_rig import make_rack_world
from tests.e2e.browser_rig import DESKTOP, PHONE, screenshot

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""


def _log_in(browser, live_server, username: str, path: str) -> None:
    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/accounts/login/?next={path}")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    WebDriverWait(browser, 10).until(ec.url_to_be(f"{live_server.url}{path}"))


def _target(browser, face: str, u: int):
    box = "#elevation" if face == "front" else "#elevation-rear"
    return browser.find_element(By.CSS_SELECTOR, f'{box} svg rect[data-face="{face}"][data-u="{u}"]')


def _note(browser) -> str:
    return browser.find_element(By.CSS_SELECTOR, "#placing-form [data-placing-note]").text


def _face(browser) -> str:
    return Select(browser.find_element(By.ID, "id_face")).first_selected_option.get_attribute("value")


def _refusal(browser) -> str:
    found = WebDriverWait(browser, 10).until(
        ec.visibility_of_element_located((By.CSS_SELECTOR, "#placing-refusal"))
    )
    return found.text


@pytest.mark.django_db(transaction=True)
def test_a_pm_places_a_server_by_clicking_a_free_u_and_is_refused_where_the_service_refuses(
    live_server, browser, tenants, tmp_path
):
    world = make_rack_world(tenants)
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=2)
    server_c, server_d = factories.make_servers(order, status="burn_in_passed")
    folder = Path(os.environ.get("WERKBANK_SCREENSHOTS") or tmp_path) / "rack-placing"
    folder.mkdir(parents=True, exist_ok=True)
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_VIOLATIONS})
    path = f"/deployment/racks/{world.rack.pk}/"
    _log_in(browser, live_server, tenants.pm.username, path)
    wait = WebDriverWait(browser, 10)

    # A 6U server: the 3 free U of U7–U9 cannot take it; a click on U42 starts it at U37, the highest fit.
    Select(browser.find_element(By.ID, "id_server")).select_by_value(str(server_c.pk))
    assert _target(browser, "front", 8).get_attribute("data-fits") == "no"
    assert _target(browser, "front", 20).get_attribute("data-fits") == "yes"
    _target(browser, "front", 8).click()
    wait.until(lambda driver: "does not fit at U8" in _note(driver))
    assert browser.find_element(By.ID, "id_lowest_u").get_attribute("value") == ""
    _target(browser, "rear", 42).click()
    wait.until(lambda driver: "U37–U42 from the rear" in _note(driver))
    assert (
        Select(browser.find_element(By.ID, "id_face")).first_selected_option.get_attribute("value") == "rear"
    )
    # The click that counts: U20 from the front.
    _target(browser, "front", 20).click()
    wait.until(lambda driver: driver.find_element(By.ID, "id_lowest_u").get_attribute("value") == "20")
    assert "U20–U25 from the front" in _note(browser)
    assert (
        Select(browser.find_element(By.ID, "id_face")).first_selected_option.get_attribute("value") == "front"
    )
    chosen = browser.find_elements(By.CSS_SELECTOR, '#elevation svg rect[data-face="front"][data-chosen]')
    assert sorted(int(rect.get_attribute("data-u")) for rect in chosen) == list(range(20, 26))
    browser.find_element(By.CSS_SELECTOR, '#placing-form input[name="feeds"][data-feed="C1"]').click()
    Select(browser.find_element(By.CSS_SELECTOR, 'select[data-phase-for="C1"]')).select_by_value("L2")
    screenshot(browser, folder / "picked-phone.png", width=PHONE[0])
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    browser.find_element(By.CSS_SELECTOR, '#placing-form button[type="submit"]').click()

    placed = wait.until(
        ec.presence_of_element_located((By.CSS_SELECTOR, f'#elevation svg a[data-server="{server_c.pk}"]'))
    )
    assert placed.get_attribute("data-lowest-u") == "20"
    assert server_c.hostname in placed.get_attribute("textContent")
    assert f"{server_c.hostname} is placed in rack R07 at U20–U25, from the front." in browser.page_source
    placement = RackPlacement.objects.get(server=server_c)
    assert (placement.lowest_u, placement.face) == (20, "front")
    assert PlacementFeed.objects.get(rackplacement=placement).phase == "L2"
    screenshot(browser, folder / "placed-desktop.png", width=DESKTOP[0])

    # An occupied U, typed: the service's refusal names the server in the way; the form keeps the values.
    Select(browser.find_element(By.ID, "id_server")).select_by_value(str(server_d.pk))
    lowest = browser.find_element(By.ID, "id_lowest_u")
    lowest.clear()
    lowest.send_keys("3")
    browser.find_element(By.CSS_SELECTOR, '#placing-form input[name="feeds"][data-feed="C1"]').click()
    browser.find_element(By.CSS_SELECTOR, '#placing-form button[type="submit"]').click()
    text = _refusal(browser)
    assert f"{server_d.hostname} was not placed." in text
    assert f"overlaps server {world.server_a.hostname} at U1–U6" in text
    assert browser.find_element(By.ID, "id_lowest_u").get_attribute("value") == "3"
    screenshot(browser, folder / "occupied-desktop.png", width=DESKTOP[0])

    # Another customer's room: the refusal names both customers.
    site = site_create(
        actor=tenants.pm,
        name="Beta server room",
        kind=SiteKind.CUSTOMER_ROOM,
        operator="Beta facilities",
        customer=tenants.customer_b,
        address="Hauptstraße 1, Leipzig",
        country="DE",
    )
    room = rack_create(site=site, actor=tenants.pm, name="Room rack", height_u=24)
    feed_create(rack=room, actor=tenants.pm, name="Wall", leg="A", voltage_v=230, current_a=16, phases=1)
    browser.get(f"{live_server.url}/deployment/racks/{room.pk}/")
    server = Select(browser.find_element(By.ID, "id_server"))
    server.select_by_value(str(server_d.pk))
    assert server.first_selected_option.get_attribute("data-foreign") == "1"
    _target(browser, "rear", 1).click()
    wait.until(lambda driver: driver.find_element(By.ID, "id_lowest_u").get_attribute("value") == "1")
    browser.find_element(By.CSS_SELECTOR, '#placing-form input[name="feeds"][data-feed="Wall"]').click()
    browser.find_element(By.CSS_SELECTOR, '#placing-form button[type="submit"]').click()
    text = _refusal(browser)
    assert "Beta Research AG's own room" in text and "Alpha Rentals GmbH's order" in text
    assert not RackPlacement.objects.filter(server=server_d).exists()
    screenshot(browser, folder / "foreign-room-phone.png", width=PHONE[0])
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    assert browser.execute_script("return window.__cspViolations || null;") == []
