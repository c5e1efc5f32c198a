"""The CSV columns of parts and suppliers, for the admin's import and export (werkbank/admin_io.py).

A part is found by manufacturer and MPN, a supplier by its name: a row that names one already stored
changes it, any other row adds one. Every row is written by the catalogue services, so their rules (VRAM
only on a GPU, one MPN per manufacturer, a country code) and their audit rows hold as in the forms.
"""

from __future__ import annotations

from typing import Any

from import_export.fields import Field

from inventory.models import Part, Supplier
from inventory.services import part_create, part_update, supplier_create, supplier_update
from werkbank.admin_io import NamedForeignKeyWidget, ServiceResource


class PartResource(ServiceResource):
    preferred_supplier = Field(
        attribute="preferred_supplier",
        column_name="preferred_supplier",
        widget=NamedForeignKeyWidget(Supplier, field="name"),
    )

    class Meta(ServiceResource.Meta):
        model = Part
        name = "Parts"
        fields = (
            "category",
            "manufacturer",
            "mpn",
            "name",
            "vram_gb",
            "tdp_w",
            "pcie_gen",
            "pcie_lanes",
            "u_height",
            "list_price",
            "preferred_supplier",
        )
        import_id_fields = ("manufacturer", "mpn")

    def write(self, *, instance: Any, created: bool, values: dict[str, Any], actor: Any) -> Part:
        if created:
            return part_create(actor=actor, **values)
        return part_update(part=instance, actor=actor, **values)


class SupplierResource(ServiceResource):
    class Meta(ServiceResource.Meta):
        model = Supplier
        name = "Suppliers"
        fields = ("name", "country", "vat_id", "contact_name", "contact_email")
        import_id_fields = ("name",)

    def write(self, *, instance: Any, created: bool, values: dict[str, Any], actor: Any) -> Supplier:
        if created:
            values = {**values, "name": instance.name, "country": instance.country}
            return supplier_create(actor=actor, **values)
        return supplier_update(supplier=instance, actor=actor, **values)
