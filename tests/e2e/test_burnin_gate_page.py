"""In a real browser, under the Content-Security-Policy: a PM waives the blocking findings on the burn-in page
and passes the server; a partner creates a token on the bench's token page and reads the probe's upload
command (issue #24, item 3). Both pages fit a 390 px phone without sideways scrolling."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
from django.conf import settings

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from builds.choices import ServerStatus
from builds.models import Server
from burnin.gates import burnin_gate_state
from tests import factories
from tests.burnin.test_gate import LINK_FAIL, LINK_FAIL_4, STAGES_OK, THERMAL_WARN
from tests.e2e.browser_rig import PHONE, screenshot
from tests.e2e.test_csp_pages import _record_violations, _violations


def _login(browser, live_server, user, path: str) -> None:
    browser.get(f"{live_server.url}/accounts/login/?next={path}")
    browser.find_element(By.NAME, "username").send_keys(user.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    WebDriverWait(browser, 10).until(ec.url_to_be(f"{live_server.url}{path}"))


def _fits_a_phone(browser, folder: Path, name: str) -> None:
    screenshot(browser, folder / f"{name}-{PHONE[0]}.png", width=PHONE[0])
    assert browser.execute_script("return document.documentElement.scrollWidth") <= PHONE[0], name


@pytest.mark.django_db(transaction=True)
def test_a_pm_waives_what_blocks_and_passes_the_burn_in(live_server, browser, tenants, tmp_path):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=2)
    servers = factories.make_servers(order, status=ServerStatus.BURN_IN)
    Server.objects.filter(order=order).update(partner=tenants.partner_p)
    seed003, server = servers
    # Seed 003's run, with its charts and its interrupted stage, for the page's layout on a phone.
    factories.make_seed003_burnin_run(seed003, hours=72)
    run = factories.make_burnin_run(server, findings=[LINK_FAIL, LINK_FAIL_4, THERMAL_WARN], stages=STAGES_OK)
    blocking = burnin_gate_state(server=server).blocking
    assert [finding.run_id for finding in blocking] == [run.pk, run.pk]
    folder = Path(os.environ.get("WERKBANK_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    _record_violations(browser)
    path = f"/burnin/servers/{seed003.pk}/"
    _login(browser, live_server, tenants.pm, path)
    wait = WebDriverWait(browser, 10)
    shown = browser.find_elements(By.CSS_SELECTOR, "#gate-blockers li")
    assert len(shown) == len(burnin_gate_state(server=seed003).missing) > 0
    _fits_a_phone(browser, folder, "burnin-gate")

    browser.get(f"{live_server.url}/burnin/servers/{server.pk}/")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#gate-blockers li")) == 2
    for finding in blocking:
        form = browser.find_element(By.CSS_SELECTOR, f'form[data-finding="{finding.pk}"]')
        form.find_element(By.XPATH, "ancestor::details/summary").click()
        reason = form.find_element(By.NAME, "reason")
        wait.until(ec.visibility_of(reason))
        reason.send_keys("Re-seated and measured again at x16; accepted")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(ec.staleness_of(form))
        wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".messages .success"), "waived"))
    wait.until(ec.presence_of_element_located((By.ID, "gate-ready")))
    browser.find_element(By.CSS_SELECTOR, "#gate-pass button[type=submit]").click()
    wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, ".messages .success"), "passed burn-in"))
    assert browser.find_elements(By.ID, "gate") == []
    server.refresh_from_db()
    assert server.status == ServerStatus.BURN_IN_PASSED
    assert _violations(browser) == []


@pytest.mark.django_db(transaction=True)
def test_a_partner_creates_a_token_and_reads_the_upload_command(live_server, browser, tenants, tmp_path):
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status=ServerStatus.ASSEMBLED)
    Server.objects.filter(pk=server.pk).update(partner=tenants.partner_p)
    folder = Path(os.environ.get("WERKBANK_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    _record_violations(browser)
    _login(browser, live_server, tenants.user_p, "/bench/")
    wait = WebDriverWait(browser, 10)

    browser.find_element(By.ID, "bench-tokens-link").click()
    wait.until(ec.url_to_be(f"{live_server.url}/bench/tokens/"))
    browser.find_element(By.XPATH, "//button[normalize-space()='Create a token']").click()
    token = wait.until(ec.presence_of_element_located((By.ID, "new-token"))).get_attribute("value")
    command = browser.find_element(By.CSS_SELECTOR, "#upload-commands pre.command").text
    assert shlex.split(command) == [
        "python3", "-m", "probe", "upload", "burnin.json",
        "--url", settings.WERKBANK_PUBLIC_URL, "--token", token, "--server", server.asset_tag,
    ]  # fmt: skip
    _fits_a_phone(browser, folder, "bench-tokens")
    assert _violations(browser) == []
