"""Expiry notices: one digest e-mail per customer for its records ending within 90 and within 30 days,
never twice for the same record and threshold."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from warranty.choices import NoticeThreshold
from warranty.models import ExpiryNotice, WarrantyRecord
from werkbank.audit import audit
from werkbank.models import Organization
from werkbank.types import Actor

#: The thresholds, widest first: a record is listed under the narrowest one it falls in.
THRESHOLDS = sorted(NoticeThreshold.values, reverse=True)


def _due(*, today: date) -> Any:
    """Records still in force (not replaced) that end within the widest threshold."""
    return WarrantyRecord.objects.filter(
        replaced_at__isnull=True, end_date__gte=today, end_date__lte=today + timedelta(days=max(THRESHOLDS))
    )


def expiry_notify(*, actor: Actor = None, today: date | None = None) -> int:
    """Send every customer with records newly due its digest (see `expiry_notice_send`); returns the number
    of e-mails sent. Each customer in its own transaction: one customer's failed mail leaves the others
    sent and recorded, and the task's retry sends the rest."""
    today = today or timezone.localdate()
    customers = Organization.objects.filter(pk__in=_due(today=today).values("customer_id")).order_by("pk")
    # A customer without a member's e-mail address gets its notices recorded, but no mail is counted.
    return sum(1 for customer in customers if expiry_notice_send(customer=customer, actor=actor, today=today))


@transaction.atomic
def expiry_notice_send(
    *, customer: Organization, actor: Actor = None, today: date | None = None
) -> list[str] | None:
    """One digest e-mail to the customer's members for its records ending within 90 and within 30 days that
    were not yet notified at that threshold; returns the recipients, or None when nothing was due.

    Failure order, as for the order status notices: the customer's row is locked (concurrent runs wait),
    the `ExpiryNotice` rows are written, then the mail is sent, all in one transaction. A failed send
    rolls the rows back and the retry sends it; the unique (record, threshold) rows make a second run send
    nothing. The one gap, a commit that fails after the mail went out, would repeat a reminder, which is
    better than the other order's gap (rows committed, mail lost: a reminder never sent).
    """
    today = today or timezone.localdate()
    locked = Organization.objects.select_for_update().get(pk=customer.pk)
    records = list(
        _due(today=today).filter(customer=locked).select_related("server").order_by("end_date", "serial")
    )
    noticed = set(ExpiryNotice.objects.filter(record__in=records).values_list("record_id", "threshold_days"))
    sections: dict[int, list[WarrantyRecord]] = {threshold: [] for threshold in THRESHOLDS}
    rows = []
    for record in records:
        left = (record.end_date - today).days
        applicable = [threshold for threshold in THRESHOLDS if left <= threshold]
        fresh = [threshold for threshold in applicable if (record.pk, threshold) not in noticed]
        if not fresh:
            continue
        # Listed once, under the narrowest threshold it falls in; noted for every threshold it passed, so a
        # record first seen at 20 days is never told again "within 90 days".
        sections[min(applicable)].append(record)
        rows += [ExpiryNotice(record=record, threshold_days=threshold) for threshold in fresh]
    if not rows:
        return None
    ExpiryNotice.objects.bulk_create(rows)
    recipients = sorted(
        {
            email
            for email in locked.memberships.filter(user__is_active=True).values_list("user__email", flat=True)
            if email
        }
    )
    audit(
        actor=actor,
        verb="warranty.expiry_notice",
        obj=locked,
        after={
            str(threshold): [record.serial for record in listed]
            for threshold, listed in sections.items()
            if listed
        },
        note=", ".join(recipients),
    )
    if recipients:
        language = locked.language if locked.language in {"en", "de"} else "en"
        context = {
            "customer": locked,
            "sections": [(threshold, listed) for threshold, listed in sorted(sections.items()) if listed],
            "today": today,
            "portal_url": settings.WERKBANK_PUBLIC_URL.rstrip("/") + reverse("portal:warranty"),
        }
        with translation.override(language):
            subject = render_to_string(f"emails/warranty_expiry_subject.{language}.txt", context).strip()
            body = render_to_string(f"emails/warranty_expiry.{language}.txt", context)
        send_mail(subject, body, None, recipients)
    return recipients
