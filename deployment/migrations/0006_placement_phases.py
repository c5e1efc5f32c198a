"""Phases per feed link: the automatic through table of RackPlacement.feeds becomes the model
PlacementFeed (same table, same columns, no data moved), with the phase each server's PSU group draws from.
Every existing link is given the stated default, phase L1, marked `phase_assumed` so that the rack page and
the admin list it for review; links recorded from now on name their phase."""

import django.db.models.deletion
from django.db import migrations, models

PHASES = [
    ("L1", "L1"),
    ("L2", "L2"),
    ("L3", "L3"),
    ("L1+L2", "L1+L2"),
    ("L1+L3", "L1+L3"),
    ("L2+L3", "L2+L3"),
    ("L1+L2+L3", "L1+L2+L3"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("deployment", "0005_platform_earning"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The table exists already (Django made it for the M2M): only the state learns its model.
            state_operations=[
                migrations.CreateModel(
                    name="PlacementFeed",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        (
                            "powerfeed",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="placement_links",
                                to="deployment.powerfeed",
                            ),
                        ),
                        (
                            "rackplacement",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="feed_links",
                                to="deployment.rackplacement",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "deployment_rackplacement_feeds",
                        "ordering": ["rackplacement_id", "powerfeed_id"],
                        "unique_together": {("rackplacement", "powerfeed")},
                    },
                ),
                migrations.AlterField(
                    model_name="rackplacement",
                    name="feeds",
                    field=models.ManyToManyField(
                        related_name="placements", through="deployment.PlacementFeed", to="deployment.powerfeed"
                    ),
                ),
            ],
            database_operations=[],
        ),
        # Existing links: phase L1, assumed (listed for review). New links: chosen, so not assumed.
        migrations.AddField(
            model_name="placementfeed",
            name="phase",
            field=models.CharField(choices=PHASES, default="L1", max_length=8),
        ),
        migrations.AddField(
            model_name="placementfeed",
            name="phase_assumed",
            field=models.BooleanField(default=True),
        ),
        migrations.AlterField(
            model_name="placementfeed",
            name="phase_assumed",
            field=models.BooleanField(
                default=False,
                help_text="Nobody chose the phase: L1 was set by the migration, or assumed where a "
                "three-phase feed's phase was left out when placing. Review it.",
            ),
        ),
        migrations.AddConstraint(
            model_name="placementfeed",
            constraint=models.CheckConstraint(
                condition=models.Q(("phase__in", [value for value, _ in PHASES])),
                name="deployment_placementfeed_phase_valid",
                violation_error_message="A phase is L1, L2, L3 or a combination of them.",
            ),
        ),
    ]
