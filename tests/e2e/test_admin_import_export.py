"""The admin's export and import pages in a real browser, under the Content-Security-Policy (issue #24, item
6): a PM exports the part list, uploads a CSV with a bad row (refused with its line, nothing written),
uploads it corrected, sees the preview and confirms; the browser reports no policy violation on the way.
"""

from __future__ import annotations

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from inventory.models import Part
from tests import factories
from tests.e2e.test_csp_pages import _record_violations, _violations

HEADER = (
    "category,manufacturer,mpn,name,vram_gb,tdp_w,pcie_gen,pcie_lanes,u_height,list_price,preferred_supplier"
)
GPU = "gpu,NVIDIA,RTX5090-E2E,GeForce RTX 5090 32 GB,32,575,5,16,,2399.00,"


def _upload(browser, live_server, tmp_path, *lines: str) -> None:
    path = tmp_path / "parts.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    browser.get(f"{live_server.url}/admin/inventory/part/import/")
    browser.find_element(By.NAME, "import_file").send_keys(str(path))
    browser.find_element(By.CSS_SELECTOR, "form input[type=submit]").click()


@pytest.mark.django_db(transaction=True)
def test_a_pm_exports_and_imports_parts_under_the_policy(live_server, browser, tenants, tmp_path):
    factories.PartFactory(mpn="RTX-PRO-6000")
    browser.set_window_size(1400, 900)
    _record_violations(browser)
    wait = WebDriverWait(browser, 10)
    browser.get(f"{live_server.url}/admin/login/?next=/admin/inventory/part/")
    browser.find_element(By.NAME, "username").send_keys("pm")
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.presence_of_element_located((By.ID, "changelist")))
    # The list's tools: Import, Export and Add, and the list still fits the screen.
    tools = [link.text.lower() for link in browser.find_elements(By.CSS_SELECTOR, ".object-tools a")]
    assert tools[:2] == ["import", "export"]  # drawn in capitals by the admin's stylesheet
    assert browser.execute_script("return document.documentElement.scrollWidth") <= 1400
    browser.find_element(By.CSS_SELECTOR, ".object-tools a.export_link").click()
    wait.until(ec.presence_of_element_located((By.NAME, "format")))
    options = [option.text for option in browser.find_elements(By.CSS_SELECTOR, "select[name=format] option")]
    assert "csv" in options and "xlsx" in options
    assert _violations(browser) == []

    # A CPU with VRAM on line 3: refused with its line and the rule, nothing offered, nothing written.
    _upload(browser, live_server, tmp_path, HEADER, GPU, "cpu,AMD,EPYC-E2E,EPYC 9555,16,360,5,,,4100.00,")
    line = wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "td.import-line")))
    assert line.text == "3"
    assert "only a GPU has VRAM." in browser.find_element(By.CSS_SELECTOR, "table.import-preview").text
    assert not browser.find_elements(By.NAME, "confirm")
    assert not Part.objects.filter(mpn__in=["RTX5090-E2E", "EPYC-E2E"]).exists()
    assert _violations(browser) == []

    _upload(browser, live_server, tmp_path, HEADER, GPU, "cpu,AMD,EPYC-E2E,EPYC 9555,,360,5,,,4100.00,")
    confirm = wait.until(ec.element_to_be_clickable((By.NAME, "confirm")))
    assert "RTX5090-E2E" in browser.find_element(By.CSS_SELECTOR, "table.import-preview").text
    assert not Part.objects.filter(mpn__in=["RTX5090-E2E", "EPYC-E2E"]).exists()
    confirm.click()
    wait.until(ec.presence_of_element_located((By.ID, "changelist")))
    assert "Import finished: 2 new" in browser.find_element(By.CSS_SELECTOR, ".messagelist").text
    assert Part.objects.filter(mpn__in=["RTX5090-E2E", "EPYC-E2E"]).count() == 2
    assert _violations(browser) == []
