"""A PM finds a serial through the search, opens its server, and sees its order (issue #14, browser test 1).

The PM types a GPU's serial, in lower case as a phone keyboard sends it, into the frame's search box and
presses Enter: the exact match opens the bench page of the server the GPU is installed in, which names the
order. Partial matches are listed by kind on the search page, which fits a 390 px phone without scrolling
sideways and raises no Content-Security-Policy violation. Screenshots of the final states are kept under
var/screenshots/ (git-ignored) as test artifacts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from builds.services import server_install, server_start_assembly
from inventory.models import Component
from tests import factories
from tests.e2e.browser_rig import PHONE, screenshot
from tests.e2e.test_csp_pages import _record_violations, _violations

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
WIDE = 1400


def _login(browser: Any, live_server: Any, username: str) -> None:
    browser.get(f"{live_server.url}/accounts/login/")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)


@pytest.mark.django_db(transaction=True)
def test_a_pm_finds_a_serial_opens_its_server_and_sees_its_order(live_server, browser, tenants, bench_build):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    server, serial = bench_build.server, bench_build.serials[0]
    server.refresh_from_db()  # the fixture assigned its partner
    server_start_assembly(server=server, actor=tenants.pm)
    server_install(
        server=server,
        actor=tenants.pm,
        component=Component.objects.get(serial=serial),
        connector_name="PCIE-A1",
    )
    wait = WebDriverWait(browser, 10)
    _record_violations(browser)

    _login(browser, live_server, tenants.pm.username)
    wait.until(ec.url_to_be(f"{live_server.url}/pm/"))  # a PM's home is the pipeline
    # The frame's box: labelled, reached by the keyboard, a search field.
    box = browser.find_element(By.ID, "frame-search")
    assert box.get_attribute("type") == "search"
    label = browser.find_element(By.CSS_SELECTOR, 'label[for="frame-search"]')
    assert "Search" in label.get_attribute("textContent")
    box.click()
    box.send_keys(serial.lower(), Keys.ENTER)

    expected = f"{live_server.url}/bench/servers/{server.pk}/?serial={serial}"
    wait.until(ec.url_to_be(expected))
    header = browser.find_element(By.TAG_NAME, "main").text
    assert f"Order {server.order.reference}" in header
    assert browser.find_element(By.CSS_SELECTOR, '[data-connector="PCIE-A1"]').get_attribute(
        "data-serial"
    ) == (serial)
    screenshot(browser, SCREENSHOTS / "search-serial-server-1400.png", width=WIDE)
    screenshot(browser, SCREENSHOTS / "search-serial-server-390.png", width=PHONE[0])

    # The order's reference on the server page opens the PM's order page.
    browser.find_element(By.ID, "order-link").click()
    wait.until(ec.url_to_be(f"{live_server.url}/pm/orders/{server.order.pk}/"))
    assert server.order.reference in browser.find_element(By.TAG_NAME, "h1").text
    screenshot(browser, SCREENSHOTS / "search-serial-order-1400.png", width=WIDE)
    browser.back()

    # A partial serial lists both GPUs of the lot, grouped as serials, each with its link.
    browser.set_window_size(WIDE, 900)
    box = browser.find_element(By.ID, "frame-search")
    box.send_keys(serial[:8], Keys.ENTER)
    wait.until(ec.url_contains("/pm/search/?q="))
    group = browser.find_element(By.CSS_SELECTOR, 'section[data-kind="serial"]')
    found = [item.text for item in group.find_elements(By.CSS_SELECTOR, "ul.search-hits li .mono")]
    assert found == bench_build.serials
    screenshot(browser, SCREENSHOTS / "search-results-1400.png", width=WIDE)
    screenshot(browser, SCREENSHOTS / "search-results-390.png", width=PHONE[0])
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    assert browser.find_element(By.ID, "frame-search").rect["width"] >= 120  # usable on the phone

    # Part of the order's reference lists the order and its server, each in its group, on the phone too.
    box = browser.find_element(By.ID, "frame-search")
    box.send_keys(server.order.reference[3:], Keys.ENTER)
    wait.until(ec.url_contains(f"q={server.order.reference[3:]}"))
    kinds = [group.get_attribute("data-kind") for group in browser.find_elements(By.CSS_SELECTOR, "section")]
    assert kinds == ["order", "server"]
    screenshot(browser, SCREENSHOTS / "search-order-390.png", width=PHONE[0])
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    assert _violations(browser) == []
