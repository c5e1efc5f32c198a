"""Every portal page on a 390 px phone (issue #24, acceptance): no page scrolls sideways.

A customer member reads the portal of a realistic fleet: the portal tests' world (an order in ROI review
with its business case and workload, a server handed over with its serials, a blacklisted connector, a
failed and waived burn-in, warranty records and a claim, a server in a rack) with names as long as real
ones get, an investment of 95,000.00 EUR, a handover pack and a live API token. Each page reports no
Content-Security-Policy violation either; the screenshots go to $WERKBANK_SCREENSHOTS when set.
"""

from __future__ import annotations

import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from django.utils import translation
from django.utils.translation import gettext
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

from builds.models import Server
from deployment.models import RackPlacement
from orders.models import ROIAssessment, ServerConfiguration
from tests import factories
from tests.e2e.browser_rig import PHONE, screenshot
from tests.e2e.test_csp_pages import _record_violations, _violations
from tests.portal import portal_rig
from tests.warranty.handover_rig import ready_pack
from warranty.models import WarrantyRecord
from werkbank.models import Organization
from werkbank.services import api_token_create

audience_world = portal_rig.audience_world
portal_world = portal_rig.portal_world

#: The widest elements of a page that overflows, to name them in the failure.
CULPRITS = """
const limit = document.documentElement.clientWidth;
const over = (el) => el.getBoundingClientRect().right > limit + 1;
return [...document.querySelectorAll('main *')]
  .filter((el) => over(el) && !over(el.parentElement))
  .slice(0, 6)
  .map((el) => `${el.tagName.toLowerCase()}.${el.getAttribute('class') || ''}: `
    + `${Math.round(el.getBoundingClientRect().right)} px`);
"""

#: A business-case figure (the value after the label `arguments[0]`) and how many lines it takes.
FIGURE_LINES = """
const label = [...document.querySelectorAll('dl.facts dt')]
  .find((dt) => dt.textContent.trim() === arguments[0]);
const range = document.createRange();
range.selectNodeContents(label.nextElementSibling);
const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
return [label.nextElementSibling.textContent.trim(), lines.size];
"""


def _realistic(world: Any) -> None:
    """Long names and the figures of a real 8× RTX 5090 order, on the world's rows."""
    order = world.iso.order_a
    Organization.objects.filter(pk=world.t.customer_a.pk).update(
        name="Vastfleet Rentals und Rechenzentrumsbetrieb GmbH & Co. KG"
    )
    ServerConfiguration.objects.filter(pk=order.configuration_id).update(
        name="Vast.ai rental 6U · 8× RTX 5090 32 GB · dual EPYC 9554 · 1.5 TB DDR5 · 4× 7.68 TB NVMe"
    )
    ROIAssessment.objects.filter(order=order).update(
        capex=Decimal("95000.00"),
        price_per_gpu_hour=Decimal("0.4500"),
        net_month=Decimal("1436.33"),
        payback_months=Decimal("66.14"),
        npv=Decimal("-41123.45"),
    )
    server = world.builds.server
    Server.objects.filter(pk=server.pk).update(chassis_serial="SMC-C9125-7891234567890")
    ready_pack(server)
    # The handed-over server stands in the rack too (the world's placement moved onto it).
    RackPlacement.objects.filter(pk=world.deployment.placement.pk).update(server=server)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("language", ["en", "de"])
def test_every_portal_page_fits_a_390_px_phone(live_server, browser, portal_world, tmp_path, language):
    w = portal_world
    _realistic(w)
    Organization.objects.filter(pk=w.t.customer_a.pk).update(language=language)  # German words are longer
    with translation.override(language):
        investment, npv = (
            gettext("Investment per server"),
            gettext("Net present value over %(months)s months"),
        )
    capex = {"en": "95,000.00 EUR", "de": "95.000,00 EUR"}[language]
    api_token_create(user=w.t.user_a, actor=w.t.user_a)
    record = WarrantyRecord.objects.get(serial="P-SERIAL-1")
    assert record.claims.exists()
    pages = {
        "orders": "/portal/",
        "order-business-case": f"/portal/orders/{w.iso.order_a.pk}/",
        "order-approved": f"/portal/orders/{w.events_order.pk}/",
        "server-handed-over": f"/portal/servers/{w.builds.server.pk}/",
        "server-in-rack": f"/portal/servers/{w.deployment.ready.pk}/",
        "server-with-pack": f"/portal/servers/{w.warranty.deployed.pk}/",
        "warranty-list": "/portal/warranty/",
        "warranty-lookup": "/portal/warranty/?serial=P-SERIAL-1",
        "warranty-record-with-claim": f"/portal/warranty/records/{record.pk}/",
        "tokens": "/portal/tokens/",
    }
    folder = Path(os.environ.get("WERKBANK_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    _record_violations(browser)
    browser.set_window_size(*PHONE)
    wait = WebDriverWait(browser, 10)
    browser.get(f"{live_server.url}/accounts/login/")
    browser.find_element(By.NAME, "username").send_keys(w.t.user_a.username)
    browser.find_element(By.NAME, "password").send_keys(factories.PASSWORD, Keys.ENTER)
    wait.until(ec.url_to_be(f"{live_server.url}/portal/"))
    assert browser.execute_script("return document.documentElement.lang") == language

    wide: dict[str, Any] = {}
    for name, path in pages.items():
        browser.set_window_size(*PHONE)
        browser.get(f"{live_server.url}{path}")
        wait.until(ec.presence_of_element_located((By.TAG_NAME, "h1")))
        assert browser.current_url == f"{live_server.url}{path}", name
        width = browser.execute_script("return document.documentElement.scrollWidth")
        if width > PHONE[0]:
            wide[name] = (width, browser.execute_script(CULPRITS))
        assert _violations(browser) == [], name
        if name == "order-business-case":
            # Stacked under its label, a figure keeps its line: never "95,000 / .00".
            assert browser.execute_script(FIGURE_LINES, investment) == [capex, 1]
            assert browser.execute_script(FIGURE_LINES, npv % {"months": 36})[1] == 1
        screenshot(browser, folder / f"portal-{name}-{language}-{PHONE[0]}.png", width=PHONE[0])
    assert not wide, f"pages wider than {PHONE[0]} px (scrollWidth, widest elements): {wide}"
