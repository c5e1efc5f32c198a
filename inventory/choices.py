"""Choices of the inventory app."""

from django.db import models


class PartCategory(models.TextChoices):
    GPU = "gpu", "GPU"
    CPU = "cpu", "CPU"
    MEMORY = "memory", "Memory"
    STORAGE = "storage", "Storage"
    MOTHERBOARD = "motherboard", "Motherboard"
    CHASSIS = "chassis", "Chassis"
    PSU = "psu", "Power supply"
    NIC = "nic", "Network card"
    RISER = "riser", "Riser / cable"
    COOLING = "cooling", "Cooling"
    OTHER = "other", "Other"


class PurchaseOrderStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    SENT = "sent", "Sent"
    PARTIALLY_RECEIVED = "partially_received", "Partially received"
    RECEIVED = "received", "Received"
    CLOSED = "closed", "Closed"
    CANCELLED = "cancelled", "Cancelled"


PO_TRANSITIONS: dict[str, frozenset[str]] = {
    PurchaseOrderStatus.DRAFT: frozenset({PurchaseOrderStatus.SENT, PurchaseOrderStatus.CANCELLED}),
    PurchaseOrderStatus.SENT: frozenset(
        {PurchaseOrderStatus.PARTIALLY_RECEIVED, PurchaseOrderStatus.RECEIVED, PurchaseOrderStatus.CANCELLED}
    ),
    PurchaseOrderStatus.PARTIALLY_RECEIVED: frozenset(
        {PurchaseOrderStatus.RECEIVED, PurchaseOrderStatus.CLOSED}
    ),
    PurchaseOrderStatus.RECEIVED: frozenset({PurchaseOrderStatus.CLOSED}),
    PurchaseOrderStatus.CLOSED: frozenset(),
    PurchaseOrderStatus.CANCELLED: frozenset(),
}
#: Statuses in which goods may be booked in.
RECEIVABLE = frozenset({PurchaseOrderStatus.SENT, PurchaseOrderStatus.PARTIALLY_RECEIVED})


class ComponentStatus(models.TextChoices):
    IN_STOCK = "in_stock", "In stock"
    ALLOCATED = "allocated", "Allocated"
    INSTALLED = "installed", "Installed"
    FAILED = "failed", "Failed"
    RMA = "rma", "At the manufacturer (RMA)"
    SCRAPPED = "scrapped", "Scrapped"
    SHIPPED = "shipped", "Shipped"


COMPONENT_TRANSITIONS: dict[str, frozenset[str]] = {
    ComponentStatus.IN_STOCK: frozenset(
        {ComponentStatus.ALLOCATED, ComponentStatus.FAILED, ComponentStatus.SCRAPPED, ComponentStatus.SHIPPED}
    ),
    ComponentStatus.ALLOCATED: frozenset(
        {ComponentStatus.IN_STOCK, ComponentStatus.INSTALLED, ComponentStatus.FAILED}
    ),
    ComponentStatus.INSTALLED: frozenset(
        {ComponentStatus.ALLOCATED, ComponentStatus.FAILED, ComponentStatus.SHIPPED}
    ),
    ComponentStatus.FAILED: frozenset({ComponentStatus.RMA, ComponentStatus.SCRAPPED}),
    ComponentStatus.RMA: frozenset({ComponentStatus.IN_STOCK, ComponentStatus.SCRAPPED}),
    ComponentStatus.SCRAPPED: frozenset(),
    ComponentStatus.SHIPPED: frozenset({ComponentStatus.FAILED}),
}


class LabelBatchStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


# A batch's status moves as every rendered-file job's does: werkbank.filejobs.TRANSITIONS.
