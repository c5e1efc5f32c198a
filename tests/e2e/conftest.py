"""Browser tests: a real headless Chromium (Debian's package) driven by selenium against `live_server`.

Skipped only where Chromium or chromedriver is missing and services are not required; under
WERKBANK_REQUIRE_SERVICES=1 (CI, where .ci/run installs them) a missing browser fails instead. Finding the
browser, the window sizes and screenshots: tests/e2e/browser_rig.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_rig import CHROMEDRIVER, CHROMIUM, PHONE, need_browser


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    """A fresh headless Chromium with its own profile, the size of a phone."""
    need_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--window-size={PHONE[0]},{PHONE[1]}",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(20)
    try:
        yield driver
    finally:
        driver.quit()


@dataclass
class BenchBuild:
    server: Any
    serials: list[str]
    user: Any


@pytest.fixture
def bench_build(tenants: Any) -> BenchBuild:
    """Partner P's server of a 7U chassis: two cooling blocks of four GPU bays, with GPUs in stock at P."""
    from builds.choices import ConnectorKind
    from builds.models import ChassisLayout, LayoutConnector
    from builds.services import server_assign_partner, servers_create_for_order
    from inventory.choices import PartCategory
    from tests import factories

    gpu = factories.PartFactory(category=PartCategory.GPU, mpn="RTX-PRO-6000-MQ")
    chassis = factories.ChassisFactory(mpn="KT-7U-2x4GPU", u_height=7)
    layout = ChassisLayout.objects.create(chassis=chassis, columns=8)
    for index in range(8):
        block = "A" if index < 4 else "B"
        LayoutConnector.objects.create(
            layout=layout,
            name=f"PCIE-{block}{index % 4 + 1}",
            kind=ConnectorKind.PCIE_SLOT,
            position=index + 1,
            numa_node=0 if block == "A" else 1,
            pcie_gen=4,
            pcie_lanes=16,
            cooling_block=block,
        )
    configuration = factories.ConfigurationFactory(lines=[(gpu, 6), (chassis, 1)])
    order = factories.OrderFactory(customer=tenants.customer_a, configuration=configuration, server_count=1)
    [server] = servers_create_for_order(order=order, actor=tenants.pm)
    server_assign_partner(server=server, actor=tenants.pm, partner=tenants.partner_p)
    serials = ["1652024031337", "1652024031338"]
    factories.receive_stock(deliver_to=tenants.partner_p, part=gpu, lots={"L-2291": serials}, origin="DE")
    return BenchBuild(server=server, serials=serials, user=tenants.user_p)
