"""Reserved for this issue's work: its owner adds operations here (no other file of the chain changes)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("deployment", "0009_platform_poll"),
    ]

    operations: list = []
