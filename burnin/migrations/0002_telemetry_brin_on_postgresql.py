"""A BRIN index on the telemetry's time, on PostgreSQL only.

Samples arrive in time order, one run after another, so a BRIN index (a few pages for millions of rows)
serves time-range scans. SQLite (the embedded demo) has no BRIN; the (run, gpu_index, at) B-tree serves it.
"""

from django.db import migrations

CREATE = "CREATE INDEX IF NOT EXISTS burnin_sample_at_brin ON burnin_telemetrysample USING brin (at)"
DROP = "DROP INDEX IF EXISTS burnin_sample_at_brin"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("burnin", "0001_initial")]

    operations = [migrations.RunPython(create, drop)]
