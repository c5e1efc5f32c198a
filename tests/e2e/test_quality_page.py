"""The PM's quality page in a real browser: the flagged lot's row shows its interval and flag, its link opens
the evidence, and neither page scrolls sideways at 1400 px or on a 390 px phone (the tables scroll in their
own container). Screenshots under var/screenshots/ (git-ignored), as a test artifact."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests import factories
from tests.e2e.browser_rig import PHONE, screenshot
from tests.pm import quality_rig

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
WIDE = 1400


def _no_sideways_scroll(browser: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in (WIDE, PHONE[0]):
        screenshot(browser, SCREENSHOTS / f"{name}-{width}.png", width=width)
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width, (name, width)


@pytest.mark.django_db(transaction=True)
def test_a_pm_opens_the_flagged_lot_and_its_evidence(live_server, browser, tenants):
    fleet = quality_rig.fleet(servers=8, lots={"L-2291": 8})
    failed = [
        quality_rig.fail(server, component=fleet.installed[server.pk][0], stage=stage, occurred_at=at)
        for server, stage, at in zip(
            fleet.servers,
            ("burn_in", "burn_in", "claim"),
            (
                datetime(2026, 2, 2, tzinfo=UTC),
                datetime(2026, 3, 2, tzinfo=UTC),
                datetime(2026, 3, 9, tzinfo=UTC),
            ),
            strict=False,
        )
    ]
    key = fleet.lot_key("L-2291")
    wait = WebDriverWait(browser, 10)

    browser.get(f"{live_server.url}/accounts/login/")
    browser.find_element(By.NAME, "username").send_keys(tenants.pm.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(f"{live_server.url}/pm/"))
    browser.find_element(By.CSS_SELECTOR, 'nav a[href="/pm/quality/"]').click()
    row = wait.until(
        ec.visibility_of_element_located((By.CSS_SELECTOR, f'[data-kind="lots"] tr[data-row="{key}"]'))
    )
    assert row.find_element(By.CSS_SELECTOR, "[data-interval]").text == "13.7–69.4 %"
    assert row.find_element(By.CSS_SELECTOR, '[data-flag="flagged"]').text == "⚑ flagged"
    assert browser.find_element(By.CSS_SELECTOR, "#quality-chart svg").get_attribute("role") == "img"
    _no_sideways_scroll(browser, "pm-quality")

    browser.set_window_size(*PHONE)
    browser.find_element(By.CSS_SELECTOR, f'[data-kind="lots"] tr[data-row="{key}"] a').click()
    wait.until(ec.url_to_be(f"{live_server.url}/pm/quality/lots/{key}/"))
    rows = wait.until(ec.presence_of_all_elements_located((By.CSS_SELECTOR, "tr[data-attribution]")))
    assert {row.get_attribute("data-attribution") for row in rows} == {str(a.pk) for a in failed}
    _no_sideways_scroll(browser, "pm-quality-evidence")
