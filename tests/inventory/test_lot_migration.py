"""Migrations 0005/0006: lots become per supplier receipt (inventory.models.BatchLot).

A lot whose components came on two purchase orders splits into one lot per PO, with the same codes; a
lot without components is removed; migrating back merges them again. Run in a separate process on a
temporary SQLite file, so that the suite's own database is never migrated backwards.
"""

from __future__ import annotations

from pathlib import Path

from tests.migration_script import run_migration_script

SCRIPT = """
apps = migrate([("inventory", "0004_component_serial_identity_any_letter_case")])
Supplier, Part = apps.get_model("inventory", "Supplier"), apps.get_model("inventory", "Part")
PurchaseOrder = apps.get_model("inventory", "PurchaseOrder")
Line, Lot = apps.get_model("inventory", "PurchaseOrderLine"), apps.get_model("inventory", "BatchLot")
Component = apps.get_model("inventory", "Component")
supplier = Supplier.objects.create(name="S", country="DE")
part = Part.objects.create(category="gpu", manufacturer="NVIDIA", mpn="M", name="G")
codes = {"date_code": "2526", "country_of_origin": "TW"}
lot = Lot.objects.create(part=part, supplier=supplier, lot_code="L1", **codes)
Lot.objects.create(part=part, supplier=supplier, lot_code="EMPTY", **codes)
for n in (1, 2):
    po = PurchaseOrder.objects.create(number=f"PO-2026-000{n}", supplier=supplier)
    line = Line.objects.create(purchase_order=po, part=part, quantity=5, unit_price=1)
    for i in range(n):
        Component.objects.create(
            part=part, manufacturer="NVIDIA", serial=f"S{n}-{i}", lot=lot, po_line=line, location="x"
        )

Lot = migrate([("inventory", "0006_batchlot_per_purchase_order")]).get_model("inventory", "BatchLot")
forward = sorted(
    [lot.lot_code, lot.date_code, lot.country_of_origin, lot.purchase_order.number,
     sorted(lot.components.values_list("serial", flat=True))]
    for lot in Lot.objects.all()
)
before = migrate([("inventory", "0004_component_serial_identity_any_letter_case")])
Lot = before.get_model("inventory", "BatchLot")
back = sorted(
    [lot.lot_code, sorted(lot.components.values_list("serial", flat=True))] for lot in Lot.objects.all()
)
print(json.dumps({"forward": forward, "back": back}))
"""


def test_lots_split_per_purchase_order_and_merge_back(tmp_path: Path) -> None:
    result = run_migration_script(SCRIPT, tmp_path)
    assert result["forward"] == [
        ["L1", "2526", "TW", "PO-2026-0001", ["S1-0"]],
        ["L1", "2526", "TW", "PO-2026-0002", ["S2-0", "S2-1"]],
    ]
    assert result["back"] == [["L1", ["S1-0", "S2-0", "S2-1"]]]
