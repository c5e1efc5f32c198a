"""Two PMs ask for a pack of the same server at the same moment, on PostgreSQL: the server's row lock
numbers the revisions one after the other, so both get one (1 and 2) and neither hits the unique
(server, revision) constraint."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from tests import factories
from tests.deployment import svc_rig as rig
from warranty.models import HandoverPack
from warranty.services.packs import pack_request

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("row locks are exercised on PostgreSQL")


@pytest.fixture(autouse=True)
def _no_render(monkeypatch):
    """The race is about numbering: the packs' tasks (eager here) are not run."""
    from warranty import tasks

    monkeypatch.setattr(tasks.handover_pack_generate_task, "apply_async", lambda *args, **kwargs: None)


@pytest.mark.parametrize("trial", range(3))
def test_two_requests_at_once_get_consecutive_revisions(trial):
    server = rig.server(status="deployed")
    actors = [factories.make_pm(username=f"pm-{trial}-{n}") for n in range(2)]
    barrier = threading.Barrier(2)
    results: list[object] = [None, None]

    def run(index: int) -> None:
        try:
            barrier.wait(timeout=10)
            results[index] = pack_request(server=server, actor=actors[index], language="en")
        except Exception as exc:  # lands in the assertion below
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    assert all(isinstance(result, HandoverPack) for result in results), results
    assert sorted(result.revision for result in results) == [1, 2]
    assert sorted(HandoverPack.objects.filter(server=server).values_list("revision", flat=True)) == [1, 2]
