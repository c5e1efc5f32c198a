"""What an order's export carries of the inventory (see werkbank/exports.py): the parts, suppliers, lots,
purchase orders and components that the order's rows point at, every line of those purchase orders, the
components' stock movements, and the label batches printed for those lots and purchase orders (with their
PDFs)."""

from __future__ import annotations

from django.db.models import Q

from werkbank import exports


def register_exports() -> None:
    from inventory.models import (
        BatchLot,
        Component,
        LabelBatch,
        Part,
        PurchaseOrder,
        PurchaseOrderLine,
        StockMovement,
        Supplier,
    )

    for model in (Supplier, Part, BatchLot, Component):
        exports.carry(model)
    exports.carry(PurchaseOrder, numbered_by="number")
    exports.carry(
        PurchaseOrderLine,
        found=lambda record: PurchaseOrderLine.objects.filter(purchase_order__in=record.pks(PurchaseOrder)),
    )
    exports.carry(
        StockMovement, found=lambda record: StockMovement.objects.filter(component__in=record.pks(Component))
    )
    exports.carry(
        LabelBatch,
        found=lambda record: LabelBatch.objects.filter(
            Q(lot__in=record.pks(BatchLot)) | Q(purchase_order__in=record.pks(PurchaseOrder))
        ),
    )
