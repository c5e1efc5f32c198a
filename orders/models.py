"""Order models: server configurations (bill of materials and PSU layout) and customer orders."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from inventory.models import Part
from orders.choices import OrderStatus, WarrantyTerm
from werkbank.access import VisibleToQuerySet, member_organizations
from werkbank.choices import OrganizationKind
from werkbank.models import AuditEvent, Organization


class ServerConfigurationQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any) -> ServerConfigurationQuerySet:
        # A customer sees the configurations its orders are built to.
        customers = member_organizations(user, kind=OrganizationKind.CUSTOMER)
        return self.filter(orders__customer__in=customers).distinct()


class ServerConfiguration(models.Model):
    """What one server is built from: a bill of materials of parts × quantity, and its PSU layout."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    psu_count = models.PositiveSmallIntegerField("PSUs installed")
    psu_rating_w = models.PositiveIntegerField("PSU rating (W)")
    psu_redundant = models.PositiveSmallIntegerField(
        "Redundant PSUs", default=1, help_text="How many PSUs may fail without loss of power (N+1 → 1)."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ServerConfigurationQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(psu_count__gte=1),
                name="%(app_label)s_%(class)s_psu_count_positive",
                violation_error_message="A configuration needs at least one PSU.",
            ),
            models.CheckConstraint(
                condition=Q(psu_rating_w__gte=1),
                name="%(app_label)s_%(class)s_psu_rating_positive",
                violation_error_message="The PSU rating must be positive.",
            ),
            models.CheckConstraint(
                condition=Q(psu_redundant__lt=F("psu_count")),
                name="%(app_label)s_%(class)s_redundancy_below_count",
                violation_error_message="Redundant PSUs must be fewer than installed PSUs.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def usable_psu_w(self) -> int:
        """(installed − redundant) × rating: 5 × 1600 W in N+1 gives 6400 W (DESIGN.md, power budget)."""
        return (self.psu_count - self.psu_redundant) * self.psu_rating_w


class ConfigurationLine(models.Model):
    """One line of a configuration's bill of materials."""

    configuration = models.ForeignKey(ServerConfiguration, on_delete=models.CASCADE, related_name="lines")
    part = models.ForeignKey(Part, on_delete=models.PROTECT, related_name="configuration_lines")
    quantity = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["configuration", "part__category", "part__mpn"]
        constraints = [
            models.UniqueConstraint(
                fields=["configuration", "part"],
                name="%(app_label)s_%(class)s_unique_part",
                violation_error_message="This part is already on the bill of materials.",
            ),
            models.CheckConstraint(
                condition=Q(quantity__gte=1),
                name="%(app_label)s_%(class)s_quantity_positive",
                violation_error_message="Quantity must be at least 1.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.quantity}× {self.part}"


class OrderQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any) -> OrderQuerySet:
        return self.filter(customer__in=member_organizations(user, kind=OrganizationKind.CUSTOMER))


class Order(models.Model):
    """A customer's order of one or more servers of one configuration."""

    reference = models.CharField(max_length=16, unique=True, editable=False)
    customer = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="orders")
    configuration = models.ForeignKey(ServerConfiguration, on_delete=models.PROTECT, related_name="orders")
    server_count = models.PositiveSmallIntegerField("Servers")
    warranty_months = models.PositiveSmallIntegerField(
        choices=WarrantyTerm.choices, default=WarrantyTerm.THREE_YEARS
    )
    status = models.CharField(
        max_length=16, choices=OrderStatus.choices, default=OrderStatus.DRAFT, editable=False
    )
    notes = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = OrderQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(server_count__gte=1),
                name="%(app_label)s_%(class)s_server_count_positive",
                violation_error_message="An order needs at least one server.",
            ),
            models.CheckConstraint(
                condition=Q(warranty_months__in=WarrantyTerm.values),
                name="%(app_label)s_%(class)s_warranty_term_valid",
                violation_error_message="The warranty term is 36 or 60 months.",
            ),
            models.CheckConstraint(
                condition=Q(status__in=OrderStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
                violation_error_message="Unknown order status.",
            ),
            models.CheckConstraint(
                condition=Q(reference__regex=r"^WB-[0-9]{4}-[0-9]{4,}$"),
                name="%(app_label)s_%(class)s_reference_format",
                violation_error_message="The reference has the form WB-YYYY-NNNN.",
            ),
        ]
        indexes = [models.Index(fields=["status"], name="order_status")]

    def __str__(self) -> str:
        return self.reference


class OrderSequence(models.Model):
    """The last order number handed out in a year; locked while the next one is taken."""

    year = models.PositiveSmallIntegerField(primary_key=True)
    last_number = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.year}: {self.last_number}"


class StatusNotice(models.Model):
    """The e-mail sent to a customer's members for one status transition.

    One row per transition (its audit event): a re-delivered notification task finds the row and sends
    nothing more.
    """

    order = models.ForeignKey(Order, on_delete=models.CASCADE, related_name="status_notices")
    event = models.OneToOneField(AuditEvent, on_delete=models.PROTECT, related_name="+")
    recipients = models.JSONField(default=list)
    sent_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["sent_at"]

    def __str__(self) -> str:
        return f"{self.order} notice for event {self.event_id}"
