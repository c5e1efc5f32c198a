"""The customer opens a handed-over server in the German portal in a real browser: the health history draws
(the time line, each GPU's small charts with the fallen point below its baseline), in German, and on a phone
the page does not scroll sideways. Screenshots go to $WERKBANK_SCREENSHOTS when set."""

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
from tests.burnin.health_rig import in_service, weekly_history
from tests.e2e.browser_rig import DESKTOP, PHONE, screenshot


@pytest.mark.django_db(transaction=True)
def test_the_customer_sees_the_health_history_in_german(live_server, browser, tenants, tmp_path):
    server = in_service(tenants)
    weekly_history(server, field_runs=8, drift_in=(8,), gpus=4)
    wait = WebDriverWait(browser, 10)
    url = f"{live_server.url}/portal/servers/{server.pk}/"
    browser.get(f"{live_server.url}/accounts/login/?next=/portal/servers/{server.pk}/")
    browser.add_cookie({"name": "django_language", "value": "de"})
    browser.find_element(By.NAME, "username").send_keys(tenants.user_a.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(url))

    section = browser.find_element(By.ID, "health")
    assert "Zustand nach der Übergabe" in section.text
    assert "beim Referenzlauf" in browser.find_element(By.ID, "health-findings").text
    timeline = browser.find_element(By.CSS_SELECTOR, "#health-timeline svg")
    assert timeline.size["width"] > 300
    assert len(timeline.find_elements(By.CSS_SELECTOR, "g.run")) == 9
    charts = section.find_elements(By.CSS_SELECTOR, ".health-charts svg")
    assert len(charts) == 12 and all(chart.size["width"] > 150 for chart in charts)
    fallen = section.find_element(
        By.CSS_SELECTOR, '.health-gpu[data-gpu="1"] svg[data-metric="h2d_gbps"] g.fallen'
    )
    baseline = section.find_element(
        By.CSS_SELECTOR, '.health-gpu[data-gpu="1"] svg[data-metric="h2d_gbps"] .baseline'
    )
    assert fallen.location["y"] > baseline.location["y"] + 20  # drawn below the line on screen

    desktop = screenshot(browser, tmp_path / "health-portal-desktop.png", width=DESKTOP[0])
    phone = screenshot(browser, tmp_path / "health-portal-phone.png", width=PHONE[0])
    assert desktop.stat().st_size > 50_000 and phone.stat().st_size > 20_000
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0]
    keep = os.environ.get("WERKBANK_SCREENSHOTS")  # a folder to keep them in, for a person to look at
    if keep:
        for shot in (desktop, phone):
            shutil.copy(shot, os.path.join(keep, shot.name))
