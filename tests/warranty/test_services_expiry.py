"""The expiry digest: one e-mail per customer, never twice for the same record and threshold."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from tests.builds.bench_rig import DIMMS, GPUS_L1
from warranty.models import ExpiryNotice, WarrantyRecord
from warranty.tasks import warranty_expiry_notify_task
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def ends_in(world, serial, days):
    end = timezone.localdate() + timedelta(days=days)
    WarrantyRecord.objects.filter(server=world.server, serial=serial).update(
        end_date=end, start_date=end - timedelta(days=1095)
    )


def test_digest_sent_once_per_threshold_90_then_30(handed, settings):
    settings.WERKBANK_PUBLIC_URL = "https://werkbank.example"
    ends_in(handed, GPUS_L1[0], 80)
    ends_in(handed, DIMMS[0], 20)

    assert warranty_expiry_notify_task.delay().get() == 1
    assert warranty_expiry_notify_task.delay().get() == 0  # run twice: one e-mail
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [handed.t.user_a.email]
    assert GPUS_L1[0] in message.body and DIMMS[0] in message.body
    assert "within 90 days" in message.body and "within 30 days" in message.body
    assert "https://werkbank.example/portal/warranty/" in message.body
    assert set(ExpiryNotice.objects.values_list("record__serial", "threshold_days")) == {
        (GPUS_L1[0], 90),
        (DIMMS[0], 90),
        (DIMMS[0], 30),
    }

    # Later the GPU comes within 30 days: one more digest, naming it alone, then nothing.
    ends_in(handed, GPUS_L1[0], 25)
    assert warranty_expiry_notify_task.delay().get() == 1
    assert warranty_expiry_notify_task.delay().get() == 0
    assert len(mail.outbox) == 2
    second = mail.outbox[1].body
    assert GPUS_L1[0] in second and DIMMS[0] not in second
    assert AuditEvent.objects.filter(verb="warranty.expiry_notice").count() == 2


def test_digest_in_the_customers_language(handed):
    handed.t.customer_a.language = "de"
    handed.t.customer_a.save(update_fields=["language"])
    ends_in(handed, GPUS_L1[1], 10)
    assert warranty_expiry_notify_task.delay().get() == 1
    assert "Garantie" in mail.outbox[0].subject
    assert "Endet in höchstens 30 Tagen" in mail.outbox[0].body


def test_records_far_from_their_end_or_replaced_are_not_listed(handed):
    ends_in(handed, GPUS_L1[0], 120)
    ends_in(handed, GPUS_L1[1], 10)
    WarrantyRecord.objects.filter(serial=GPUS_L1[1]).update(replaced_at=timezone.now())
    assert warranty_expiry_notify_task.delay().get() == 0
    assert mail.outbox == [] and not ExpiryNotice.objects.exists()


def test_beat_runs_the_digest_daily(settings):
    from celery.schedules import crontab

    from werkbank.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["warranty.expiry_notify"]
    assert entry["task"] == warranty_expiry_notify_task.name and entry["task"] in app.tasks
    assert isinstance(entry["schedule"], crontab) and entry["schedule"].hour == {6}
