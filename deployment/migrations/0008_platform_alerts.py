"""Issue #28 item 4: the platform poll's alerts, one per listing row and kind."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("deployment", "0007_platform_accounts"),
    ]

    operations: list = [
        migrations.CreateModel(
            name="PlatformAlert",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("deverified", "Deverified"),
                            ("reliability", "Reliability dropped"),
                            ("offline", "Went offline"),
                        ],
                        max_length=16,
                    ),
                ),
                ("recipients", models.JSONField(blank=True, default=list)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("sent_at", models.DateTimeField(blank=True, null=True)),
                (
                    "listing",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="alerts",
                        to="deployment.platformlisting",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("listing", "kind"),
                        name="deployment_platformalert_one_per_listing_kind",
                        violation_error_message="This listing row has this alert already.",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("kind__in", ["deverified", "reliability", "offline"])),
                        name="deployment_platformalert_kind_valid",
                        violation_error_message="Unknown alert kind.",
                    ),
                ],
            },
        ),
    ]
