"""Giving an order's builds to an assembly partner: its servers, the delivery address of the purchase orders
that serve them, and the e-mail that tells the partner's members (issue #24)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import transaction
from django.urls import reverse

from builds.choices import BENCH_OPEN
from builds.models import Server
from builds.services.servers import server_assign_partner
from inventory.choices import PurchaseOrderStatus
from inventory.models import PurchaseOrder
from inventory.services import po_set_delivery
from orders.models import Order, StatusNotice
from orders.services import notice_send_once
from werkbank.audit import audit
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent, Organization
from werkbank.services import organization_recipients
from werkbank.tasks import enqueue_on_commit
from werkbank.types import Actor


@transaction.atomic
def order_assign_partner(
    *, order: Order, actor: Actor, partner: Organization, servers: Sequence[Server] | None = None
) -> list[Server]:
    """Give the order's open builds (or the chosen `servers` of it) to `partner`; returns the servers it
    moved.

    Each server goes through `server_assign_partner` (audited on the server). The order's purchase orders
    that have no delivery address and nothing received yet are delivered to the partner's workshop
    (`po_set_delivery`), so that the serials land where the partner's bench finds them. One
    `order.assign_partner` audit row on the order names the servers; on commit a task e-mails the
    partner's members once for it.
    """
    if partner.kind != OrganizationKind.PARTNER:
        raise InvalidInput("partner", f"{partner.name} is not an assembly partner.")
    foreign = [server.hostname for server in servers or () if server.order_id != order.pk]
    if foreign:
        raise InvalidInput("server", f"Server {foreign[0]} belongs to another order than {order.reference}.")
    if servers:
        chosen = list(servers)  # chosen servers: each its own refusal when its build can no longer move
    else:
        chosen = [
            each
            for each in order.servers.order_by("sequence")
            if each.status in BENCH_OPEN and each.partner_id != partner.pk
        ]
        if not chosen:
            raise RuleViolation(
                f"Order {order.reference} has no server left to give to {partner.name}: every open build "
                "is already theirs, and a build past assembly stays with its partner.",
                missing=["a server that is planned, assembling or back for rework"],
                code="nothing_to_assign",
            )
    moved = [server_assign_partner(server=each, actor=actor, partner=partner) for each in chosen]
    # Draft or sent: nothing of them has arrived (receiving settles a PO as partially received).
    undelivered = PurchaseOrder.objects.filter(
        order_link__order=order,
        deliver_to__isnull=True,
        status__in=[PurchaseOrderStatus.DRAFT, PurchaseOrderStatus.SENT],
    ).order_by("pk")
    delivered = [po_set_delivery(po=po, actor=actor, deliver_to=partner).number for po in undelivered]
    event = audit(
        actor=actor,
        verb="order.assign_partner",
        obj=order,
        after={
            "partner": partner.name,
            "partner_id": partner.pk,
            "servers": [each.hostname for each in moved],
            "purchase_orders_delivered": delivered,
        },
    )
    enqueue_on_commit("builds.tasks.partner_assigned_notify_task", event_id=event.pk)
    return moved


@transaction.atomic
def partner_assigned_notice_send(*, event_id: int) -> StatusNotice | None:
    """E-mail the partner's members (and its contact address) once about one `order.assign_partner` event;
    the notice row, unique per event, makes a repeated task send nothing."""
    event = AuditEvent.objects.get(pk=event_id)
    order = Order.objects.select_related("configuration").get(pk=int(event.object_id))
    partner = Organization.objects.get(pk=event.after["partner_id"], kind=OrganizationKind.PARTNER)
    recipients = organization_recipients(partner)
    language = partner.language if partner.language in ("en", "de") else "en"

    def context() -> dict[str, Any]:
        return {
            "order": order,
            "partner": partner,
            "servers": event.after.get("servers", []),
            "bench_url": settings.WERKBANK_PUBLIC_URL + reverse("bench:list"),
        }

    return notice_send_once(
        event=event,
        order=order,
        recipients=recipients,
        language=language,
        template="partner_assigned",
        context=context,
    )
