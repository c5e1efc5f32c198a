"""A PM and a customer open a rack page in a real browser: the elevation draws, each sees what they may."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests import factories
from tests.deployment.rack_rig import make_rack_world
from tests.e2e.browser_rig import DESKTOP, PHONE, screenshot

SHOT = Path("/tmp/rack-page.png")


def _log_in(browser, live_server, username: str, path: str) -> None:
    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/accounts/login/?next={path}")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    WebDriverWait(browser, 10).until(ec.url_to_be(f"{live_server.url}{path}"))


def _svg_texts(browser) -> str:
    return browser.find_element(By.CSS_SELECTOR, "#elevation svg").get_attribute("textContent")


@pytest.mark.django_db(transaction=True)
def test_pm_and_customer_see_the_rack_elevation_as_they_may(live_server, browser, tenants, tmp_path):
    world = make_rack_world(tenants)
    path = f"/deployment/racks/{world.rack.pk}/"

    _log_in(browser, live_server, tenants.pm.username, path)
    svg = browser.find_element(By.CSS_SELECTOR, "#elevation svg")
    assert svg.size["height"] > 400 and svg.size["width"] > 300  # drawn, not just present
    text = _svg_texts(browser)
    assert world.server_a.hostname in text and world.server_b.hostname in text
    assert "A1 · 2,900 W of 2,944 W continuous (98.5 %) · 3,680 W rated" in text
    blocks = browser.find_elements(By.CSS_SELECTOR, "#elevation svg a.slot-server rect")
    assert len(blocks) == 4 and all(block.size["height"] > 100 for block in blocks)  # 6U each
    # The page's own styles leave the drawing alone: the status line is as small as drawn.
    status = browser.find_element(By.CSS_SELECTOR, "#elevation svg .srv-status")
    assert status.value_of_css_property("font-weight") == "400"
    screenshot(browser, SHOT, width=DESKTOP[0])
    assert SHOT.stat().st_size > 30_000

    _log_in(browser, live_server, tenants.user_a.username, path)
    text = _svg_texts(browser)
    assert world.server_a.hostname in text
    assert world.server_b.hostname not in text and world.server_b.asset_tag not in text
    assert "occupied" in text
    assert world.server_b.hostname not in browser.page_source
    occupied = browser.find_elements(By.CSS_SELECTOR, "#elevation svg g.slot-occupied")
    assert len(occupied) == 1 and occupied[0].find_elements(By.TAG_NAME, "a") == []
    customer = screenshot(browser, tmp_path / "rack-page-customer.png", width=DESKTOP[0])
    phone = screenshot(browser, tmp_path / "rack-page-phone.png", width=PHONE[0])
    assert customer.stat().st_size > 30_000 and phone.stat().st_size > 10_000
    # On a phone the page does not scroll sideways: the elevation scales down in its box.
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    # A click on the own server opens its deployment page.
    browser.set_window_size(*DESKTOP)
    browser.find_element(By.CSS_SELECTOR, f'#elevation svg a[data-server="{world.server_a.pk}"]').click()
    WebDriverWait(browser, 10).until(
        ec.url_to_be(f"{live_server.url}/deployment/servers/{world.server_a.pk}/")
    )
    keep = os.environ.get("WERKBANK_SCREENSHOTS")
    if keep:
        for shot in (SHOT, customer, phone):
            shutil.copy(shot, os.path.join(keep, shot.name))
