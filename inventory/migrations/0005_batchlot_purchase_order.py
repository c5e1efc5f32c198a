# A lot is per supplier receipt (inventory.models.BatchLot): each lot now names the purchase order it was
# received on. An existing lot whose components came on several purchase orders is split into one lot per
# purchase order, with the same lot code, date code and origin. A lot without components (none is made by
# receiving) cannot say which receipt it belongs to, and is removed.

import django.db.models.deletion
from django.db import migrations, models


def split_lots_per_purchase_order(apps, schema_editor):
    BatchLot = apps.get_model("inventory", "BatchLot")
    Component = apps.get_model("inventory", "Component")
    for lot in BatchLot.objects.order_by("pk").iterator():
        orders = sorted(
            set(Component.objects.filter(lot=lot).values_list("po_line__purchase_order_id", flat=True))
        )
        if not orders:
            lot.delete()
            continue
        lot.purchase_order_id = orders[0]
        lot.save(update_fields=["purchase_order"])
        for purchase_order_id in orders[1:]:
            split = BatchLot.objects.create(
                part_id=lot.part_id,
                supplier_id=lot.supplier_id,
                purchase_order_id=purchase_order_id,
                lot_code=lot.lot_code,
                date_code=lot.date_code,
                country_of_origin=lot.country_of_origin,
            )
            BatchLot.objects.filter(pk=split.pk).update(created_at=lot.created_at)
            Component.objects.filter(lot=lot, po_line__purchase_order_id=purchase_order_id).update(lot=split)


def merge_lots_per_manufacturer_lot(apps, schema_editor):
    """Back to one lot per part, supplier and lot code: the oldest row keeps the components."""
    BatchLot = apps.get_model("inventory", "BatchLot")
    Component = apps.get_model("inventory", "Component")
    keep: dict[tuple, int] = {}
    for lot in BatchLot.objects.order_by("pk").iterator():
        key = (lot.part_id, lot.supplier_id, lot.lot_code)
        if key not in keep:
            keep[key] = lot.pk
            continue
        Component.objects.filter(lot=lot).update(lot_id=keep[key])
        lot.delete()


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0004_component_serial_identity_any_letter_case'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='batchlot',
            name='inventory_batchlot_unique_lot',
        ),
        migrations.AddField(
            model_name='batchlot',
            name='purchase_order',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='lots', to='inventory.purchaseorder'),
        ),
        migrations.RunPython(split_lots_per_purchase_order, merge_lots_per_manufacturer_lot),
    ]
