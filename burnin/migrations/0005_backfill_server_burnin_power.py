"""Servers that passed burn-in before the measured power was kept on the server get it now: the sum of the
GPUs' mean power in their latest run (the run the gate accepted), as `server_pass_burnin` stores it since."""

from django.db import migrations
from django.db.models import Sum

PASSED = ("burn_in_passed", "deployed", "handed_over")


def backfill(apps, schema_editor):
    Server = apps.get_model("builds", "Server")
    BurnInRun = apps.get_model("burnin", "BurnInRun")
    GpuResult = apps.get_model("burnin", "GpuResult")
    for server in Server.objects.filter(status__in=PASSED, burnin_gpu_power_w__isnull=True).only("pk"):
        run = BurnInRun.objects.filter(server_id=server.pk).order_by("-started_at", "-id").first()
        if run is None:
            continue
        total = GpuResult.objects.filter(run_id=run.pk).aggregate(total=Sum("mean_power_w"))["total"]
        if total is not None:
            Server.objects.filter(pk=server.pk).update(burnin_gpu_power_w=total)


class Migration(migrations.Migration):
    dependencies = [
        ("burnin", "0004_telemetry_rollup"),
        ("builds", "0003_server_burnin_gpu_power_w"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
