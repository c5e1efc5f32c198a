"""Migrations warranty 0002 and builds 0004: the warranty registration moves from the allocation to the
warranty app. An allocation with `warranty_registered_to` becomes one WarrantyRegistration in that
customer's name, registered when it was allocated; then the builds field is gone. Run in a separate
process on a temporary SQLite file, so that the suite's own database is never migrated backwards."""

from __future__ import annotations

from pathlib import Path

from tests.migration_script import run_migration_script

SCRIPT = """
apps = migrate([("builds", "0003_server_burnin_gpu_power_w"), ("warranty", "0001_initial")])
get = apps.get_model
Organization = get("werkbank", "Organization")
customer = Organization.objects.create(name="Alpha Rentals GmbH", kind="customer")
partner = Organization.objects.create(name="Praha Werkstatt", kind="partner")
supplier = get("inventory", "Supplier").objects.create(name="S", country="DE")
part = get("inventory", "Part").objects.create(category="gpu", manufacturer="NVIDIA", mpn="M", name="G")
po = get("inventory", "PurchaseOrder").objects.create(number="PO-2026-0001", supplier=supplier)
Line = get("inventory", "PurchaseOrderLine")
line = Line.objects.create(purchase_order=po, part=part, quantity=2, unit_price=1)
lot = get("inventory", "BatchLot").objects.create(
    part=part, supplier=supplier, purchase_order=po, lot_code="L1", date_code="2526", country_of_origin="TW"
)
configuration = get("orders", "ServerConfiguration").objects.create(name="C", psu_count=2, psu_rating_w=1600)
order = get("orders", "Order").objects.create(
    reference="WB-2026-0001", customer=customer, configuration=configuration, server_count=1,
    warranty_months=36,
)
server = get("builds", "Server").objects.create(
    order=order, sequence=1, hostname="wb-2026-0001-01", asset_tag="WB-2026-0001-01", partner=partner
)
Component = get("inventory", "Component")
Allocation = get("builds", "Allocation")
for serial in ("G-1", "G-2"):
    component = Component.objects.create(
        part=part, manufacturer="NVIDIA", serial=serial, lot=lot, po_line=line, location="x",
        status="allocated",
    )
    Allocation.objects.create(component=component, server=server, warranty_registered_to=customer)

apps = migrate([("builds", "0004_allocation_registration_moves_to_warranty")])
Registration = apps.get_model("warranty", "WarrantyRegistration")
Allocation = apps.get_model("builds", "Allocation")
rows = sorted(
    [r.component.serial, r.customer.name, r.server.hostname, r.registered_at == r.allocation.allocated_at]
    for r in Registration.objects.all()
)
fields = [field.name for field in Allocation._meta.get_fields()]
print(json.dumps({"rows": rows, "builds_field_gone": "warranty_registered_to" not in fields}))
"""


def test_allocations_registration_moves_to_warranty(tmp_path: Path) -> None:
    result = run_migration_script(SCRIPT, tmp_path)
    assert result["rows"] == [
        ["G-1", "Alpha Rentals GmbH", "wb-2026-0001-01", True],
        ["G-2", "Alpha Rentals GmbH", "wb-2026-0001-01", True],
    ]
    assert result["builds_field_gone"] is True
