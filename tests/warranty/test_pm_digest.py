"""The PMs' weekly warranty digest (warranty.services.digest.pm_digest_send, beat on Mondays): its content,
once a week by the database, and nothing without a PM's e-mail address."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from dateutil.relativedelta import relativedelta
from django.core import mail
from django.utils import timezone

from tests import factories
from tests.warranty.report_rig import records_ending, stock, supplier
from warranty.models import PmDigest, SupplierReturn, WarrantyClaim
from warranty.services import pm_digest_send
from warranty.services.digest import week_of
from warranty.tasks import pm_digest_task
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def due(tenants, settings):
    """Records ending in 10 and 60 days, one ended 3 days ago and one 20 days ago, one replaced; an open
    claim filed 5 days ago, a decided one; an open supplier return; a spare ending in 30 days."""
    settings.WERKBANK_PUBLIC_URL = "https://werkbank.example"
    records = records_ending(
        tenants.customer_a,
        {"A-10": 10, "A-60": 60, "A-ENDED-3": -3, "A-ENDED-20": -20, "A-REPLACED": 4, "A-200": 200},
        replaced=("A-REPLACED",),
    )
    claim = WarrantyClaim.objects.create(
        number="RMA-2026-00007", record=records["A-60"], customer=tenants.customer_a, description="Fan noise"
    )
    WarrantyClaim.objects.filter(pk=claim.pk).update(created_at=timezone.now() - timedelta(days=5))
    WarrantyClaim.objects.create(
        number="RMA-2026-00008",
        record=records["A-200"],
        customer=tenants.customer_a,
        description="Scratch",
        status="rejected",
    )
    today = timezone.localdate()
    _spare, returned = stock(
        supplier("EuroGPU Distribution GmbH", 36),
        {"SPARE-30": today + timedelta(days=30) - relativedelta(months=36), "SR-GPU": today},
    )
    SupplierReturn.objects.create(
        number="SR-2026-0003", component=returned, supplier=returned.lot.supplier, reason="No link"
    )
    # The PMs the stock rig made to send and receive the PO: without an address, the digest is the one PM's.
    type(tenants.pm).objects.filter(is_staff=True).exclude(pk=tenants.pm.pk).update(email="")
    return records


def test_the_digest_lists_what_ends_ended_and_waits(tenants, due):
    digest = pm_digest_send()
    assert digest is not None and digest.week == week_of(timezone.localdate())
    (message,) = mail.outbox
    assert message.to == [tenants.pm.email]
    assert message.subject.startswith("[Werkbank] Warranty digest, week of ")
    assert "1 ending within 30 days, 1 open claim(s), 1 open supplier return(s)" in message.subject
    body = message.body
    ending_30 = body.split("Warranties ending within 30 days: 1", 1)[1].split("Warranties ending in 31", 1)[0]
    assert "A-10: Server A-10" in ending_30 and "A-60" not in ending_30
    ending_90 = body.split("Warranties ending in 31 to 90 days: 1", 1)[1].split("Warranties that ended", 1)[0]
    assert "A-60" in ending_90
    last_week = body.split("Warranties that ended in the last 7 days: 1", 1)[1].split(
        "Open warranty claims", 1
    )[0]
    assert "A-ENDED-3" in last_week and "A-ENDED-20" not in last_week
    assert "A-REPLACED" not in body and "A-200" not in body
    assert "RMA-2026-00007 (Open), Alpha Rentals GmbH, serial A-60: open for 5 days" in body
    assert "RMA-2026-00008" not in body
    assert "SR-2026-0003 (Open), EuroGPU Distribution GmbH, serial SR-GPU: open for 0 days" in body
    spares = body.split("Spares in stock whose supplier warranty ends within 90 days (or has ended): 1", 1)[1]
    assert "SPARE-30" in spares and "lot L-1" in spares
    assert "https://werkbank.example/pm/warranty/" in body
    assert "https://werkbank.example/admin/warranty/warrantyclaim/" in body
    # The HTML alternative says the same, escaped.
    ((html, mimetype),) = message.alternatives
    assert mimetype == "text/html"
    assert "<code>A-10</code>" in html and "RMA-2026-00007" in html and "SPARE-30" in html
    assert digest.counts == {
        "ending_30": 1,
        "ending_90": 1,
        "expired_last_week": 1,
        "open_claims": 1,
        "open_returns": 1,
        "spares": 1,
    }
    event = AuditEvent.objects.get(verb="warranty.pm_digest")
    assert event.after == digest.counts and event.note == tenants.pm.email


def test_once_a_week_then_again_the_next_week(tenants, due):
    assert pm_digest_task.delay().get() is True
    assert pm_digest_task.delay().get() is False  # the same week: nothing
    today = timezone.localdate()
    assert pm_digest_send(today=week_of(today) + timedelta(days=6)) is None  # Sunday of the same week
    assert len(mail.outbox) == 1 and PmDigest.objects.count() == 1
    following = pm_digest_send(today=week_of(today) + timedelta(days=7))
    assert following is not None and following.week == week_of(today) + timedelta(days=7)
    assert len(mail.outbox) == 2
    assert AuditEvent.objects.filter(verb="warranty.pm_digest").count() == 2


def test_the_week_is_unique_in_the_database(tenants):
    from django.db import IntegrityError, transaction

    PmDigest.objects.create(week=date(2026, 11, 30))
    with pytest.raises(IntegrityError), transaction.atomic():
        PmDigest.objects.create(week=date(2026, 11, 30))


def test_no_pm_with_an_email_address_nothing_is_sent_or_recorded(tenants, due):
    type(tenants.pm).objects.filter(pk=tenants.pm.pk).update(email="")
    factories.make_pm(username="pm2", email="", is_active=True)
    factories.make_pm(username="gone", email="gone@example.com", is_active=False)
    assert pm_digest_send() is None
    assert mail.outbox == [] and not PmDigest.objects.exists()
    assert not AuditEvent.objects.filter(verb="warranty.pm_digest").exists()


def test_every_active_pm_with_an_address_gets_it_partners_and_customers_do_not(tenants, due):
    second = factories.make_pm(username="pm2", email="pm2@example.com")
    pm_digest_send()
    assert mail.outbox[0].to == sorted([tenants.pm.email, second.email])


def test_a_failed_send_records_nothing_so_the_retry_sends_it(tenants, due, monkeypatch):
    def refuse(*args, **kwargs):
        raise ConnectionError("mail server away")

    monkeypatch.setattr("warranty.services.digest.send_mail", refuse)
    with pytest.raises(ConnectionError):
        pm_digest_send()
    assert not PmDigest.objects.exists()
    monkeypatch.undo()
    assert pm_digest_send() is not None and len(mail.outbox) == 1


def test_beat_sends_it_on_monday_mornings(settings):
    from celery.schedules import crontab

    from werkbank.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["warranty.pm_digest"]
    assert entry["task"] == pm_digest_task.name and entry["task"] in app.tasks
    schedule = entry["schedule"]
    assert isinstance(schedule, crontab)
    assert (schedule.day_of_week, schedule.hour, schedule.minute) == ({1}, {6}, {30})
