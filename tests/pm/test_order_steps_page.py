"""The server steps a PM takes on the order page (issue #24): give the builds to a partner, ask for the
handover pack, hand a server over; the order's own handover waits for its servers; the status e-mails
reach the customer's contact address, and a customer nobody can be told about is flagged."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail

from builds.choices import ServerStatus
from builds.models import Server
from inventory.models import PurchaseOrder
from orders.choices import OrderStatus
from orders.models import Order, OrderPurchaseOrder
from orders.services import order_status_notice_send
from tests import factories
from tests.warranty.handover_rig import World
from warranty.choices import PackStatus
from warranty.models import HandoverPack, WarrantyRecord
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def _planned_order(tenants: Any, *, servers: int = 2) -> Order:
    order = factories.OrderFactory(
        customer=tenants.customer_a, status=OrderStatus.PROCUREMENT, server_count=servers
    )
    factories.make_servers(order)
    po = factories.make_po(send=False)
    OrderPurchaseOrder.objects.create(order=order, purchase_order=po)
    return order


# --- assign a partner -------------------------------------------------------------------------------------


def test_a_pm_gives_every_open_build_to_a_partner_who_is_emailed(
    client, tenants, django_capture_on_commit_callbacks
):
    order = _planned_order(tenants)
    tenants.partner_p.contact_email = "werkstatt@praha.example"
    tenants.partner_p.save(update_fields=["contact_email"])
    client.force_login(tenants.pm)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/pm/orders/{order.pk}/assign/", {"partner": tenants.partner_p.pk})
    assert response.status_code == 303 and response["Location"] == f"/pm/orders/{order.pk}/"
    assert set(order.servers.values_list("partner", flat=True)) == {tenants.partner_p.pk}
    po = PurchaseOrder.objects.get(order_link__order=order)
    assert po.deliver_to == tenants.partner_p  # its serials land where the partner's bench finds them
    assert AuditEvent.objects.filter(verb="po.set_delivery", object_id=str(po.pk)).count() == 1
    assignment = AuditEvent.objects.get(verb="order.assign_partner")
    assert assignment.after["servers"] == [server.hostname for server in order.servers.order_by("sequence")]
    assert AuditEvent.objects.filter(verb="server.assign").count() == 2
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert sorted(message.to) == sorted([tenants.user_p.email, "werkstatt@praha.example"])
    assert order.reference in message.subject
    for server in order.servers.all():
        assert server.hostname in message.body
    assert "/bench/" in message.body
    # The bench shows the builds to the partner's member.
    client.force_login(tenants.user_p)
    page = client.get("/bench/")
    assert all(server.hostname in page.text for server in order.servers.all())


def test_one_server_only_and_nothing_left_to_give_is_a_409(
    client, tenants, django_capture_on_commit_callbacks
):
    order = _planned_order(tenants)
    first, second = order.servers.order_by("sequence")
    client.force_login(tenants.pm)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/pm/orders/{order.pk}/assign/", {"partner": tenants.partner_q.pk, "server": first.pk}
        )
    assert response.status_code == 303
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.partner == tenants.partner_q and second.partner is None
    client.post(f"/pm/orders/{order.pk}/assign/", {"partner": tenants.partner_q.pk})
    mail.outbox.clear()
    again = client.post(f"/pm/orders/{order.pk}/assign/", {"partner": tenants.partner_q.pk})
    assert again.status_code == 409
    assert "has no server left to give to Quelle Assembly GmbH" in again.text
    assert mail.outbox == []


def test_a_build_past_assembly_stays_with_its_partner(client, tenants):
    order = _planned_order(tenants, servers=1)
    server = order.servers.get()
    Server.objects.filter(pk=server.pk).update(status=ServerStatus.ASSEMBLED, partner=tenants.partner_p)
    client.force_login(tenants.pm)
    response = client.post(
        f"/pm/orders/{order.pk}/assign/", {"partner": tenants.partner_q.pk, "server": server.pk}
    )
    assert response.status_code == 409
    assert "can no longer move to another partner" in response.text
    server.refresh_from_db()
    assert server.partner == tenants.partner_p
    assert not AuditEvent.objects.filter(verb="order.assign_partner").exists()


def test_a_customer_is_no_partner_and_only_pms_assign(client, tenants):
    order = _planned_order(tenants, servers=1)
    client.force_login(tenants.pm)
    response = client.post(f"/pm/orders/{order.pk}/assign/", {"partner": tenants.customer_b.pk})
    assert response.status_code == 400
    assert "partner" in response.text
    for user in (tenants.user_a, tenants.user_p):
        client.force_login(user)
        assert (
            client.post(f"/pm/orders/{order.pk}/assign/", {"partner": tenants.partner_p.pk}).status_code
            == 404
        )
    assert order.servers.get().partner is None


def test_a_po_with_serials_received_keeps_its_address(tenants):
    from builds.services import order_assign_partner
    from inventory.services import po_set_delivery
    from werkbank.errors import RuleViolation

    po = factories.make_po(quantity=2)
    PurchaseOrder.objects.filter(pk=po.pk).update(status="partially_received")
    po.lines.update(quantity_received=1)
    with pytest.raises(RuleViolation, match="can no longer change to Praha Werkstatt"):
        po_set_delivery(po=po, actor=tenants.pm, deliver_to=tenants.partner_p)
    order = _planned_order(tenants, servers=1)
    OrderPurchaseOrder.objects.create(order=order, purchase_order=po)
    order_assign_partner(order=order, actor=tenants.pm, partner=tenants.partner_p)
    po.refresh_from_db()
    assert po.deliver_to is None  # received already: left where it was booked


# --- hand over --------------------------------------------------------------------------------------------


def test_a_pm_hands_a_server_over_and_the_dated_pack_follows(
    client, world: World, django_capture_on_commit_callbacks
):
    server = world.server
    client.force_login(world.t.pm)
    page = client.get(f"/pm/orders/{server.order_id}/")
    assert f"Hand {server.hostname} over" in page.text
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/pm/servers/{server.pk}/hand-over/",
            {"note": "at the rack", "next": f"/deployment/servers/{server.pk}/"},
        )
    assert response.status_code == 303 and response["Location"] == f"/deployment/servers/{server.pk}/"
    server.refresh_from_db()
    assert server.status == ServerStatus.HANDED_OVER
    assert WarrantyRecord.objects.filter(server=server).exists()
    assert AuditEvent.objects.filter(verb="warranty.records_create", object_id=str(server.pk)).exists()
    assert AuditEvent.objects.filter(verb="pack.request").count() == 1  # the dated revision, by the task
    newest = HandoverPack.objects.filter(server=server).order_by("-revision").first()
    assert newest.revision == 2 and newest.status in (PackStatus.QUEUED, PackStatus.RUNNING, PackStatus.READY)
    # A repeated records task finds its records and asks for no third revision.
    from warranty.services import handover_records_create

    assert handover_records_create(server=server) == []
    assert HandoverPack.objects.filter(server=server).count() == 2


def test_hand_over_without_a_ready_pack_is_refused_and_nothing_is_written(client, world: World):
    server = world.server
    HandoverPack.objects.filter(server=server).update(status=PackStatus.FAILED)
    client.force_login(world.t.pm)
    response = client.post(f"/pm/servers/{server.pk}/hand-over/")
    assert response.status_code == 409
    assert f"Server {server.hostname} has no ready handover pack" in response.text
    server.refresh_from_db()
    assert server.status == ServerStatus.DEPLOYED
    assert not WarrantyRecord.objects.filter(server=server).exists()


def test_only_pms_hand_over_or_ask_for_packs(client, world: World):
    server = world.server
    for user in (world.t.user_a, world.t.user_p, world.t.outsider):
        client.force_login(user)
        assert client.post(f"/pm/servers/{server.pk}/hand-over/").status_code == 404
        assert client.post(f"/pm/servers/{server.pk}/pack/").status_code == 404
    server.refresh_from_db()
    assert server.status == ServerStatus.DEPLOYED
    assert HandoverPack.objects.filter(server=server).count() == 1


def test_a_pm_asks_for_the_pack_from_the_server_page(client, world: World):
    server = world.server
    client.force_login(world.t.pm)
    page = client.get(f"/deployment/servers/{server.pk}/")
    assert "New pack revision" in page.text and f"Hand {server.hostname} over" in page.text
    response = client.post(f"/pm/servers/{server.pk}/pack/", {"next": f"/deployment/servers/{server.pk}/"})
    assert response.status_code == 303
    assert HandoverPack.objects.filter(server=server, revision=2).exists()
    # A foreign "next" is not followed.
    response = client.post(f"/pm/servers/{server.pk}/pack/", {"next": "https://evil.example/"})
    assert response["Location"] == f"/pm/orders/{server.order_id}/"


def test_the_order_hand_over_waits_for_its_deployed_servers(client, world: World):
    order = world.server.order
    client.force_login(world.t.pm)
    response = client.post(f"/pm/orders/{order.pk}/hand_over/", {"hand_over-note": ""})
    assert response.status_code == 409
    assert f"Server {world.server.hostname} is deployed; hand it over first" in response.text
    order.refresh_from_db()
    assert order.status == OrderStatus.DEPLOYMENT


# --- who is told ------------------------------------------------------------------------------------------


def test_status_emails_reach_the_contact_address_and_an_unreachable_customer_is_flagged(client, tenants):
    lonely = factories.OrganizationFactory(name="Vastfleet Test GmbH", contact_email="")
    order = factories.OrderFactory(customer=lonely)
    client.force_login(tenants.pm)
    page = client.get(f"/pm/orders/{order.pk}/")
    assert "Vastfleet Test GmbH will not be told: no contact e-mail" in page.text
    lonely.contact_email = "ops@vastfleet.example"
    lonely.save(update_fields=["contact_email"])
    assert "will not be told" not in client.get(f"/pm/orders/{order.pk}/").text
    from orders.services import order_submit

    order_submit(order=order, actor=tenants.pm)
    event = AuditEvent.objects.filter(verb="order.submit", object_id=str(order.pk)).get()
    notice = order_status_notice_send(event_id=event.pk)
    assert notice is not None and notice.recipients == ["ops@vastfleet.example"]
    assert mail.outbox[-1].to == ["ops@vastfleet.example"]
