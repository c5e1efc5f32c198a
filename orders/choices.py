"""Order statuses and their transition map (DESIGN.md, Lifecycle)."""

from django.db import models


class OrderStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    ROI_REVIEW = "roi_review", "ROI review"
    APPROVED = "approved", "Approved"
    PROCUREMENT = "procurement", "Procurement"
    ASSEMBLY = "assembly", "Assembly"
    BURN_IN = "burn_in", "Burn-in"
    DEPLOYMENT = "deployment", "Deployment"
    HANDED_OVER = "handed_over", "Handed over"
    CLOSED = "closed", "Closed"
    REJECTED = "rejected", "Rejected"
    CANCELLED = "cancelled", "Cancelled"


TRANSITIONS: dict[str, frozenset[str]] = {
    OrderStatus.DRAFT: frozenset({OrderStatus.ROI_REVIEW, OrderStatus.CANCELLED}),
    OrderStatus.ROI_REVIEW: frozenset({OrderStatus.APPROVED, OrderStatus.REJECTED, OrderStatus.CANCELLED}),
    OrderStatus.APPROVED: frozenset({OrderStatus.PROCUREMENT, OrderStatus.CANCELLED}),
    OrderStatus.PROCUREMENT: frozenset({OrderStatus.ASSEMBLY, OrderStatus.CANCELLED}),
    OrderStatus.ASSEMBLY: frozenset({OrderStatus.BURN_IN}),
    OrderStatus.BURN_IN: frozenset({OrderStatus.DEPLOYMENT}),
    OrderStatus.DEPLOYMENT: frozenset({OrderStatus.HANDED_OVER}),
    OrderStatus.HANDED_OVER: frozenset({OrderStatus.CLOSED}),
    OrderStatus.CLOSED: frozenset(),
    OrderStatus.REJECTED: frozenset(),
    OrderStatus.CANCELLED: frozenset(),
}

#: Statuses in which the order's terms (configuration, count, warranty) may still be edited.
EDITABLE = frozenset({OrderStatus.DRAFT})
#: Statuses that end an order.
FINAL = frozenset({OrderStatus.CLOSED, OrderStatus.REJECTED, OrderStatus.CANCELLED})
OPEN = frozenset(OrderStatus.values) - FINAL


class WarrantyTerm(models.IntegerChoices):
    THREE_YEARS = 36, "3 years"
    FIVE_YEARS = 60, "5 years"


#: German status names, for customer e-mails and documents in German.
STATUS_LABELS_DE: dict[str, str] = {
    OrderStatus.DRAFT: "Entwurf",
    OrderStatus.ROI_REVIEW: "ROI-Prüfung",
    OrderStatus.APPROVED: "Freigegeben",
    OrderStatus.PROCUREMENT: "Beschaffung",
    OrderStatus.ASSEMBLY: "Montage",
    OrderStatus.BURN_IN: "Stresstest",
    OrderStatus.DEPLOYMENT: "Deployment",
    OrderStatus.HANDED_OVER: "Übergeben",
    OrderStatus.CLOSED: "Abgeschlossen",
    OrderStatus.REJECTED: "Abgelehnt",
    OrderStatus.CANCELLED: "Storniert",
}
