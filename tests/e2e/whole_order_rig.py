"""Helpers of the whole-order browser test (tests/e2e/test_whole_order.py, issue #24): the catalogue, the
workshop and the data centre that exist before the customer does, and `Story`, which drives the pages as a
person would.

`make_world` writes with factories and services (the setup); after it the test reads the database only to
check, and every change goes through a page. `Story` logs users in, fills and sends forms, waits for the page
that answers (never sleeps), fails with what the page said when it refused, keeps a screenshot per step where
WERKBANK_SCREENSHOTS names a folder, and reads the e-mails sent since its last look (the live server runs in
the test's process, so they land in locmem's `mail.outbox`). `upload_report` runs the probe's upload command
as the partner's token page wrote it: the one step that is not a page.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, cast

from django.core import mail
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.ui import WebDriverWait

from builds.choices import BuildStepKind, ConnectorKind
from builds.models import ChassisLayout, ChecklistItem, LayoutConnector
from deployment.choices import SiteKind
from deployment.models import PowerFeed, Rack, Site
from deployment.services import feed_create, rack_create, site_create
from inventory.choices import PartCategory
from inventory.models import Part, PurchaseOrderLine, Supplier
from orders.models import ServerConfiguration
from tests import factories
from tests.e2e.browser_rig import screenshot
from tests.probe.probe_rig import REPO_ROOT, run_probe
from werkbank.models import Organization

#: The window the story is drawn at: the admin's change lists and forms need the width.
WINDOW = (1400, 1000)
#: How long a page may take to answer (the handover pack renders in the request: tasks run eagerly).
PATIENCE_S = 20

#: A page's success messages (ours, the admin's), and its refusals and form errors.
SUCCESS = ".messages .success, .messagelist .success"
REFUSAL = ".error-box, .errornote, .errorlist, .messages .error, .messagelist .error"

#: The connectors of the chassis: the chassis' own and two GPU slots.
CHASSIS_CONNECTOR = "CHASSIS"
GPU_SLOTS = ("PCIE-1", "PCIE-2")
#: The configuration's checklist (their fields are optional: logging the step is the check).
CHECKLIST = (BuildStepKind.CABLE_ROUTING, BuildStepKind.QC_SIGNOFF)


@dataclass
class World:
    """What exists before the customer: two PMs (four eyes: one submits, the other approves), partner
    Kentino's workshop with its technician, an EU supplier, a 6U chassis with two GPU slots, the
    configuration of 2× RTX 5090 with its checklist, and a colocation site with a rack and its two feeds."""

    pm: Any
    approver: Any
    partner: Organization
    technician: Any
    supplier: Supplier
    gpu: Part
    chassis: Part
    configuration: ServerConfiguration
    site: Site
    rack: Rack
    feeds: list[PowerFeed]


def make_world() -> World:
    """The setup: catalogue, workshop and data centre, written with factories and services (the factories'
    results cast to their models for mypy). The figures pass the approval gate: 2 × 575 W of GPUs against
    4 × 1600 W usable, 2 × 32 GB of VRAM for an 8B model."""
    pm = factories.make_pm(username="pia", email="pia@werkbank.example")
    approver = factories.make_pm(username="paul", email="paul@werkbank.example")
    partner = cast(
        Organization,
        factories.PartnerFactory(name="Kentino Werkstatt s.r.o.", contact_email="werkstatt@kentino.example"),
    )
    technician = factories.make_member(partner, username="tomas", email="tomas@kentino.example")
    supplier = cast(Supplier, factories.SupplierFactory(name="EuroGPU Distribution GmbH", country="DE"))
    gpu = cast(
        Part,
        factories.PartFactory(
            category=PartCategory.GPU,
            manufacturer="NVIDIA",
            mpn="RTX5090-32G-SRV",
            name="GeForce RTX 5090 32 GB",
            vram_gb=32,
            tdp_w=575,
            pcie_gen=5,
            pcie_lanes=16,
            list_price=Decimal("2400.00"),
            preferred_supplier=supplier,
        ),
    )
    chassis = cast(
        Part,
        factories.ChassisFactory(
            manufacturer="Aura Digital",
            mpn="AD-6U-2GPU",
            name="6U rack chassis, two GPU slots",
            u_height=6,
            list_price=Decimal("2200.00"),
            preferred_supplier=supplier,
        ),
    )
    layout = ChassisLayout.objects.create(chassis=chassis, columns=4)
    LayoutConnector.objects.create(
        layout=layout, name=CHASSIS_CONNECTOR, kind=ConnectorKind.CHASSIS, position=1
    )
    for position, name in enumerate(GPU_SLOTS, start=2):
        LayoutConnector.objects.create(
            layout=layout,
            name=name,
            kind=ConnectorKind.PCIE_SLOT,
            position=position,
            numa_node=0,
            pcie_gen=4,  # the platform of the probe's report (seed 003): a Gen5 card runs at Gen4
            pcie_lanes=16,
        )
    configuration = cast(
        ServerConfiguration,
        factories.ConfigurationFactory(
            name="Rental 6U · 2× RTX 5090", lines=[(gpu, len(GPU_SLOTS)), (chassis, 1)]
        ),
    )
    for kind in CHECKLIST:
        ChecklistItem.objects.create(configuration=configuration, kind=kind)
    site = site_create(
        actor=pm,
        name="Frankfurt Colo 2",
        kind=SiteKind.COLOCATION,
        operator="Colo Main GmbH",
        customer=None,
        address="Hanauer Landstraße 300, Frankfurt",
        country="DE",
    )
    rack = rack_create(site=site, actor=pm, name="R12", height_u=42)
    feeds = [
        feed_create(rack=rack, actor=pm, name=f"PDU-{leg}", leg=leg, voltage_v=230, current_a=16, phases=1)
        for leg in ("A", "B")
    ]
    return World(
        pm=pm,
        approver=approver,
        partner=partner,
        technician=technician,
        supplier=supplier,
        gpu=gpu,
        chassis=chassis,
        configuration=configuration,
        site=site,
        rack=rack,
        feeds=feeds,
    )


def screenshots_folder() -> Path | None:
    """$WERKBANK_SCREENSHOTS/whole-order, emptied of an earlier run's screenshots; None when unset."""
    folder = os.environ.get("WERKBANK_SCREENSHOTS")
    if not folder:
        return None
    path = Path(folder) / "whole-order"
    path.mkdir(parents=True, exist_ok=True)
    for old in path.glob("*.png"):
        old.unlink()
    return path


def upload_report(command: str, *, report: bytes, url: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """Run the upload command as the token page wrote it (`python3 -m probe upload burnin.json --url …
    --token … --server …`): the report written to `folder` under the command's file name, and the live
    server's address for the page's (WERKBANK_PUBLIC_URL, where no test server answers)."""
    words = shlex.split(command)
    assert words[:4] == ["python3", "-m", "probe", "upload"], command
    arguments = words[4:]
    report_file = folder / arguments[0]
    report_file.write_bytes(report)
    arguments[0] = str(report_file)
    arguments[arguments.index("--url") + 1] = url
    env = {key: value for key, value in os.environ.items() if key != "WERKBANK_TOKEN"}
    env["PYTHONPATH"] = str(REPO_ROOT)
    return run_probe(["upload", *arguments, "--max-attempts", "1"], env=env, timeout=120)


@dataclass
class Story:
    """One browser walking through the pages of the live server at `url`."""

    browser: Any
    url: str
    folder: Path | None = None
    shots: int = 0
    mails_seen: int = 0
    wait: WebDriverWait = field(init=False)

    def __post_init__(self) -> None:
        self.wait = WebDriverWait(self.browser, PATIENCE_S)
        self.browser.set_window_size(*WINDOW)

    # --- moving about ---------------------------------------------------------------------------------

    def open(self, path: str) -> None:
        self.browser.get(f"{self.url}{path}")

    def path(self) -> str:
        return self.browser.current_url.removeprefix(self.url)

    def login(self, user: Any, *, lands_on: str, password: str = factories.PASSWORD) -> None:
        """Log `user` in on the plain login page, ending anyone else's session first. The page's first
        submit button switches the language: Enter in the password field sends the login."""
        self.browser.delete_all_cookies()
        self.open(f"/accounts/login/?next={lands_on}")
        self.browser.find_element(By.NAME, "username").send_keys(user.username)
        self.browser.find_element(By.NAME, "password").send_keys(password, Keys.ENTER)
        try:
            self.wait.until(ec.url_to_be(f"{self.url}{lands_on}"))
        except TimeoutException:
            raise AssertionError(f"{user.username} did not get to {lands_on}:\n{self._said()}") from None

    def shot(self, name: str) -> None:
        """Keep the whole page as it is now, numbered in story order, where a folder is given."""
        if self.folder is None:
            return
        self.shots += 1
        screenshot(self.browser, self.folder / f"{self.shots:02d}-{name}.png", width=WINDOW[0])
        self.browser.set_window_size(*WINDOW)

    # --- reading the page -----------------------------------------------------------------------------

    def find(self, css: str, within: WebElement | None = None) -> WebElement:
        return (within or self.browser).find_element(By.CSS_SELECTOR, css)

    def text(self, css: str = "main") -> str:
        return self.find(css).text

    def table_rows(self, css: str) -> list[list[str]]:
        """The text of each cell of each body row of the table `css`."""
        rows = self.find(css).find_elements(By.CSS_SELECTOR, "tbody tr")
        return [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "td, th")] for row in rows]

    def classes(self, css: str) -> list[str]:
        return (self.find(css).get_attribute("class") or "").split()

    def until_text(self, css: str, text: str) -> WebElement:
        """Wait until the element `css` holds `text`; on a timeout, say what the page held instead."""
        try:
            self.wait.until(ec.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))
        except TimeoutException:
            raise AssertionError(
                f"{text!r} never appeared in {css} on {self.path()}:\n{self._said()}"
            ) from None
        return self.find(css)

    def success(self, text: str) -> str:
        """Wait for a success message holding `text`; a refusal or a form error fails at once, quoted."""
        with contextlib.suppress(TimeoutException):
            self.wait.until(lambda driver: text in self._messages(SUCCESS) or self._messages(REFUSAL))
        refusal, said = self._messages(REFUSAL), self._messages(SUCCESS)
        assert text in said and not refusal, (
            f"on {self.path()}: wanted {text!r}; the page says:\n{self._said()}"
        )
        return said

    def _messages(self, css: str) -> str:
        return "\n".join(element.text for element in self.browser.find_elements(By.CSS_SELECTOR, css))

    def _said(self) -> str:
        return self._messages(f"{SUCCESS}, {REFUSAL}, main, #content")[:3000]

    # --- forms ----------------------------------------------------------------------------------------

    def fill(self, values: dict[str, Any], within: WebElement | None = None) -> None:
        """Type or choose each value into the field of that name: a select by value or else by its visible
        text (a list of them for a multiple select), a checkbox by truth, anything else typed over."""
        for name, value in values.items():
            element = self.find(f'[name="{name}"]', within)
            if element.tag_name == "select":
                choose = Select(element)
                if choose.is_multiple:
                    choose.deselect_all()
                offered = [option.get_attribute("value") for option in choose.options]
                for each in value if isinstance(value, list | tuple) else [value]:
                    if str(each) in offered:
                        choose.select_by_value(str(each))
                    else:
                        choose.select_by_visible_text(str(each))
            elif element.get_attribute("type") == "checkbox":
                if element.is_selected() != bool(value):
                    element.click()
            else:
                element.clear()
                element.send_keys(str(value))

    def press(self, css: str, within: WebElement | None = None) -> None:
        """Press a button (or follow a link) and wait for the page it leads to."""
        target = self.find(css, within)
        self._leaving()
        target.click()
        self._arrived()

    def _leaving(self) -> None:
        """Mark the page being left: the mark is gone once the next page has loaded (an element's staleness
        races with Chromium's navigation, which may answer "node does not belong to the document")."""
        self.browser.execute_script("window.storyLeaving = true;")

    def _arrived(self) -> None:
        WebDriverWait(self.browser, PATIENCE_S, ignored_exceptions=(WebDriverException,)).until(
            lambda driver: driver.execute_script(
                "return !window.storyLeaving && document.readyState === 'complete';"
            )
        )

    def send(self, css: str, values: dict[str, Any], *, button: str = "button[type=submit]") -> None:
        """Fill the form (or the part of the page) `css` with `values` and press its button."""
        form = self.find(css)
        self.fill(values, within=form)
        self.press(button, within=form)

    # --- the admin ------------------------------------------------------------------------------------

    def admin_add(self, model: str, values: dict[str, Any]) -> str:
        """Fill the admin's add form of `model` ("app/model") and save; returns the success message."""
        self.open(f"/admin/{model}/add/")
        self.fill(values)
        self.press('input[name="_save"]')
        return self.success("was added successfully")

    def admin_change(self, values: dict[str, Any]) -> str:
        """Change the admin form that is open and save it."""
        self.fill(values)
        self.press('input[name="_save"]')
        return self.success("was changed successfully")

    def admin_action(self, model: str, action: str, rows: Sequence[Any]) -> str:
        """Tick `rows` on the admin change list of `model`, run `action`; returns the page's messages."""
        self.open(f"/admin/{model}/")
        for obj in rows:
            box = self.find(f'input[name="_selected_action"][value="{obj.pk}"]')
            if not box.is_selected():
                box.click()
        self.fill({"action": action})
        self.press('button[name="index"]')
        return self._messages(".messagelist")

    # --- the PM's pages -------------------------------------------------------------------------------

    def transition(self, order: Any, action: str, **fields: Any) -> str:
        """Send the order page's form of `action` (a note, any other field of it); returns the message."""
        self.open(f"/pm/orders/{order.pk}/")
        self.send(
            f'form[data-action="{action}"]', {f"{action}-{name}": value for name, value in fields.items()}
        )
        return self.success(f"order {order.reference} is now")

    def server_step(self, order: Any, hostname: str, form: str) -> str:
        """Press the button of a form in the server's row of the order page (form.server-pack, …)."""
        self.open(f"/pm/orders/{order.pk}/")
        self.send(f'tr[data-server="{hostname}"] {form}', {})
        return self.success(hostname)

    def receive(self, line: PurchaseOrderLine, *, lot: str, serials: Sequence[str], origin: str) -> None:
        """On the receiving page: one lot of the line, its serials pasted one per line, then "Receive"."""
        prefix = f"line-{line.pk}"
        values = {"lot": lot, "date_code": "2611", "origin": origin, "paste": "\n".join(serials)}
        self.send(
            f"#receive-line-{line.pk} form", {f"{prefix}-{name}": value for name, value in values.items()}
        )
        self.success(f"Received {len(serials)} serial")

    def waive_failures(self, reason: str) -> int:
        """On the burn-in page: waive every unwaived `fail` finding of the judged run with `reason`, one
        form at a time (each answer is the page again); returns how many."""
        waived = 0
        css = "#findings li.fail:not(.waived) details.waive"
        while forms := self.browser.find_elements(By.CSS_SELECTOR, css):
            self.find("summary", within=forms[0]).click()
            self.fill({"reason": reason}, within=forms[0])
            self.press("button[type=submit]", within=forms[0])
            self.success(f"waived: “{reason}”")
            waived += 1
        return waived

    # --- the bench ------------------------------------------------------------------------------------

    def scan_in(self, serial: str, connector: str) -> None:
        """Scan a serial with the connector picked; the scanner's Enter in the serial field installs it."""
        self.fill({"serial": serial, "connector": connector}, within=self.find("#scan"))
        self._leaving()
        self.find("#scan_serial").send_keys(Keys.ENTER)
        self._arrived()
        self.success(f"Installed {serial} ")

    def log_step(self, kind: str, notes: str) -> None:
        """Open the checklist item's form, write its notes, log it."""
        step = self.find(f"#step-{kind}")
        self.find("summary", within=step).click()
        self.fill({"notes": notes}, within=step)
        self.press("button[type=submit]", within=step)
        self.success("Logged ")

    # --- e-mails --------------------------------------------------------------------------------------

    def new_mails(self) -> list[Any]:
        """The e-mails sent since the last look."""
        fresh = mail.outbox[self.mails_seen :]
        self.mails_seen = len(mail.outbox)
        return list(fresh)

    def told(self, order: Any, recipients: Sequence[str], *statuses: str) -> None:
        """Since the last look, one status e-mail per transition went to `recipients` together, each naming
        the order and its new status, in this order; and nothing else was sent."""
        mails = self.new_mails()
        assert [sorted(each.to) for each in mails] == [sorted(recipients)] * len(statuses), [
            (each.subject, each.to) for each in mails
        ]
        for each, status in zip(mails, statuses, strict=True):
            assert each.subject == f"[Werkbank] Order {order.reference}: {status}"
            assert f"your order {order.reference} " in each.body and f'to "{status}"' in each.body, each.body
            assert f"/portal/orders/{order.pk}/" in each.body
