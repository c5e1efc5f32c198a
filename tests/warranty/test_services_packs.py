"""`pack_request` and the task's `pack_generate`: a new revision under the server's lock, in the customer's
language, refused (409) before the server is deployed; the task twice gives one ready pack; a failure is
recorded and retried."""

from __future__ import annotations

import hashlib

import pytest
from celery.exceptions import Retry
from django.db import OperationalError

from builds.choices import ServerStatus
from builds.models import Server
from tests.warranty.packs_rig import load_demo, pdf_text
from warranty.choices import PackStatus
from warranty.documents import verify_zip
from warranty.models import HandoverPack
from warranty.services import packs
from warranty.services.packs import pack_generate, pack_request, pack_retry
from warranty.tasks import handover_pack_generate_task
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent, TaskOutbox

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return load_demo()


def _verbs(pack: HandoverPack) -> list[str]:
    return list(AuditEvent.objects.for_object(pack).order_by("pk").values_list("verb", flat=True))


def test_a_requested_pack_is_rendered_once_even_when_the_task_runs_twice(
    demo, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        pack, created = pack_request(server=demo.fleet, actor=demo.pm)
    assert created
    # Enqueued on commit, through the outbox; run in-process here (eager), the first time.
    outbox = TaskOutbox.objects.get(task=handover_pack_generate_task.name)
    assert (outbox.kwargs, outbox.sent_at is not None) == ({"pack_id": pack.pk}, True)
    with django_capture_on_commit_callbacks(execute=True):
        assert handover_pack_generate_task.delay(pack_id=pack.pk).get() is True  # the second time

    pack.refresh_from_db()
    assert (pack.revision, pack.language, pack.status, pack.progress, pack.attempts) == (
        1,
        "de",  # Vastfleet's language
        PackStatus.READY,
        100,
        1,
    )
    assert pack.generated_by == demo.pm and pack.started_at <= pack.finished_at
    assert HandoverPack.objects.filter(server=demo.fleet).count() == 1
    pdf, archive = pack.pdf.read(), pack.zip.read()
    assert (hashlib.sha256(pdf).hexdigest(), len(pdf)) == (pack.pdf_sha256, pack.pdf_size)
    assert (hashlib.sha256(archive).hexdigest(), len(archive)) == (pack.zip_sha256, pack.zip_size)
    assert verify_zip(pack.zip.path) == []
    assert pack.pdf_size < 1_000_000  # issue #12: the PDF is at most 1 MB
    assert "Übergabepaket" in pdf_text(pdf)[1]
    assert _verbs(pack) == ["pack.request", "pack.generate"]

    second, _ = pack_request(server=demo.fleet, actor=demo.pm, language="en")
    assert (second.revision, second.language) == (2, "en")


def test_a_pack_is_refused_before_the_server_is_deployed(demo):
    with pytest.raises(RuleViolation) as refusal:
        pack_request(server=demo.seven_u, actor=demo.pm)
    assert refusal.value.code == "pack_server_not_deployed"
    assert "is burn-in; a handover pack is made once it is deployed" in refusal.value.message
    with pytest.raises(InvalidInput, match="language: must be one of en, de"):
        pack_request(server=demo.fleet, actor=demo.pm, language="fr")
    assert not HandoverPack.objects.exists()
    # After the handover a new revision may still be issued.
    Server.objects.filter(pk=demo.fleet.pk).update(status=ServerStatus.HANDED_OVER)
    assert pack_request(server=demo.fleet, actor=demo.pm)[0].revision == 1


def test_a_failure_is_recorded_retried_by_the_pm_and_then_succeeds(demo, monkeypatch):
    pack, _ = pack_request(server=demo.fleet, actor=demo.pm)  # its task never runs: no commit in this test

    def lost_connection(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(packs, "pack_pdf", lost_connection)
    with pytest.raises(OperationalError):
        pack_generate(pack_id=pack.pk)
    pack.refresh_from_db()
    assert (pack.status, pack.attempts, pack.pdf.name) == (PackStatus.FAILED, 1, "")
    assert pack.error == "OperationalError: server closed the connection unexpectedly"

    with pytest.raises(RuleViolation, match="only a failed pack is run again"):
        pack_retry(pack=HandoverPack.objects.create(server=demo.fleet, revision=9), actor=demo.pm)
    pack_retry(pack=pack, actor=demo.pm)
    monkeypatch.undo()
    assert pack_generate(pack_id=pack.pk).status == PackStatus.READY
    pack.refresh_from_db()
    assert (pack.attempts, pack.error) == (2, "")
    assert _verbs(pack) == ["pack.request", "pack.fail", "pack.retry", "pack.generate"]


def test_a_pack_left_running_by_a_dead_worker_is_taken_again(demo):
    pack, _ = pack_request(server=demo.fleet, actor=demo.pm)
    HandoverPack.objects.filter(pk=pack.pk).update(status=PackStatus.RUNNING, attempts=1, progress=30)
    assert pack_generate(pack_id=pack.pk).status == PackStatus.READY
    pack.refresh_from_db()
    assert (pack.attempts, pack.progress) == (2, 100)
    # A pack that no longer exists is nothing to do.
    assert pack_generate(pack_id=pack.pk + 1000) is None


def test_the_task_retries_a_transient_error_and_the_pack_ends_ready(demo, monkeypatch):
    pack, _ = pack_request(server=demo.fleet, actor=demo.pm)
    render, calls = packs.pack_pdf, []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise OperationalError("could not connect to server")
        return render(*args, **kwargs)

    monkeypatch.setattr(packs, "pack_pdf", flaky)
    # A transient error asks Celery for a retry (with backoff: the countdown grows with each retry)…
    with pytest.raises(Retry):
        handover_pack_generate_task.apply(kwargs={"pack_id": pack.pk})
    assert HandoverPack.objects.get(pk=pack.pk).status == PackStatus.FAILED
    # … and the retried run finishes the pack.
    assert handover_pack_generate_task.apply(kwargs={"pack_id": pack.pk}).get() is True
    pack.refresh_from_db()
    assert (len(calls), pack.status, pack.attempts, pack.error) == (2, PackStatus.READY, 2, "")
    assert _verbs(pack) == ["pack.request", "pack.fail", "pack.generate"]
