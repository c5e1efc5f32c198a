"""Two placements never share a U of one rack: on PostgreSQL, an exclusion constraint over the U range.

`int4range(lowest_u, lowest_u + height_u)` is the half-open range of the U a server occupies; the GiST index
behind the constraint needs `btree_gist` for the rack's equality. SQLite has no exclusion constraints: there
the placement service's check under the rack's lock is the guard (deployment/services/placement.py).
"""

from django.contrib.postgres.operations import BtreeGistExtension
from django.db import migrations

CONSTRAINT = "deployment_rackplacement_no_overlap"


def add_constraint(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(
        f"ALTER TABLE deployment_rackplacement ADD CONSTRAINT {CONSTRAINT} EXCLUDE USING gist "
        "(rack_id WITH =, int4range(lowest_u, lowest_u + height_u) WITH &&)"
    )


def drop_constraint(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(f"ALTER TABLE deployment_rackplacement DROP CONSTRAINT IF EXISTS {CONSTRAINT}")


class Migration(migrations.Migration):
    dependencies = [("deployment", "0001_initial")]

    operations = [
        BtreeGistExtension(),
        migrations.RunPython(add_constraint, drop_constraint),
    ]
