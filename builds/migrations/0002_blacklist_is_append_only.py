"""The connector blacklist is append-only in the database itself: UPDATE and DELETE raise.

Seed 003: the blacklisted connectors "bleiben für die gesamte Lebensdauer der Maschine unbelegt". No service,
API or admin path removes a blacklist entry; these triggers make a raw query fail too.
"""

from django.db import migrations

SQLITE = [
    """CREATE TRIGGER builds_blacklist_no_update BEFORE UPDATE ON builds_connectorblacklist
       BEGIN SELECT RAISE(ABORT, 'a connector blacklist entry can never change'); END""",
    """CREATE TRIGGER builds_blacklist_no_delete BEFORE DELETE ON builds_connectorblacklist
       BEGIN SELECT RAISE(ABORT, 'a connector blacklist entry can never be removed'); END""",
]
SQLITE_REVERSE = ["DROP TRIGGER builds_blacklist_no_update", "DROP TRIGGER builds_blacklist_no_delete"]

POSTGRESQL = [
    """CREATE FUNCTION builds_blacklist_append_only() RETURNS trigger AS $$
       BEGIN RAISE EXCEPTION 'a connector blacklist entry can never be changed or removed'; END;
       $$ LANGUAGE plpgsql""",
    """CREATE TRIGGER builds_blacklist_append_only BEFORE UPDATE OR DELETE ON builds_connectorblacklist
       FOR EACH ROW EXECUTE FUNCTION builds_blacklist_append_only()""",
]
POSTGRESQL_REVERSE = [
    "DROP TRIGGER builds_blacklist_append_only ON builds_connectorblacklist",
    "DROP FUNCTION builds_blacklist_append_only()",
]


def _run(statements: dict):
    def run(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("builds", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE, "postgresql": POSTGRESQL}),
            _run({"sqlite": SQLITE_REVERSE, "postgresql": POSTGRESQL_REVERSE}),
        ),
    ]
