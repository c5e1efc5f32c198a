"""One pending revision per server and language (issue #26): a pack request while one is queued or running
returns that one and writes nothing; a new revision comes once the last is ready or failed, or when a PM
asks for one explicitly while it runs; the database keeps one queued revision per server and language,
and the service answers a row written past its lock with that row."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from tests import factories
from tests.deployment import svc_rig as rig
from warranty.choices import PackStatus
from warranty.models import HandoverPack
from warranty.services import packs
from warranty.services.packs import pack_request, pack_retry
from werkbank.errors import RuleViolation
from werkbank.models import AuditEvent, TaskOutbox

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    return rig.server(status="deployed")


@pytest.fixture
def pm():
    return factories.make_pm(username="dedup-pm")


def _set(pack: HandoverPack, status: str) -> None:
    # A ready row names its files (a check constraint); none are read here.
    files = {"pdf": "p.pdf", "zip": "p.zip", "pdf_sha256": "0" * 64, "zip_sha256": "0" * 64, "progress": 100}
    HandoverPack.objects.filter(pk=pack.pk).update(status=status, **(files if status == "ready" else {}))


def _rows(server) -> list[tuple[int, str, str]]:
    rows = HandoverPack.objects.filter(server=server).order_by("revision")
    return list(rows.values_list("revision", "language", "status"))


def test_a_request_while_one_is_queued_or_running_returns_it_and_writes_nothing(server, pm):
    first, created = pack_request(server=server, actor=pm, language="en")
    assert created and first.revision == 1
    writes = (AuditEvent.objects.count(), TaskOutbox.objects.count())
    again, created = pack_request(server=server, actor=pm, language="en")
    assert (again.pk, created) == (first.pk, False)
    _set(first, PackStatus.RUNNING)
    again, created = pack_request(server=server, actor=pm, language="en")
    assert (again.pk, created) == (first.pk, False)
    assert (AuditEvent.objects.count(), TaskOutbox.objects.count()) == writes
    # Another language is another pack.
    german, created = pack_request(server=server, actor=pm, language="de")
    assert created and german.revision == 2
    assert _rows(server) == [(1, "en", PackStatus.RUNNING), (2, "de", PackStatus.QUEUED)]


@pytest.mark.parametrize("last", [PackStatus.READY, PackStatus.FAILED])
def test_a_new_revision_comes_once_the_last_is_ready_or_failed(server, pm, last):
    first, _created = pack_request(server=server, actor=pm, language="en")
    _set(first, last)
    second, created = pack_request(server=server, actor=pm, language="en")
    assert created and second.revision == 2
    assert _rows(server) == [(1, "en", last), (2, "en", PackStatus.QUEUED)]


def test_a_pm_asks_for_a_new_revision_while_one_runs_but_a_queued_one_is_kept(server, pm):
    first, _created = pack_request(server=server, actor=pm, language="en")
    kept, created = pack_request(server=server, actor=pm, language="en", new_revision=True)
    assert (kept.pk, created) == (first.pk, False)  # queued: it reads the data when its task starts
    _set(first, PackStatus.RUNNING)
    second, created = pack_request(server=server, actor=pm, language="en", new_revision=True)
    assert created and second.revision == 2
    assert _rows(server) == [(1, "en", PackStatus.RUNNING), (2, "en", PackStatus.QUEUED)]
    assert AuditEvent.objects.filter(verb="pack.request").count() == 2


def test_a_failed_pack_is_not_run_again_while_another_of_its_language_is_queued(server, pm):
    failed, _created = pack_request(server=server, actor=pm, language="en")
    _set(failed, PackStatus.FAILED)
    queued, _created = pack_request(server=server, actor=pm, language="en")
    with pytest.raises(RuleViolation) as refusal:
        pack_retry(pack=failed, actor=pm)
    assert refusal.value.code == "pack_already_queued"
    assert f"r{queued.revision}" in refusal.value.message
    _set(queued, PackStatus.READY)
    assert pack_retry(pack=failed, actor=pm).status == PackStatus.QUEUED


def test_the_database_keeps_one_queued_revision_per_server_and_language(server):
    HandoverPack.objects.create(server=server, revision=1, language="en", status=PackStatus.QUEUED)
    HandoverPack.objects.create(server=server, revision=2, language="de", status=PackStatus.QUEUED)
    HandoverPack.objects.create(server=server, revision=3, language="en", status=PackStatus.RUNNING)
    # PostgreSQL names the constraint; SQLite names its columns.
    unique = "one_queued_per_language|UNIQUE constraint failed: warranty_handoverpack.server_id"
    with pytest.raises(IntegrityError, match=unique), transaction.atomic():
        HandoverPack.objects.create(server=server, revision=4, language="en", status=PackStatus.QUEUED)


def test_a_queued_revision_written_past_the_lock_is_returned(server, pm, monkeypatch):
    written = HandoverPack.objects.create(server=server, revision=7, language="en", status=PackStatus.QUEUED)
    lookup = packs._pending
    calls: list[int] = []

    def blind_once(*args, **kwargs):
        calls.append(1)
        return None if len(calls) == 1 else lookup(*args, **kwargs)

    monkeypatch.setattr(packs, "_pending", blind_once)
    pack, created = pack_request(server=server, actor=pm, language="en")
    assert (pack.pk, created, len(calls)) == (written.pk, False, 2)
    assert _rows(server) == [(7, "en", PackStatus.QUEUED)]
    assert not AuditEvent.objects.filter(verb="pack.request").exists()
