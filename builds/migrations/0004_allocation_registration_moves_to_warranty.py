"""Drop `Allocation.warranty_registered_to`: the warranty app owns the registration now, copied there by
warranty's migration 0002 first."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("builds", "0003_server_burnin_gpu_power_w"),
        ("warranty", "0002_registrations_from_allocations"),
    ]

    operations = [migrations.RemoveField(model_name="allocation", name="warranty_registered_to")]
