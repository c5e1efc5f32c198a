"""Run one callable per thread, all released at the same instant by a barrier, on PostgreSQL.

Each thread has its own database connection (Django opens one per thread) and closes it when done, so a
race between 20 callers is a race between 20 transactions, as between 20 web workers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from django.db import connection, connections

#: How many callers race at once.
THREADS = 20


def require_postgresql() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("row locks and constraints are raced on PostgreSQL; SQLite serialises every writer")


def race(calls: Sequence[Callable[[], Any]], *, timeout: float = 60) -> list[Any]:
    """Call each of `calls` in its own thread at once; return their results in order, an exception where a
    call raised one (so a refusal, or anything unexpected, lands in the test's assertion)."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=timeout)
            results[index] = call()
        except Exception as exc:
            results[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call), daemon=True) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    stuck = [thread.name for thread in threads if thread.is_alive()]
    assert not stuck, f"{len(stuck)} caller(s) still running after {timeout} s: a deadlock?"
    return results


def split(results: Sequence[Any], kind: type) -> tuple[list[Any], list[Exception]]:
    """The results of kind `kind`, and the exceptions; anything else fails the test with the lot."""
    won = [result for result in results if isinstance(result, kind)]
    refused = [result for result in results if isinstance(result, Exception)]
    assert len(won) + len(refused) == len(results), results
    return won, refused
