"""Twenty pack requests at once for one server, on PostgreSQL (issue #26: they made 20 revisions and 40
files): the server's row lock and the one-queued-revision constraint leave one revision per language, and
the revisions of two languages are still numbered one after the other without hitting the unique
(server, revision) constraint."""

from __future__ import annotations

import pytest

from tests import factories
from tests.deployment import svc_rig as rig
from tests.system.race_rig import THREADS, race, require_postgresql, split
from warranty.choices import PackStatus
from warranty.models import HandoverPack
from warranty.services.packs import pack_request
from werkbank.models import AuditEvent, TaskOutbox

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgres_only():
    require_postgresql()


@pytest.fixture(autouse=True)
def _no_render(monkeypatch):
    """The race is about the rows: the packs' tasks (eager here) are not run."""
    from warranty import tasks

    monkeypatch.setattr(tasks.handover_pack_generate_task, "apply_async", lambda *args, **kwargs: None)


def _packs(server) -> list[tuple[int, str, str]]:
    return list(
        HandoverPack.objects.filter(server=server)
        .order_by("revision")
        .values_list("revision", "language", "status")
    )


def test_twenty_requests_at_once_make_one_revision():
    server = rig.server(status="deployed")
    actors = [factories.make_pm(username=f"pm-race-{n}") for n in range(THREADS)]
    results = race([lambda pm=pm: pack_request(server=server, actor=pm, language="en") for pm in actors])
    answered, refused = split(results, tuple)
    assert not refused, refused
    assert sorted(created for _pack, created in answered) == [False] * (THREADS - 1) + [True]
    assert {pack.pk for pack, _created in answered} == {HandoverPack.objects.get(server=server).pk}
    assert _packs(server) == [(1, "en", PackStatus.QUEUED)]
    assert AuditEvent.objects.filter(verb="pack.request").count() == 1
    assert TaskOutbox.objects.filter(task="warranty.tasks.handover_pack_generate_task").count() == 1


def test_twenty_requests_in_two_languages_make_two_consecutive_revisions():
    server = rig.server(status="deployed")
    pm = factories.make_pm(username="pm-languages")
    results = race(
        [
            lambda n=n: pack_request(server=server, actor=pm, language=("en", "de")[n % 2])
            for n in range(THREADS)
        ]
    )
    answered, refused = split(results, tuple)
    assert not refused, refused
    assert sum(created for _pack, created in answered) == 2
    assert sorted(revision for revision, _language, _status in _packs(server)) == [1, 2]
    assert {language for _revision, language, _status in _packs(server)} == {"en", "de"}


def test_twenty_explicit_new_revisions_while_one_runs_make_one_more():
    server = rig.server(status="deployed")
    pm = factories.make_pm(username="pm-forced")
    running, _created = pack_request(server=server, actor=pm, language="en")
    HandoverPack.objects.filter(pk=running.pk).update(status=PackStatus.RUNNING, attempts=1)
    results = race(
        [
            lambda: pack_request(server=server, actor=pm, language="en", new_revision=True)
            for _ in range(THREADS)
        ]
    )
    answered, refused = split(results, tuple)
    assert not refused, refused
    assert sum(created for _pack, created in answered) == 1
    assert _packs(server) == [(1, "en", PackStatus.RUNNING), (2, "en", PackStatus.QUEUED)]
