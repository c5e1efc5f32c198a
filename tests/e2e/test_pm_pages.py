"""The PM's pages in a real browser: a PM lands on the pipeline, opens an order, sees what blocks
`start_burn_in`, and moves an order whose checks pass by its button; neither page scrolls sideways at
1400 px or on a 390 px phone.

Each flow keeps a screenshot of its final states under var/screenshots/ (git-ignored), as a test artifact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from builds.models import Server
from orders.choices import OrderStatus
from orders.models import Order
from tests import factories
from tests.e2e.browser_rig import PHONE, screenshot
from werkbank.models import AuditEvent

SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
WIDE = 1400


def _order_in_assembly(tenants: Any, statuses: list[str]) -> Order:
    order = factories.OrderFactory(
        customer=tenants.customer_a, status=OrderStatus.ASSEMBLY, server_count=len(statuses)
    )
    factories.pass_gate(order)
    for server, status in zip(factories.make_servers(order), statuses, strict=True):
        Server.objects.filter(pk=server.pk).update(status=status, partner=tenants.partner_p)
    return order


def _no_sideways_scroll(browser: Any, name: str) -> None:
    """The page at 1400 px and on a phone: screenshots of both, and no sideways scrolling at either."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in (WIDE, PHONE[0]):
        screenshot(browser, SCREENSHOTS / f"{name}-{width}.png", width=width)
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width, (name, width)


@pytest.mark.django_db(transaction=True)
def test_a_pm_sees_what_blocks_burn_in_and_moves_a_ready_order_by_its_button(live_server, browser, tenants):
    blocked = _order_in_assembly(tenants, ["assembled", "assembling"])
    ready = _order_in_assembly(tenants, ["assembled", "assembled"])
    wait = WebDriverWait(browser, 10)

    browser.get(f"{live_server.url}/accounts/login/")
    browser.find_element(By.NAME, "username").send_keys(tenants.pm.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(f"{live_server.url}/pm/"))  # a PM lands on the pipeline
    column = browser.find_element(By.CSS_SELECTOR, '[data-board="orders"] [data-status="assembly"]')
    assert column.find_element(By.CSS_SELECTOR, ".count").text == "2"
    _no_sideways_scroll(browser, "pm-pipeline")

    # The blocked order: its start_burn_in form says blocked, and why, before anyone clicks.
    browser.set_window_size(WIDE, 900)
    browser.find_element(By.CSS_SELECTOR, f'[data-order="{blocked.reference}"] a').click()
    wait.until(ec.url_to_be(f"{live_server.url}/pm/orders/{blocked.pk}/"))
    form = browser.find_element(By.CSS_SELECTOR, 'form[data-action="start_burn_in"]')
    assert "blocked" in form.get_attribute("class").split()
    assert (
        f"Server {blocked.reference.lower()}-02 is assembling; it must be assembled first."
        in form.find_element(By.CSS_SELECTOR, ".blockers").text
    )
    _no_sideways_scroll(browser, "pm-order-blocked")

    # The ready order moves by its button, with a note, and the page says so.
    browser.set_window_size(WIDE, 900)
    browser.get(f"{live_server.url}/pm/orders/{ready.pk}/")
    form = browser.find_element(By.CSS_SELECTOR, 'form[data-action="start_burn_in"]')
    assert "ready" in form.get_attribute("class").split()
    form.find_element(By.NAME, "start_burn_in-note").send_keys("Both servers are built and tested.")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    message = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, ".messages .success")))
    assert message.text == f"Start burn-in: order {ready.reference} is now Burn-in."
    assert browser.find_element(By.CSS_SELECTOR, "h1 .badge").get_attribute("data-status") == "burn_in"
    assert "Both servers are built and tested." in browser.find_element(By.CSS_SELECTOR, "ol.timeline").text
    _no_sideways_scroll(browser, "pm-order-moved")

    ready.refresh_from_db()
    blocked.refresh_from_db()
    assert (ready.status, blocked.status) == (OrderStatus.BURN_IN, OrderStatus.ASSEMBLY)
    assert AuditEvent.objects.for_object(ready).filter(verb="order.start_burn_in", actor=tenants.pm).exists()
