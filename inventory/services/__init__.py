"""Inventory services: every write of the inventory app, one module per concern.

Every service is atomic and writes an audit event (or, for a stock movement, a ledger row) in the same
transaction. Callers import from this package; the modules are `catalogue` (parts and suppliers),
`purchase_orders` (drafting and the status transitions), `receiving` (a PO line received by lot),
`components` (status, location and holder of serials) and `label_batches` (QR labels rendered by a task).
"""

from inventory.services.catalogue import part_create, part_update, supplier_create, supplier_update
from inventory.services.components import component_move, component_receive_replacement
from inventory.services.label_batches import label_batch_generate, label_batch_progress, label_batch_request
from inventory.services.po_documents import po_document_send
from inventory.services.purchase_orders import (
    po_cancel,
    po_close,
    po_create,
    po_line_add,
    po_send,
    po_set_delivery,
)
from inventory.services.receiving import Receipt, po_line_receive, warehouse_location

__all__ = [
    "Receipt",
    "component_move",
    "component_receive_replacement",
    "label_batch_generate",
    "label_batch_progress",
    "label_batch_request",
    "part_create",
    "part_update",
    "po_cancel",
    "po_close",
    "po_create",
    "po_document_send",
    "po_line_add",
    "po_line_receive",
    "po_send",
    "po_set_delivery",
    "supplier_create",
    "supplier_update",
    "warehouse_location",
]
