"""Customer notices: one e-mail per status change, in the customer's language, sent at most once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from orders.choices import (
    REASON_REQUIRED,
    OrderStatus,
)
from orders.models import (
    Order,
    StatusNotice,
)
from werkbank.choices import label_of
from werkbank.models import AuditEvent
from werkbank.services import organization_recipients


@transaction.atomic
def order_status_notice_send(*, event_id: int) -> StatusNotice | None:
    """E-mail the customer (its contact address and its members) about one status transition, once.

    The notice row is unique per audit event and is written before the mail goes out, in the same
    transaction: a second delivery of the same task finds it and sends nothing. If sending fails, the row
    rolls back and the task's retry sends it.
    """
    event = AuditEvent.objects.select_related("actor").get(pk=event_id)
    order = Order.objects.select_related("customer").get(pk=int(event.object_id))
    recipients = organization_recipients(order.customer)
    language = order.customer.language or "en"

    def context() -> dict[str, Any]:
        return {
            "order": order,
            "before": label_of(OrderStatus, event.before.get("status", "")),
            "after": label_of(OrderStatus, event.after["status"]),
            # A rejection's or cancellation's reason is addressed to the customer; any other transition's
            # note (an override reason, a PM's remark) is internal to the builder (werkbank/audiences.py).
            "note": event.note if event.verb.removeprefix("order.") in REASON_REQUIRED else "",
            "when": event.created_at,
            # The customer's page of the order in the portal (WERKBANK_PUBLIC_URL is where they reach us).
            "portal_url": settings.WERKBANK_PUBLIC_URL + reverse("portal:order", args=[order.pk]),
        }

    return notice_send_once(
        event=event,
        order=order,
        recipients=recipients,
        language=language,
        template="order_status",
        context=context,
    )


def notice_send_once(
    *,
    event: AuditEvent,
    order: Order,
    recipients: list[str],
    language: str,
    template: str,
    context: Callable[[], dict[str, Any]],
) -> StatusNotice | None:
    """E-mail `recipients` once about one audited event of `order`: the StatusNotice row, unique per event,
    is written before the mail goes out in the caller's transaction, so a second delivery of the task finds
    it and sends nothing; if sending fails, the row rolls back and the task's retry sends it. The mail is
    `emails/<template>_subject.<language>.txt` and `emails/<template>.<language>.txt`, with `context()`
    built in that language (the statuses' labels, say)."""
    notice, created = StatusNotice.objects.get_or_create(
        event=event, defaults={"order": order, "recipients": recipients}
    )
    if not created:
        return None
    if recipients:
        with translation.override(language):
            values = context()
            subject = render_to_string(f"emails/{template}_subject.{language}.txt", values).strip()
            body = render_to_string(f"emails/{template}.{language}.txt", values)
        send_mail(subject, body, None, recipients)
    return notice
