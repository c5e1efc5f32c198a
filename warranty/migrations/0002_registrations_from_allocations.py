"""Move the warranty registration out of builds: one WarrantyRegistration per existing allocation, in the
name of the customer its `warranty_registered_to` named, registered when it was allocated. The builds
migration that drops `Allocation.warranty_registered_to` runs after this one.

Irreversible: the registration belongs to warranty from here on; going back would need the builds field,
which its own migration cannot restore for rows that exist.
"""

from django.db import migrations


def copy_registrations(apps, schema_editor):
    Allocation = apps.get_model("builds", "Allocation")
    WarrantyRegistration = apps.get_model("warranty", "WarrantyRegistration")
    rows = Allocation.objects.filter(warranty_registration__isnull=True).values_list(
        "pk", "component_id", "server_id", "warranty_registered_to_id", "allocated_at"
    )
    WarrantyRegistration.objects.bulk_create(
        (
            WarrantyRegistration(
                allocation_id=pk,
                component_id=component_id,
                server_id=server_id,
                customer_id=customer_id,
                registered_at=allocated_at,
            )
            for pk, component_id, server_id, customer_id, allocated_at in rows.iterator(chunk_size=2000)
        ),
        batch_size=2000,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("warranty", "0001_initial"),
        ("builds", "0003_server_burnin_gpu_power_w"),
    ]

    operations = [migrations.RunPython(copy_registrations, elidable=False)]
