"""The frame in a real browser: the login page, the bench list and a server, the burn-in, rack, ROI,
receiving, bench token and logout pages, each at 1400 px, on a 390 px phone and in print, with the menu, the
language switch and the logout button.

The screenshots go to $WERKBANK_SCREENSHOTS when set (as frame-<page>-<width>.png), else to the test's
temporary folder; a person looks at them when the frame changes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests import factories
from tests.deployment.rack_rig import make_rack_world
from tests.e2e.browser_rig import PHONE, screenshot

WIDE = 1400
PRINT = 800


def _shots(browser, folder: Path, name: str) -> None:
    """Both widths of the page; on the phone it must not scroll sideways, and the menu stays reachable."""
    for width in (WIDE, PHONE[0]):
        shot = screenshot(browser, folder / f"frame-{name}-{width}.png", width=width)
        assert shot.stat().st_size > 10_000, shot
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0], name
    header = browser.find_element(By.CSS_SELECTOR, "header.top")
    assert header.is_displayed() and header.rect["width"] <= PHONE[0]
    # In print (an A4 page is about 800 CSS px wide) the menu and the forms go, the content stays.
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        screenshot(browser, folder / f"frame-{name}-print.png", width=PRINT)
        assert not header.is_displayed()
        assert browser.find_element(By.TAG_NAME, "h1").is_displayed()
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


@pytest.mark.django_db(transaction=True)
def test_the_pages_in_the_frame_at_two_widths_and_in_print(
    live_server, browser, tenants, bench_build, tmp_path
):
    world = make_rack_world(tenants)
    factories.make_seed003_burnin_run(world.server_a, hours=72)
    factories.ROIAssessmentFactory(order=world.server_a.order)
    delivery = factories.make_po(deliver_to=tenants.partner_p, quantity=4)
    folder = Path(os.environ.get("WERKBANK_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    wait = WebDriverWait(browser, 10)

    browser.get(f"{live_server.url}/accounts/login/")
    assert browser.find_elements(By.CSS_SELECTOR, "header.top nav") == []  # no menu before login
    _shots(browser, folder, "login")
    browser.find_element(By.NAME, "username").send_keys(tenants.pm.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(f"{live_server.url}/pm/"))

    pages = [
        ("bench-list", "/bench/"),
        ("bench-server", f"/bench/servers/{bench_build.server.pk}/"),
        ("bench-tokens", "/bench/tokens/"),
        ("burnin", f"/burnin/servers/{world.server_a.pk}/"),
        ("site", f"/deployment/sites/{world.site.pk}/"),
        ("deployment-server", f"/deployment/servers/{world.server_a.pk}/"),
        ("rack", f"/deployment/racks/{world.rack.pk}/"),
        ("roi", f"/pm/orders/{world.server_a.order_id}/roi/"),
        ("pm-pipeline", "/pm/"),
        ("pm-order", f"/pm/orders/{world.server_a.order_id}/"),
        ("po-receive", f"/pm/purchase-orders/{delivery.pk}/receive/"),
        ("bench-po-receive", f"/bench/purchase-orders/{delivery.pk}/receive/"),
        ("logout", "/accounts/logout/"),
    ]
    for name, path in pages:
        browser.set_window_size(WIDE, 900)
        browser.get(f"{live_server.url}{path}")
        menu = browser.find_element(By.CSS_SELECTOR, "header.top nav")
        links = [link.text for link in menu.find_elements(By.TAG_NAME, "a")]
        assert links == ["Pipeline", "Admin", "Bench", "Warranty report", "Quality"], name
        badges = browser.find_elements(By.CSS_SELECTOR, "main .badge")
        assert bool(badges) == (name not in {"site", "logout", "bench-tokens"}), name  # these show no status
        assert all(badge.text.strip()[0] in "✓✕!›·" for badge in badges), name  # a symbol, then the word
        _shots(browser, folder, name)

    browser.get(f"{live_server.url}/deployment/racks/{world.rack.pk}/")
    # The language switch turns the frame to German and back, on the same page.
    reloaded = WebDriverWait(browser, 10, ignored_exceptions=(StaleElementReferenceException,))
    Select(browser.find_element(By.ID, "language-select")).select_by_value("de")
    browser.find_element(By.CSS_SELECTOR, "form.language button").click()
    reloaded.until(lambda driver: driver.execute_script("return document.documentElement.lang") == "de")
    assert browser.current_url == f"{live_server.url}/deployment/racks/{world.rack.pk}/"
    assert (
        browser.find_element(By.CSS_SELECTOR, "header.top .tools form:last-child button").text == "Abmelden"
    )
    screenshot(browser, folder / f"frame-rack-de-{PHONE[0]}.png", width=PHONE[0])
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    Select(browser.find_element(By.ID, "language-select")).select_by_value("en")
    browser.find_element(By.CSS_SELECTOR, "form.language button").click()
    reloaded.until(lambda driver: driver.execute_script("return document.documentElement.lang") == "en")

    # The logout button in the frame logs out and lands on the login page, which says so.
    browser.find_element(By.XPATH, "//header//button[normalize-space()='Log out']").click()
    wait.until(ec.url_to_be(f"{live_server.url}/accounts/login/"))
    assert browser.find_element(By.CSS_SELECTOR, ".messages .success").text == "You are logged out."
    browser.get(f"{live_server.url}/bench/")
    assert browser.current_url.startswith(f"{live_server.url}/accounts/login/")
