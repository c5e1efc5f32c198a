"""A partner logs in, opens a build on a phone-sized screen, scans a GPU into a slot, sees the map update."""

from __future__ import annotations

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

from builds.models import Installation
from tests import factories
from tests.e2e.browser_rig import DESKTOP, PHONE, screenshot


@pytest.mark.django_db(transaction=True)
def test_partner_scans_a_gpu_into_a_slot(live_server, browser, bench_build, tmp_path):
    wait = WebDriverWait(browser, 10)
    server, serial = bench_build.server, bench_build.serials[0]

    # The admin's login refuses non-staff users: partners log in on the plain login page.
    browser.get(f"{live_server.url}/accounts/login/?next=/bench/")
    browser.find_element(By.NAME, "username").send_keys(bench_build.user.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(f"{live_server.url}/bench/"))
    row = browser.find_element(By.CSS_SELECTOR, f'tr[data-server="{server.hostname}"]')
    assert "0 / 7" in row.text
    screenshot(browser, tmp_path / "bench-list-phone.png", width=PHONE[0])

    row.find_element(By.LINK_TEXT, server.hostname).click()
    wait.until(ec.url_to_be(f"{live_server.url}/bench/servers/{server.pk}/"))
    # The scanner types into whatever has the focus: the serial input has it on arrival.
    assert browser.switch_to.active_element.get_attribute("id") == "scan_serial"
    cell = browser.find_element(By.CSS_SELECTOR, '[data-connector="PCIE-B2"]')
    assert (cell.get_attribute("data-state"), cell.get_attribute("data-serial")) == ("free", "")

    browser.switch_to.active_element.send_keys(serial)
    Select(browser.find_element(By.ID, "scan_connector")).select_by_value("PCIE-B2")
    browser.find_element(By.ID, "scan_serial").send_keys(Keys.ENTER)  # what the scanner's Enter does

    message = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".messages .success")))
    assert message.text == f"Installed {serial} (RTX-PRO-6000-MQ) in PCIE-B2."
    cell = browser.find_element(By.CSS_SELECTOR, '[data-connector="PCIE-B2"]')
    assert (cell.get_attribute("data-state"), cell.get_attribute("data-serial")) == ("occupied", serial)
    neighbour = browser.find_element(By.CSS_SELECTOR, '[data-connector="PCIE-B1"]')
    assert neighbour.get_attribute("data-state") == "free"
    # Ready for the next card: the serial is focused and empty, the next free slot of block B is picked.
    focused = browser.switch_to.active_element
    assert (focused.get_attribute("id"), focused.get_attribute("value")) == ("scan_serial", "")
    assert Select(browser.find_element(By.ID, "scan_connector")).first_selected_option.text == "PCIE-B3"
    installation = Installation.objects.get(server=server, removed_at__isnull=True)
    assert (installation.component.serial, installation.connector.name) == (serial, "PCIE-B2")

    screenshot(browser, tmp_path / "bench-server-phone.png", width=PHONE[0])
    screenshot(browser, tmp_path / "bench-server-desktop.png", width=DESKTOP[0])
    assert (tmp_path / "bench-server-desktop.png").stat().st_size > 10_000
