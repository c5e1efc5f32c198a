"""One whole order from draft to closed, through pages only (issue #24, acceptance).

A PM sets up a new customer in the admin (a user, the organisation with its contact e-mail, the membership),
enters an order with its ROI and workload, and takes it along the order page: submit; a second PM approves
(four eyes); procure to the partner's workshop. The PM sends the purchase order (admin action), receives
every serial by lot (receiving page) and gives the build to the partner (order page). The partner's
technician builds it on the bench (every serial scanned into its connector, every checklist step logged),
creates an API token on the bench's token page and uploads the probe's burn-in report with the command that
page writes: the one step that is not a page, as in the workshop. The PM waives the report's two failures
and passes the burn-in (burn-in page), places and networks the server (admin), deploys it (deployment page),
makes the handover pack and hands the server over (order page); the order follows to handed over and closed
by itself. The customer's member then finds the order closed, the warranty dated from today and the newest
pack revision in the portal. Every e-mail is checked as it goes out.

The setup (tests/e2e/whole_order_rig.py) writes only what exists before the customer does: the catalogue, the
workshop and the data centre. After it the test makes no /api/ request and calls no service; it reads the
database only to check. Screenshots of each step go to $WERKBANK_SCREENSHOTS/whole-order/ when it is set.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

pytest.importorskip("selenium", reason="selenium is a dev dependency: pip install -e '.[dev]'")

from django.contrib.auth import get_user_model
from django.utils import formats, timezone, translation

from builds.choices import ServerStatus
from builds.models import Server
from inventory.choices import PurchaseOrderStatus
from inventory.models import PurchaseOrder
from orders.choices import OrderStatus
from orders.models import Order
from tests.burnin.ingest_rig import fitted_report
from tests.e2e.whole_order_rig import (
    CHASSIS_CONNECTOR,
    CHECKLIST,
    GPU_SLOTS,
    Story,
    make_world,
    screenshots_folder,
    upload_report,
)
from warranty.models import WarrantyRecord
from werkbank.models import Organization

if TYPE_CHECKING:
    from pathlib import Path

    from tests.e2e.whole_order_rig import World

CUSTOMER = "Vastfleet Rentals GmbH"
CONTACT = "ops@vastfleet.example"
MEMBER = "lena"
MEMBER_EMAIL = "lena@vastfleet.example"
MEMBER_PASSWORD = "Vastfleet-2026-secret"
GPU_SERIALS = ("1652026000101", "1652026000102")
CHASSIS_SERIAL = "AD6U2026-0007"
#: Who hears of each of the order's transitions: the customer's contact address and its member.
CUSTOMER_TOLD = (CONTACT, MEMBER_EMAIL)


@pytest.mark.django_db(transaction=True)
def test_one_order_from_draft_to_closed_through_pages_only(
    live_server: Any, browser: Any, settings: Any, tmp_path: Path
) -> None:
    settings.WERKBANK_APPROVAL_FOUR_EYES = True  # as in production: the submitter does not approve
    world = make_world()
    story = Story(browser, live_server.url, screenshots_folder())

    member, order = the_pm_sets_up_the_customer_and_its_order(story, world)
    po = the_order_is_submitted_approved_and_procured(story, world, order)
    server = the_parts_arrive_and_the_build_goes_to_the_partner(story, world, order, po)
    the_partner_builds_the_server_on_the_bench(story, world, server)
    the_burn_in_is_uploaded_and_passed(story, world, order, server, live_server.url, tmp_path)
    the_server_is_deployed_and_handed_over(story, world, order, server)
    the_customer_finds_the_warranty_and_the_newest_pack(story, member, order, server)


def the_pm_sets_up_the_customer_and_its_order(story: Story, world: World) -> tuple[Any, Order]:
    """The admin: a user, the organisation with its contact and the membership; the order, its ROI and its
    workload. The ROI page then shows the gate's figures."""
    story.login(world.pm, lands_on="/pm/")
    story.admin_add(
        "auth/user", {"username": MEMBER, "password1": MEMBER_PASSWORD, "password2": MEMBER_PASSWORD}
    )
    story.admin_change({"email": MEMBER_EMAIL, "first_name": "Lena"})  # the add form leads to the change form
    member = get_user_model().objects.get(username=MEMBER)
    story.admin_add(
        "werkbank/organization",
        {
            "name": CUSTOMER,
            "kind": "customer",
            "contact_email": CONTACT,
            "language": "en",
            "memberships-0-user": member.pk,  # the membership inline
        },
    )
    customer = Organization.objects.get(name=CUSTOMER)
    assert [(each.user, each.organization) for each in member.memberships.all()] == [(member, customer)]
    story.shot("customer")

    story.admin_add(
        "orders/order",
        {
            "customer": customer.pk,
            "configuration": world.configuration.pk,
            "server_count": 1,
            "warranty_months": 36,
        },
    )
    order = Order.objects.get(customer=customer)
    story.admin_add(
        "orders/roiassessment",
        {
            "order": order.pk,
            "capex": "7000",
            "gpu_count": 2,
            "price_per_gpu_hour": "0.85",
            "utilization": "0.70",
            "power_active_kw": "1.4",
            "power_idle_kw": "0.3",
            "energy_price_kwh": "0.15",
            "pue": "1.3",
            "colo_month": "100",
        },
    )
    story.admin_add(
        "orders/workload",
        {
            "order": order.pk,
            "preset": "llama-3.1-8b",
            "weights_dtype": "bf16",
            "kv_dtype": "fp16",
            "context_tokens": 8192,
            "concurrency": 4,
            "tensor_parallel_gpus": 1,
            "overhead_fraction": "0.12",
        },
    )
    story.open(f"/pm/orders/{order.pk}/roi/")
    story.shot("roi")
    assert story.new_mails() == []  # nothing has moved yet
    return member, order


def the_order_is_submitted_approved_and_procured(story: Story, world: World, order: Order) -> PurchaseOrder:
    """The order page: the PM submits, another PM approves (four eyes), the first procures to the partner's
    workshop; the customer is told of each."""
    story.open(f"/pm/orders/{order.pk}/")
    assert story.browser.find_elements("id", "no-recipients") == []  # the customer will be told
    story.transition(order, "submit", note="ROI and workload entered.")
    story.told(order, CUSTOMER_TOLD, "ROI review")
    story.login(world.approver, lands_on="/pm/")
    story.transition(order, "approve", note="Every check passes.")
    story.told(order, CUSTOMER_TOLD, "Approved")
    story.login(world.pm, lands_on="/pm/")
    story.transition(order, "procure", deliver_to=world.partner.pk, note="EU supplier, to Kentino.")
    story.told(order, CUSTOMER_TOLD, "Procurement")
    story.shot("procured")
    [po] = PurchaseOrder.objects.filter(order_link__order=order)
    assert po.deliver_to == world.partner
    return po


def the_parts_arrive_and_the_build_goes_to_the_partner(
    story: Story, world: World, order: Order, po: PurchaseOrder
) -> Server:
    """The PO is sent (admin action) and every serial received by lot (the receiving page, from the order
    page); the build goes to the partner, whose members are e-mailed; the order's assembly starts."""
    said = story.admin_action("inventory/purchaseorder", "send_selected", [po])
    assert f"{po}: sent." in said, said
    to_customer = [each for each in story.new_mails() if set(each.to) & set(CUSTOMER_TOLD)]
    assert to_customer == []  # a PO is the supplier's business
    story.open(f"/pm/orders/{order.pk}/")
    story.press(f'tr[data-po="{po.number}"] a.receive-link')
    story.receive(po.lines.get(part=world.gpu), lot="L-5090-2611", serials=GPU_SERIALS, origin="TW")
    story.receive(po.lines.get(part=world.chassis), lot="L-AD6U-2611", serials=[CHASSIS_SERIAL], origin="CZ")
    story.shot("received")
    po.refresh_from_db()
    assert po.status == PurchaseOrderStatus.RECEIVED

    [server] = Server.objects.filter(order=order)
    story.open(f"/pm/orders/{order.pk}/")
    story.send("#assign-form", {"partner": world.partner.pk})
    story.success(f"{world.partner.name} now builds {server.hostname}")
    [assigned] = story.new_mails()
    assert sorted(assigned.to) == sorted([world.partner.contact_email, world.technician.email])
    assert order.reference in assigned.subject and server.hostname in assigned.body
    story.transition(order, "start_assembly", note="The parts are at Kentino.")
    story.told(order, CUSTOMER_TOLD, "Assembly")
    return server


def the_partner_builds_the_server_on_the_bench(story: Story, world: World, server: Server) -> None:
    """The technician starts the assembly, scans every serial into its connector, logs every checklist step
    and marks the server assembled. A server's own steps e-mail nobody."""
    story.login(world.technician, lands_on="/bench/")
    story.press(f'tr[data-server="{server.hostname}"] a')
    story.press("#assembly form[action$='/start-assembly/'] button")
    story.success(f"Assembly of {server.hostname} started.")
    for serial, connector in [*zip(GPU_SERIALS, GPU_SLOTS, strict=True), (CHASSIS_SERIAL, CHASSIS_CONNECTOR)]:
        story.scan_in(serial, connector)
    for kind in CHECKLIST:
        story.log_step(kind, "Done as the checklist says.")
    story.shot("bench-built")
    story.press("#assembly form[action$='/mark-assembled/'] button")
    story.success(f"{server.hostname} is assembled.")
    assert story.new_mails() == []


def the_burn_in_is_uploaded_and_passed(
    story: Story, world: World, order: Order, server: Server, url: str, folder: Path
) -> None:
    """The PM starts the order's burn-in (order page). The partner's token page gives a token and the probe's
    upload command for the server; the probe runs it, and the report moves the server into burn-in. On the
    burn-in page the PM waives the report's two failures with a reason (its burn stage was interrupted by the
    workshop's power, and it ran 10 of the promised 72 hours), then passes the server."""
    story.login(world.pm, lands_on="/pm/")
    story.transition(order, "start_burn_in", note="Built and checked.")
    story.told(order, CUSTOMER_TOLD, "Burn-in")

    story.login(world.technician, lands_on="/bench/tokens/")
    story.press("form[action='/bench/tokens/'] button[type=submit]")
    token = story.find("#new-token").get_attribute("value")
    command = story.text(f'#upload-commands h3[data-asset-tag="{server.asset_tag}"] + pre.command')
    assert token and token in command and f"--server {server.asset_tag}" in command, command
    story.shot("token")
    upload = upload_report(command, report=fitted_report(server), url=url, folder=folder)
    assert upload.returncode == 0 and "(HTTP 201, attempt 1" in upload.stdout, upload.stderr
    server.refresh_from_db()
    assert server.status == ServerStatus.BURN_IN  # nobody clicks: the report moved it

    story.login(world.pm, lands_on=f"/burnin/servers/{server.pk}/")
    assert "blocked" in story.classes("#gate-pass")
    assert story.waive_failures("Rerun of the full 72 h agreed with the customer, at the colocation.") == 2
    assert "ready" in story.classes("#gate-pass")
    story.shot("burnin-decided")
    story.send("#gate-pass", {"note": "Waivers recorded; passes."})
    story.success(f"{server.hostname} passed burn-in.")


def the_server_is_deployed_and_handed_over(story: Story, world: World, order: Order, server: Server) -> None:
    """The order's deployment starts (order page); the server is placed and networked (admin) and deployed
    (deployment page). The pack is made (order page) and waited for until the page shows it ready; the
    server is handed over, and the order follows it by itself: handed over, then closed."""
    story.transition(order, "start_deployment", note="To Frankfurt.")
    story.told(order, CUSTOMER_TOLD, "Deployment")
    story.admin_add(
        "deployment/rackplacement",
        {
            "server": server.pk,
            "rack": world.rack.pk,
            "lowest_u": 10,
            "face": "front",
            "feeds": [feed.pk for feed in world.feeds],
            "measured_wall_w": 1400,
        },
    )
    story.admin_add(
        "deployment/servernetwork",
        {
            "server": server.pk,
            "management_ip": "10.20.12.10",
            "bmc_ip": "10.21.12.10",
            "bmc_mac": "3c:ec:ef:12:00:0a",
        },
    )
    story.open(f"/deployment/servers/{server.pk}/")
    story.send("#deploy-form", {"note": "Racked in R12, U10–U15."})
    story.success(f"{server.hostname} is deployed.")
    story.shot("deployed")

    story.server_step(order, server.hostname, "form.server-pack")
    story.until_text(f'tr[data-server="{server.hostname}"] .pack-status', "Pack r1: Ready")
    assert story.new_mails() == []
    story.server_step(order, server.hostname, "form.server-hand-over")
    story.until_text("h1 .badge", "Closed")
    story.shot("closed")
    story.told(order, CUSTOMER_TOLD, "Handed over", "Closed")
    order.refresh_from_db()
    server.refresh_from_db()
    assert (order.status, server.status) == (OrderStatus.CLOSED, ServerStatus.HANDED_OVER)


def the_customer_finds_the_warranty_and_the_newest_pack(
    story: Story, member: Any, order: Order, server: Server
) -> None:
    """The portal, as the customer's member: the order closed with its server handed over; on the server's
    page the warranty of the server and every serial from today, and the pack revision that prints those
    dates (r2) offered as the newest."""
    story.login(member, lands_on=f"/portal/orders/{order.pk}/", password=MEMBER_PASSWORD)
    badge = story.find("h1 + p .badge")
    assert badge.get_attribute("data-status") == "closed" and "Closed" in badge.text, badge.text
    row = story.find(f'tr[data-server="{server.hostname}"]')
    assert "Handed over" in row.text
    story.shot("portal-order")
    story.press("a", within=row)

    records = {record.serial: record for record in WarrantyRecord.objects.filter(server=server)}
    assert set(records) == {*GPU_SERIALS, CHASSIS_SERIAL, server.asset_tag}
    assert {record.start_date for record in records.values()} == {timezone.localdate()}
    with translation.override("en"):
        dated = {
            serial: [
                formats.date_format(day, "SHORT_DATE_FORMAT") for day in (each.start_date, each.end_date)
            ]
            for serial, each in records.items()
        }
    # Serial, what, start, end, status.
    shown = story.table_rows("section[aria-labelledby='warranty-heading'] table")
    assert {cells[0]: cells[2:4] for cells in shown} == dated
    assert all("Active" in cells[4] for cells in shown), shown

    newest = story.find('table.documents-packs tr[data-revision="2"]')
    assert "newest" in (newest.get_attribute("class") or "").split() and "2 (newest)" in newest.text
    assert "1 (superseded)" in story.text('table.documents-packs tr[data-revision="1"]')
    story.shot("portal-server")
    assert story.new_mails() == []
