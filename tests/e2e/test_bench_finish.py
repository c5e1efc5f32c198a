"""A technician logs a step with the per-item fields on a 390 px viewport and blacklists a connector through
the confirmation (issue #14, browser test 3). Screenshots of the final states go to var/screenshots/."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

from builds.choices import BuildStepKind
from builds.models import BuildStep, ChecklistItem, ConnectorBlacklist, Installation
from builds.services import find_component, server_install
from tests import factories
from tests.e2e.browser_rig import PHONE, screenshot
from tests.e2e.test_csp_pages import _record_violations, _violations

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
#: The serial's font size in the map's tiles (builds.drawing), in SVG user units.
SERIAL_FONT = 15


def _no_sideways_scroll(browser) -> None:
    width, inner = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth];")
    assert width <= inner, f"the page scrolls sideways: {width} > {inner}"


@pytest.mark.django_db(transaction=True)
def test_technician_logs_a_step_with_fields_and_blacklists_through_the_confirmation(
    live_server, browser, bench_build
):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    wait = WebDriverWait(browser, 10)
    server, user = bench_build.server, bench_build.user
    ChecklistItem.objects.create(
        configuration=server.order.configuration, kind=BuildStepKind.PCIE_TOPOLOGY_CHECK
    )
    serial = bench_build.serials[0]
    server_install(
        server=server,
        actor=user,
        component=find_component(serial=serial, user=user),
        connector_name="PCIE-A2",
    )
    _record_violations(browser)
    browser.get(f"{live_server.url}/accounts/login/?next=/bench/servers/{server.pk}/")
    browser.find_element(By.NAME, "username").send_keys(user.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(f"{live_server.url}/bench/servers/{server.pk}/"))
    browser.set_window_size(*PHONE)
    assert browser.execute_script("return window.innerWidth") == PHONE[0]

    # The map at 390 px: the tiles wrap, a serial is drawn at least 12 CSS px tall, nothing scrolls sideways.
    _no_sideways_scroll(browser)
    tile = browser.find_element(By.CSS_SELECTOR, '[data-connector="PCIE-A2"]').find_element(
        By.XPATH, "ancestor::*[local-name()='svg'][1]"
    )
    scale = tile.size["width"] / 132
    assert SERIAL_FONT * scale >= 12, f"serial drawn at {SERIAL_FONT * scale:.1f} px"
    tops = {
        element.location["y"]
        for element in browser.find_elements(By.CSS_SELECTOR, "[data-cooling-block='A'] svg.tile")
    }
    assert len(tops) == 2, "block A's four tiles wrap onto two rows on a phone"
    browser.find_element(By.ID, "map").screenshot(str(SCREENSHOTS / "bench-map-390.png"))

    # The PCIe topology check: its own fields, with units, ranges and a numeric keyboard; no JSON.
    browser.find_element(By.CSS_SELECTOR, "#step-pcie_topology_check summary").click()
    gpus = browser.find_element(By.ID, "step-pcie_topology_check_gpus_detected")
    assert (gpus.get_attribute("inputmode"), gpus.get_attribute("max")) == ("numeric", "16")
    bandwidth = browser.find_element(By.ID, "step-pcie_topology_check_h2d_gbps_min")
    assert bandwidth.get_attribute("inputmode") == "decimal"
    label = browser.find_element(By.CSS_SELECTOR, "label[for=step-pcie_topology_check_h2d_gbps_min]")
    assert label.text == "Lowest host-to-device bandwidth (GB/s)"
    gpus.send_keys("1")
    Select(browser.find_element(By.ID, "step-pcie_topology_check_link_gen")).select_by_value("Gen4")
    Select(browser.find_element(By.ID, "step-pcie_topology_check_link_width")).select_by_value("x16")
    bandwidth.send_keys("27.7")
    browser.find_element(By.ID, "step-pcie_topology_check_notes").send_keys("Card seated, x16 under load")
    browser.find_element(By.CSS_SELECTOR, "#step-pcie_topology_check button[type=submit]").click()
    message = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".messages .success")))
    assert message.text == "Logged PCIe topology check."
    step = BuildStep.objects.get(server=server)
    assert step.data == {
        "gpus_detected": 1,
        "link_gen": "Gen4",
        "link_width": "x16",
        "h2d_gbps_min": 27.7,
        "numa_balanced": False,  # left unticked: one card sits on one node
    }
    logged = browser.find_element(By.CSS_SELECTOR, '.steps-list li[data-step="pcie_topology_check"]')
    assert "Lowest host-to-device bandwidth: 27.7 GB/s" in logged.text

    # Blacklisting PCIE-A2, which holds the card: the dialog names the connector and says it is for good.
    browser.find_element(By.CSS_SELECTOR, "#blacklist details > summary").click()
    assert not browser.find_element(By.ID, "blacklist-confirm-row").is_displayed()  # the script asks
    Select(browser.find_element(By.ID, "blacklist_connector")).select_by_value("PCIE-A2")
    browser.find_element(By.ID, "blacklist_reason").send_keys("intermittent link training at x8")
    browser.find_element(By.ID, "blacklist_measured_gbps").send_keys("13.9")
    browser.find_element(By.ID, "blacklist_expected_gbps").send_keys("27.7")
    Select(browser.find_element(By.ID, "blacklist_link_width")).select_by_value("x8")
    Select(browser.find_element(By.ID, "blacklist_target_connector")).select_by_value("PCIE-A4")
    submit = browser.find_element(By.CSS_SELECTOR, "#blacklist-form button[type=submit]")
    submit.click()
    dialog = wait.until(ec.visibility_of_element_located((By.ID, "blacklist-dialog")))
    assert "Blacklist PCIE-A2 for good?" in dialog.text
    assert "This cannot be undone." in dialog.text
    screenshot(browser, SCREENSHOTS / "bench-blacklist-dialog-390.png", width=PHONE[0], full=False)
    # Cancel first: nothing happens.
    browser.find_element(By.ID, "blacklist-dialog-cancel").click()
    wait.until(ec.invisibility_of_element_located((By.ID, "blacklist-dialog")))
    assert not ConnectorBlacklist.objects.exists()

    submit.click()
    wait.until(ec.visibility_of_element_located((By.ID, "blacklist-dialog")))
    confirm = browser.find_element(By.ID, "blacklist-dialog-confirm")
    assert confirm.text == "Blacklist PCIE-A2"
    confirm.click()
    # The page still shows the step's message until the blacklist's answer replaces it: wait for the new text,
    # not for any success message (the old one goes stale under the reload).
    success = (By.CSS_SELECTOR, ".messages .success")
    wait.until(ec.text_to_be_present_in_element(success, "Blacklisted PCIE-A2"))
    message = browser.find_element(*success)
    assert (
        message.text == f"Blacklisted PCIE-A2: “intermittent link training at x8”. {serial} moved to PCIE-A4."
    )
    cell = browser.find_element(By.CSS_SELECTOR, '[data-connector="PCIE-A2"]')
    assert cell.get_attribute("data-state") == "blacklisted"
    moved = browser.find_element(By.CSS_SELECTOR, '[data-connector="PCIE-A4"]')
    assert (moved.get_attribute("data-state"), moved.get_attribute("data-serial")) == ("occupied", serial)
    entry = browser.find_element(By.CSS_SELECTOR, '.blacklist-entry[data-connector="PCIE-A2"]')
    assert "H2D 13.9 GB/s, expected 27.7 GB/s" in entry.text and "Link trained at x8" in entry.text
    assert ConnectorBlacklist.objects.get().connector.name == "PCIE-A2"
    assert Installation.objects.get(removed_at__isnull=True).connector.name == "PCIE-A4"
    _no_sideways_scroll(browser)
    assert _violations(browser) == []
    browser.find_element(By.ID, "map").screenshot(str(SCREENSHOTS / "bench-map-blacklisted-390.png"))
    screenshot(browser, SCREENSHOTS / "bench-server-finished-390.png", width=PHONE[0])
    screenshot(browser, SCREENSHOTS / "bench-server-finished-1400.png", width=1400)
    _no_sideways_scroll(browser)
