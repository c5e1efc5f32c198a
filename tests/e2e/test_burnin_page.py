"""The customer opens a server's burn-in in a real browser: the charts draw, the outliers stand out."""

from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests import factories
from tests.e2e.browser_rig import DESKTOP, PHONE, screenshot


@pytest.mark.django_db(transaction=True)
def test_customer_sees_the_burnin_charts_and_the_marked_gpus(live_server, browser, tenants, tmp_path):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in")
    server.partner = tenants.partner_p
    server.save(update_fields=["partner"])
    factories.make_seed003_burnin_run(server, hours=72)
    wait = WebDriverWait(browser, 10)

    url = f"{live_server.url}/burnin/servers/{server.pk}/"
    browser.get(f"{live_server.url}/accounts/login/?next=/burnin/servers/{server.pk}/")
    browser.find_element(By.NAME, "username").send_keys(tenants.user_a.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(url))

    for chart in ("temperature", "power", "clock"):
        paths = browser.find_elements(By.CSS_SELECTOR, f"#chart-{chart} svg path.series")
        assert len(paths) == 6, chart
        # Drawn, not just present: every line has a length on screen.
        assert all(p.size["width"] > 100 for p in paths), chart
        assert browser.find_elements(By.CSS_SELECTOR, f"#chart-{chart} svg rect.throttle")
    marked = browser.find_elements(By.CSS_SELECTOR, 'td[data-column="link"][data-flag="fail"]')
    assert [cell.find_element(By.XPATH, "..").get_attribute("data-gpu") for cell in marked] == ["2", "4"]
    assert all("FAIL" in cell.text for cell in marked)
    assert "interrupted: workshop power distribution failure" in browser.find_element(By.ID, "summary").text

    desktop = screenshot(browser, tmp_path / "burnin-desktop.png", width=DESKTOP[0])
    phone = screenshot(browser, tmp_path / "burnin-phone.png", width=PHONE[0])
    assert desktop.stat().st_size > 50_000 and phone.stat().st_size > 20_000
    # On a phone the page does not scroll sideways: the charts scale down, the table scrolls in its box.
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    keep = os.environ.get("WERKBANK_SCREENSHOTS")  # a folder to keep them in, for a person to look at
    if keep:
        for shot in (desktop, phone):
            shutil.copy(shot, os.path.join(keep, shot.name))
