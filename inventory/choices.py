"""Choices of the inventory app."""

from django.db import models
from django.utils.translation import pgettext_lazy

from werkbank.choices import FileJobStatus


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
    DRAFT = "draft", pgettext_lazy("purchase order status", "Draft")
    SENT = "sent", pgettext_lazy("purchase order status", "Sent")
    PARTIALLY_RECEIVED = "partially_received", pgettext_lazy("purchase order status", "Partially received")
    RECEIVED = "received", pgettext_lazy("purchase order status", "Received")
    CLOSED = "closed", pgettext_lazy("purchase order status", "Closed")
    CANCELLED = "cancelled", pgettext_lazy("purchase order status", "Cancelled")


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
    IN_STOCK = "in_stock", pgettext_lazy("component status", "In stock")
    ALLOCATED = "allocated", pgettext_lazy("component status", "Allocated")
    INSTALLED = "installed", pgettext_lazy("component status", "Installed")
    FAILED = "failed", pgettext_lazy("component status", "Failed")
    RMA = "rma", pgettext_lazy("component status", "At the manufacturer (RMA)")
    SCRAPPED = "scrapped", pgettext_lazy("component status", "Scrapped")
    SHIPPED = "shipped", pgettext_lazy("component status", "Shipped")


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


#: A label batch is a rendered-file job (werkbank.filejobs): its statuses are the one enum of every file job,
#: under this app's name, and move as every file job's do (werkbank.choices.FILE_JOB_TRANSITIONS).
LabelBatchStatus = FileJobStatus
