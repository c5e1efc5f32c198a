"""Indexes of the global search (pm/search.py; these indexes stay in the portal's migration, where existing databases
have them recorded, since the search moved from the portal to pm) on the tables it reads, on both database backends.

- Exact matches compare in upper case, so each identifier without a case rule of its own gets a B-tree index
  on UPPER(...): server hostnames and asset tags, and lot codes (SQLite has expression indexes too).
  Serials have theirs already: the unique index on (UPPER(serial), manufacturer) of inventory.Component, whose
  leading column serves a lookup by serial alone. Order references and PO numbers are upper case by their
  check constraints, so their unique indexes serve them as they are.
- Partial matches (`UPPER(col) LIKE '%...%'`, what Django's icontains writes) are served on PostgreSQL by GIN
  trigram indexes (pg_trgm) on the same UPPER(...) expressions, for the tables that grow with the fleet:
  components, servers and lots. A trigram index serves prefixes too, under any collation (a plain B-tree
  serves LIKE 'x%' only under the C collation). SQLite (the embedded demo) has no trigram index: there the
  search scans, which is fast enough at demo size.

The indexes live here, as SQL, rather than in the models' Meta: a GIN operator class has no SQLite
equivalent, and the search that needs them spans apps.
"""

from django.db import migrations

#: (name, table, expression) of the B-tree indexes, on every backend.
BTREE = [
    ("portal_search_server_hostname_upper", "builds_server", "UPPER(hostname)"),
    ("portal_search_server_asset_tag_upper", "builds_server", "UPPER(asset_tag)"),
    ("portal_search_lot_code_upper", "inventory_batchlot", "UPPER(lot_code)"),
]

#: (name, table, column) of the trigram indexes, on PostgreSQL only.
TRIGRAM = [
    ("portal_search_component_serial_trgm", "inventory_component", "serial"),
    ("portal_search_server_hostname_trgm", "builds_server", "hostname"),
    ("portal_search_server_asset_tag_trgm", "builds_server", "asset_tag"),
    ("portal_search_lot_code_trgm", "inventory_batchlot", "lot_code"),
]


def create(apps, schema_editor):
    for name, table, expression in BTREE:
        schema_editor.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} ({expression})")
    if schema_editor.connection.vendor != "postgresql":
        return
    # pg_trgm is a trusted extension (PostgreSQL 13+): the database's owner may create it.
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for name, table, column in TRIGRAM:
        schema_editor.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin (UPPER({column}) gin_trgm_ops)"
        )


def drop(apps, schema_editor):
    names = [name for name, _, _ in BTREE]
    if schema_editor.connection.vendor == "postgresql":
        names += [name for name, _, _ in TRIGRAM]
    for name in names:
        schema_editor.execute(f"DROP INDEX IF EXISTS {name}")
    # The extension stays: other objects may use it, and it costs nothing unused.


class Migration(migrations.Migration):
    dependencies = [
        ("builds", "0004_allocation_registration_moves_to_warranty"),
        ("inventory", "0006_batchlot_per_purchase_order"),
    ]

    operations = [migrations.RunPython(create, drop, elidable=False)]
