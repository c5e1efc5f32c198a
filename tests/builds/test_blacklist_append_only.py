"""The blacklist's append-only triggers against the test database's flush (tests/flush_rig.py).

A transactional test's flush empties the blacklist (TRUNCATE on PostgreSQL, the tests' trigger-aware flush on
SQLite), and the triggers hold again at once: a raw DELETE or UPDATE is still refused, on either database.
"""

from __future__ import annotations

import pytest
from django.core.management.color import no_style
from django.db import DatabaseError, connection, transaction

from builds.models import ConnectorBlacklist
from tests.builds.bench_rig import blacklist
from warranty.models import Attribution, SupplierReturn

REASON = "intermittent link training at x8"


def _raw(sql: str) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)


@pytest.mark.django_db(transaction=True)
def test_a_flush_empties_the_blacklist_and_a_delete_is_still_refused(bench):
    assert blacklist(bench, "PCIe-1", REASON).status_code == 201

    # What `manage.py flush` runs, for the blacklist's table alone (with the tables whose rows point at it:
    # its failure attributions, and their supplier returns), so the bench stays to blacklist again.
    table = ConnectorBlacklist._meta.db_table
    tables = [SupplierReturn._meta.db_table, Attribution._meta.db_table, table]
    connection.ops.execute_sql_flush(connection.ops.sql_flush(no_style(), tables))

    assert not ConnectorBlacklist.objects.exists()
    assert blacklist(bench, "PCIe-1", REASON).status_code == 201
    with pytest.raises(DatabaseError, match="never"):
        _raw(f"DELETE FROM {table}")
    with pytest.raises(DatabaseError, match="never"):
        _raw(f"UPDATE {table} SET reason = 'fixed'")
    assert ConnectorBlacklist.objects.get().reason == REASON
    # The test's own teardown is the whole flush, with this entry in the table.
