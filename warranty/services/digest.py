"""The PMs' weekly warranty digest (Celery beat, Mondays): what ends soon, what ended last week, the open
claims with their age, the open supplier returns, and the spares near the end of their supplier warranty.
One e-mail a week to every PM with an e-mail address, never two: `PmDigest.week` (the Monday) is unique.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from inventory.selectors import spares_supplier_warranty_ending
from warranty.choices import CLAIM_OPEN, SUPPLIER_RETURN_OPEN
from warranty.models import PmDigest, SupplierReturn, WarrantyClaim, WarrantyRecord
from warranty.selectors import warranty_report, warranty_report_counts
from werkbank.access import pm_users
from werkbank.audit import audit

#: Rows listed per section; the rest is counted, and the section links to the whole list.
DIGEST_ROWS = 25
#: The spares' horizon: supplier warranties ending within this many days (or ended) are listed.
SPARES_WITHIN_DAYS = 90


@dataclass(frozen=True)
class Section:
    """One part of the digest: up to DIGEST_ROWS rows of `count`, and where the whole list is."""

    key: str
    count: int
    rows: list[Any]
    url: str

    @property
    def more(self) -> int:
        return max(self.count - len(self.rows), 0)


def week_of(day: date) -> date:
    """The Monday of `day`'s week (ISO weeks start on Monday)."""
    return day - timedelta(days=day.weekday())


def _absolute(path: str) -> str:
    return settings.WERKBANK_PUBLIC_URL.rstrip("/") + path


def _records(records: QuerySet[WarrantyRecord], *, key: str, count: int, url: str) -> Section:
    return Section(key=key, count=count, rows=list(records[:DIGEST_ROWS]), url=url)


def _aged(rows: QuerySet, *, today: date) -> list[Any]:
    """The rows with `age_days`: whole days since each was created, in the current time zone."""
    listed = list(rows[:DIGEST_ROWS])
    for row in listed:
        row.age_days = (today - timezone.localdate(row.created_at)).days
    return listed


def digest_sections(*, today: date) -> list[Section]:
    """The digest's sections on `today`, in the order the e-mail prints them."""
    report = _absolute(reverse("pm:warranty"))
    counts = warranty_report_counts(today=today)
    ending_30 = warranty_report(bucket="30", today=today)
    ending_90 = warranty_report(bucket="90", today=today).filter(end_date__gt=today + timedelta(days=30))
    last_week = warranty_report(bucket="expired", today=today).filter(end_date__gte=today - timedelta(days=7))
    claims = (
        WarrantyClaim.objects.filter(status__in=sorted(CLAIM_OPEN))
        .select_related("record__server", "customer")
        .order_by("created_at", "id")
    )
    returns = (
        SupplierReturn.objects.filter(status__in=sorted(SUPPLIER_RETURN_OPEN))
        .select_related("component", "supplier")
        .order_by("created_at", "id")
    )
    spares = spares_supplier_warranty_ending(within_days=SPARES_WITHIN_DAYS, today=today)
    claims_url = _absolute(reverse("admin:warranty_warrantyclaim_changelist"))
    returns_url = _absolute(reverse("admin:warranty_supplierreturn_changelist"))
    return [
        _records(ending_30, key="ending_30", count=counts["30"], url=f"{report}?bucket=30"),
        _records(ending_90, key="ending_90", count=counts["90"] - counts["30"], url=f"{report}?bucket=90"),
        _records(last_week, key="expired_last_week", count=last_week.count(), url=f"{report}?bucket=expired"),
        Section(key="open_claims", count=claims.count(), rows=_aged(claims, today=today), url=claims_url),
        Section(key="open_returns", count=returns.count(), rows=_aged(returns, today=today), url=returns_url),
        Section(key="spares", count=len(spares), rows=spares[:DIGEST_ROWS], url=f"{report}#spares"),
    ]


@transaction.atomic
def pm_digest_send(*, today: date | None = None) -> PmDigest | None:
    """The week's digest to every active PM with an e-mail address; returns its `PmDigest`, or None when
    this week's went out already or no PM has an e-mail address (then nothing is recorded: a PM who adds
    an address later that week still gets it on the next run).

    Failure order, as for the expiry notices: the week's row and its audit row are written, then the mail
    is sent, all in one transaction. A failed send rolls the row back and the task's retry sends it; a run
    beside this one waits on the unique week and then finds it taken, so it sends nothing.
    """
    today = today or timezone.localdate()
    recipients = sorted({email for email in pm_users().values_list("email", flat=True) if email})
    if not recipients:
        return None
    week = week_of(today)
    if PmDigest.objects.filter(week=week).exists():
        return None
    sections = digest_sections(today=today)
    counts = {section.key: section.count for section in sections}
    try:
        with transaction.atomic():
            digest = PmDigest.objects.create(week=week, recipients=recipients, counts=counts)
    except IntegrityError:
        return None  # another run took this week while this one read
    audit(actor=None, verb="warranty.pm_digest", obj=digest, after=counts, note=", ".join(recipients))
    context = {
        "today": today,
        "week": week,
        "sections": {section.key: section for section in sections},
        "report_url": _absolute(reverse("pm:warranty")),
    }
    with translation.override("en"):  # the PMs' working language
        subject = render_to_string("emails/pm_digest_subject.en.txt", context).strip()
        body = render_to_string("emails/pm_digest.en.txt", context)
        html = render_to_string("emails/pm_digest.en.html", context)
    send_mail(subject, body, None, recipients, html_message=html)
    return digest
