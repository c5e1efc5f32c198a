"""The test database's flush on SQLite, past the append-only triggers (builds migration 0002).

A transactional test (a browser, system, export/import or task test) ends with Django's `flush`. On PostgreSQL
that is one TRUNCATE, which fires no row-level DELETE trigger, so the append-only connector blacklist empties
like any other table. SQLite has no TRUNCATE: its flush is a `DELETE FROM` per table, which the
`BEFORE DELETE` trigger refuses ("a connector blacklist entry can never be removed").

`sql_flush_past_triggers` is SQLite's flush for the tests only (the `_sqlite_flush_past_triggers` fixture of
tests/conftest.py installs it): it drops the triggers of the flushed tables, deletes, and creates the same
triggers again from their stored SQL, all in the flush's one transaction (SQLite's DDL is transactional, so a
failed flush keeps them). Normal operation never calls it: the triggers stay enforced, and
tests/builds/test_blacklist_append_only.py proves that a DELETE is still refused after a flush.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from django.db.backends.sqlite3.operations import DatabaseOperations

SqlFlush = Callable[..., list[str]]


def _triggers_of(ops: DatabaseOperations, tables: set[str]) -> list[tuple[str, str]]:
    if not tables:
        return []
    marks = ", ".join("%s" for _ in tables)
    with ops.connection.cursor() as cursor:
        cursor.execute(
            "SELECT name, sql FROM sqlite_master"
            f" WHERE type = 'trigger' AND tbl_name IN ({marks}) ORDER BY name",
            sorted(tables),
        )
        return list(cursor.fetchall())


def sql_flush_past_triggers(original: SqlFlush) -> SqlFlush:
    """SQLite's `sql_flush`, wrapped: drop the flushed tables' triggers first and recreate them last."""

    def sql_flush(
        self: DatabaseOperations,
        style: Any,
        tables: Any,
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        statements = original(
            self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
        flushed = set(tables)
        if tables and allow_cascade:
            # The same tables as SQLite's own flush deletes from (its TRUNCATE ... CASCADE).
            flushed = set(chain.from_iterable(self._references_graph(table) for table in tables))
        triggers = _triggers_of(self, flushed)
        drops = [f"DROP TRIGGER {self.quote_name(name)};" for name, _ in triggers]
        return [*drops, *statements, *(f"{sql};" for _, sql in triggers)]

    return sql_flush
