"""A PM receives a delivery in a real browser: three serials scanned with Enter into the scanner field, the
live count, a serial scanned twice marked (and not added again), one "Receive", and the page says so;
under the Content-Security-Policy, with no violation."""

from __future__ import annotations

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from inventory.models import Component
from tests import factories
from tests.e2e.browser_rig import DESKTOP, PHONE, screenshot

# Runs in every new document before its own scripts (as tests/e2e/test_csp_pages.py records them).
RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(event.violatedDirective + " " + (event.blockedURI || "inline"));
});
"""


@pytest.mark.django_db(transaction=True)
def test_a_pm_scans_three_serials_and_receives_them(live_server, browser, tenants, tmp_path):
    po = factories.make_po(deliver_to=tenants.partner_p, quantity=4)
    line = po.lines.get()
    wait = WebDriverWait(browser, 10)
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_VIOLATIONS})

    browser.get(f"{live_server.url}/accounts/login/")
    browser.find_element(By.NAME, "username").send_keys(tenants.pm.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(f"{live_server.url}/pm/"))
    url = f"{live_server.url}/pm/purchase-orders/{po.pk}/receive/"
    browser.get(url)

    receipt = browser.find_element(By.ID, f"receive-line-{line.pk}")
    receipt.find_element(By.NAME, f"line-{line.pk}-lot").send_keys("L-2291")
    receipt.find_element(By.NAME, f"line-{line.pk}-date_code").send_keys("2526")
    receipt.find_element(By.NAME, f"line-{line.pk}-origin").send_keys("TW")
    scan = receipt.find_element(By.CSS_SELECTOR, "[data-receipt-scan]")
    count = receipt.find_element(By.CSS_SELECTOR, "[data-receipt-count]")
    assert count.text == "0"
    for serial in ("SN-0001", "SN-0002", "SN-0003"):
        scan.send_keys(serial, Keys.ENTER)  # what the scanner sends: the serial, then Enter
    wait.until(lambda _driver: count.text == "3")
    assert browser.current_url == url  # Enter added the scans; it sent nothing
    listed = receipt.find_elements(By.CSS_SELECTOR, "[data-receipt-list] li")
    assert [item.get_attribute("data-serial") for item in listed] == ["SN-0001", "SN-0002", "SN-0003"]
    assert "4 open" in receipt.find_element(By.CSS_SELECTOR, "[data-receipt-count-line]").text

    # The same box scanned again (in another letter case, as a scanner may send it): marked, not added.
    scan.send_keys("sn-0002", Keys.ENTER)
    marked = wait.until(
        lambda _driver: receipt.find_element(By.CSS_SELECTOR, '[data-receipt-list] li[data-serial="SN-0002"]')
    )
    wait.until(lambda _driver: "duplicate" in marked.get_attribute("class"))
    assert "scanned twice" in marked.text
    assert count.text == "3"
    notice = receipt.find_element(By.CSS_SELECTOR, "[data-receipt-notice]")
    assert notice.text == "sn-0002 is already in the list (#2): not added again."
    assert browser.find_element(By.ID, f"id_line-{line.pk}-scanned").get_attribute("value") == (
        "SN-0001\nSN-0002\nSN-0003"
    )
    for width in (PHONE[0], DESKTOP[0]):
        screenshot(browser, tmp_path / f"receive-{width}.png", width=width)
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width

    receipt.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    message = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".messages .success")))
    assert message.text == "Received 3 serials into lot L-2291."
    assert sorted(Component.objects.filter(lot__lot_code="L-2291").values_list("serial", flat=True)) == [
        "SN-0001",
        "SN-0002",
        "SN-0003",
    ]
    line.refresh_from_db()
    assert line.quantity_received == 3
    # The page again, with one still open on the line and an empty list.
    receipt = browser.find_element(By.ID, f"receive-line-{line.pk}")
    assert receipt.find_element(By.CSS_SELECTOR, "[data-receipt-count]").text == "0"
    assert "1 open" in receipt.find_element(By.CSS_SELECTOR, "[data-receipt-count-line]").text
    # Pasted lines count too, and a duplicate among them, and more than is open, are named before sending.
    receipt.find_element(By.CSS_SELECTOR, "[data-receipt-paste]").send_keys("SN-0009\nsn-0009")
    wait.until(lambda _driver: receipt.find_element(By.CSS_SELECTOR, "[data-receipt-count]").text == "2")
    problems = receipt.find_element(By.CSS_SELECTOR, "[data-receipt-problems]")
    assert problems.text == (
        "More serials than the 1 still open on this line. Duplicates: sn-0009 (a duplicate of #1)"
    )
    count_line = receipt.find_element(By.CSS_SELECTOR, "[data-receipt-count-line]")
    assert "over" in count_line.get_attribute("class")
    assert browser.execute_script("return window.__cspViolations") == []
