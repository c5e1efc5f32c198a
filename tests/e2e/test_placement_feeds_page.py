"""The admin's placement form in a real browser (issue #24, item 7): choosing a rack leaves only its feeds to
pick, each named with its rack, and unselects a feed of the rack chosen before; no Content-Security-Policy
violation (the filter is a static script)."""

from __future__ import annotations

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

from deployment.services import feed_create, rack_create
from tests import factories
from tests.deployment.rack_rig import make_rack_world
from tests.e2e.test_csp_pages import _record_violations, _violations

#: The options a PM can see and pick: their labels.
OFFERED = (
    "return [...document.querySelectorAll('#id_feeds option')].filter((o) => !o.hidden).map((o) => o.text)"
)


@pytest.mark.django_db(transaction=True)
def test_choosing_a_rack_offers_only_its_feeds(live_server, browser, tenants):
    world = make_rack_world(tenants)
    other = rack_create(site=world.site, actor=tenants.pm, name="R08", height_u=42)
    feed_create(rack=other, actor=tenants.pm, name="A1", voltage_v=230, current_a=16)
    _record_violations(browser)
    browser.set_window_size(1400, 900)
    browser.get(f"{live_server.url}/admin/login/?next=/admin/deployment/rackplacement/add/")
    browser.find_element(By.NAME, "username").send_keys(tenants.pm.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait = WebDriverWait(browser, 10)
    wait.until(ec.presence_of_element_located((By.ID, "id_feeds")))
    # No rack yet: every feed, named with its rack.
    assert len(browser.execute_script(OFFERED)) == 4
    assert "Sofia Colo 1 / R08 · A1 (230 V × 16 A × 1)" in browser.execute_script(OFFERED)

    rack = Select(browser.find_element(By.ID, "id_rack"))
    rack.select_by_visible_text(str(world.rack))
    wait.until(lambda driver: len(driver.execute_script(OFFERED)) == 3)
    assert all(label.startswith("Sofia Colo 1 / R07 · ") for label in browser.execute_script(OFFERED))
    Select(browser.find_element(By.ID, "id_feeds")).select_by_visible_text(
        "Sofia Colo 1 / R07 · A1 (230 V × 16 A × 1)"
    )

    rack.select_by_visible_text(str(other))
    wait.until(
        lambda driver: driver.execute_script(OFFERED) == ["Sofia Colo 1 / R08 · A1 (230 V × 16 A × 1)"]
    )
    chosen = Select(browser.find_element(By.ID, "id_feeds")).all_selected_options
    assert chosen == []  # the other rack's feed was unselected
    assert _violations(browser) == []
