"""Two receipts for the same line at the same time, on PostgreSQL: never over-received, no serial twice."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from inventory.models import Component, PurchaseOrderLine
from inventory.packing import parse_scanner
from inventory.services import po_line_receive
from tests import factories
from werkbank.errors import DomainError

pytestmark = pytest.mark.django_db(transaction=True)


def _race(line_pk: int, actor, batches: list[list[str]]) -> list[object]:
    barrier = threading.Barrier(len(batches))
    results: list[object] = [None] * len(batches)

    def run(index: int, serials: list[str]) -> None:
        try:
            barrier.wait(timeout=10)
            line = PurchaseOrderLine.objects.get(pk=line_pk)
            receipt = po_line_receive(
                line=line,
                actor=actor,
                lot_code="L-RACE",
                date_code="2526",
                origin="TW",
                packing=parse_scanner("\n".join(serials)),
            )
            results[index] = len(receipt.components)
        except DomainError as exc:
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, batch)) for i, batch in enumerate(batches)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("row locks are exercised on PostgreSQL")


@pytest.mark.parametrize("trial", range(5))
def test_parallel_receipts_never_exceed_the_ordered_quantity(trial):
    line = factories.make_po(quantity=10).lines.get()
    pm = factories.make_pm()
    results = _race(line.pk, pm, [[f"A{trial}-{i}" for i in range(6)], [f"B{trial}-{i}" for i in range(6)]])

    line.refresh_from_db()
    successes = [result for result in results if isinstance(result, int)]
    refusals = [result for result in results if isinstance(result, DomainError)]
    assert successes == [6] and len(refusals) == 1, results
    assert "only 4 of 10" in refusals[0].message
    assert line.quantity_received == 6 == Component.objects.filter(po_line=line).count()


@pytest.mark.parametrize("trial", range(5))
def test_the_same_serials_in_parallel_exist_once(trial):
    line = factories.make_po(quantity=10).lines.get()
    pm = factories.make_pm()
    serials = [f"S{trial}-{i}" for i in range(4)]
    results = _race(line.pk, pm, [serials, serials])

    assert sorted(result for result in results if isinstance(result, int)) == [4], results
    line.refresh_from_db()
    assert line.quantity_received == 4
    assert Component.objects.filter(serial__in=serials).count() == 4
