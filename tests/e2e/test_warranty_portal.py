"""A customer in a real browser: looks a serial up in the portal, opens its record and files a claim, on a
phone-sized screen, with no Content-Security-Policy violation."""

from __future__ import annotations

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from tests import factories
from tests.builds.bench_rig import GPUS_L1
from tests.builds.bench_rig import bench as builds_bench
from tests.e2e.test_csp_pages import _record_violations, _violations
from tests.warranty.handover_rig import handed, world  # noqa: F401 (fixtures)
from warranty.models import WarrantyClaim

bench = builds_bench


@pytest.mark.django_db(transaction=True)
def test_a_customer_looks_up_a_serial_and_files_a_claim(live_server, browser, handed):  # noqa: F811
    _record_violations(browser)
    wait = WebDriverWait(browser, 10)
    browser.get(f"{live_server.url}/accounts/login/?next=/portal/warranty/")
    browser.find_element(By.NAME, "username").send_keys(handed.t.user_a.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(f"{live_server.url}/portal/warranty/"))
    assert _violations(browser) == []

    browser.find_element(By.ID, "serial").send_keys(GPUS_L1[0].lower(), Keys.ENTER)
    wait.until(ec.url_contains("serial="))
    links = browser.find_elements(By.CSS_SELECTOR, "table.warranty-records a")
    assert [link.text for link in links] == [GPUS_L1[0]]
    links[0].click()
    wait.until(ec.url_contains("/portal/warranty/records/"))
    # The page fits a phone: nothing wider than the viewport.
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1")

    browser.find_element(By.NAME, "description").send_keys("The card drops off the bus under load")
    browser.find_element(By.CSS_SELECTOR, "form.claim-form button[type=submit]").click()
    claim = WebDriverWait(browser, 10).until(
        lambda _: WarrantyClaim.objects.filter(record__serial=GPUS_L1[0]).first()
    )
    wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".messages"), claim.number))
    assert "The card drops off the bus under load" in browser.page_source
    assert _violations(browser) == []
