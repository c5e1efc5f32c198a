"""A server's life on a rental platform (seed 000: Vast.ai): its listing history."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from builds.models import Server
from deployment.choices import ListingSource, Platform, RentalState, Verification
from deployment.models.polling import PlatformAccountQuerySet
from deployment.models.racks import ServerScopedQuerySet
from werkbank.models import Organization


class PlatformListing(models.Model):
    """One recorded state of a server's listing on a rental platform (seed 000: Vast.ai). Append-only: each
    change is a new row, so the history shows when a machine was verified or deverified; the latest row is
    the current state."""

    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="platform_listings")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    machine_id = models.CharField("Platform machine id", max_length=64, blank=True)
    verification = models.CharField(
        max_length=16, choices=Verification.choices, default=Verification.UNVERIFIED
    )
    reliability = models.DecimalField(
        max_digits=5,
        decimal_places=4,
        null=True,
        blank=True,
        help_text="The reliability the platform reports, as a fraction (0.9950 = 99.50 %).",
    )
    listed_on = models.DateField(null=True, blank=True)
    verified_on = models.DateField(null=True, blank=True)
    rental_state = models.CharField(max_length=8, choices=RentalState.choices, default=RentalState.UNKNOWN)
    dlperf = models.DecimalField(
        "DLPerf", max_digits=8, decimal_places=2, null=True, blank=True, help_text="Vast.ai's DLPerf score."
    )
    source = models.CharField(max_length=8, choices=ListingSource.choices, default=ListingSource.MANUAL)
    note = models.TextField(blank=True)
    is_current = models.BooleanField(
        default=True, editable=False, help_text="The server's latest listing; earlier rows are history."
    )
    recorded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    recorded_at = models.DateTimeField(auto_now_add=True)

    objects = ServerScopedQuerySet.as_manager()

    class Meta:
        ordering = ["server_id", "-recorded_at", "-id"]
        indexes = [models.Index(fields=["server", "-recorded_at", "-id"], name="deployment_listing_latest")]
        constraints = [
            models.CheckConstraint(
                condition=Q(platform__in=Platform.values),
                name="%(app_label)s_%(class)s_platform_valid",
                violation_error_message="Unknown platform.",
            ),
            models.CheckConstraint(
                condition=Q(verification__in=Verification.values),
                name="%(app_label)s_%(class)s_verification_valid",
                violation_error_message="Unknown verification status.",
            ),
            models.CheckConstraint(
                condition=Q(platform=Platform.NONE, machine_id="", verification=Verification.UNVERIFIED)
                | (~Q(platform=Platform.NONE) & ~Q(machine_id="")),
                name="%(app_label)s_%(class)s_machine_id_when_listed",
                violation_error_message="A listed server has a machine id; an unlisted one has none.",
            ),
            models.UniqueConstraint(
                fields=["server"],
                condition=Q(is_current=True),
                name="%(app_label)s_%(class)s_one_current_per_server",
                violation_error_message="A server has one current listing.",
            ),
            # Two servers never hold one machine id on a platform at the same time, even when recorded at
            # the same moment: the second insert waits for the first and then fails.
            models.UniqueConstraint(
                fields=["platform", "machine_id"],
                condition=Q(is_current=True) & ~Q(platform=Platform.NONE),
                name="%(app_label)s_%(class)s_unique_current_machine",
                violation_error_message="Another server is listed under this machine id.",
            ),
            models.CheckConstraint(
                condition=Q(reliability__isnull=True) | Q(reliability__gte=0, reliability__lte=1),
                name="%(app_label)s_%(class)s_reliability_fraction",
                violation_error_message="The reliability is a fraction between 0 and 1.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.server.hostname} on {self.get_platform_display()}"


class PlatformEarning(models.Model):
    """One month of one server's earnings on a rental platform (seed 000: Vast.ai), as the platform reports
    them (or as recorded by hand). One row per server, platform and month; `month` is its first day."""

    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="platform_earnings")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    month = models.DateField(help_text="The first day of the month the earnings belong to.")
    amount = models.DecimalField("Earnings", max_digits=12, decimal_places=2)
    currency = models.CharField(max_length=3, default="EUR")
    gpu_hours = models.DecimalField(
        "Rented GPU hours", max_digits=10, decimal_places=1, null=True, blank=True
    )
    source = models.CharField(max_length=8, choices=ListingSource.choices, default=ListingSource.POLL)
    recorded_at = models.DateTimeField(auto_now=True)

    objects = ServerScopedQuerySet.as_manager()

    class Meta:
        ordering = ["server_id", "month"]
        constraints = [
            models.UniqueConstraint(
                fields=["server", "platform", "month"],
                name="%(app_label)s_%(class)s_one_per_month",
                violation_error_message="This server has earnings for this month on this platform already.",
            ),
            models.CheckConstraint(
                condition=Q(amount__gte=0),
                name="%(app_label)s_%(class)s_amount_not_negative",
                violation_error_message="Earnings are not negative.",
            ),
            models.CheckConstraint(
                condition=Q(currency__regex=r"^[A-Z]{3}$"),
                name="%(app_label)s_%(class)s_currency_iso",
                violation_error_message="The currency is an ISO 4217 code, e.g. EUR.",
            ),
            models.CheckConstraint(
                condition=~Q(platform=Platform.NONE),
                name="%(app_label)s_%(class)s_platform_listed",
                violation_error_message="Earnings come from a rental platform.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.server.hostname} {self.month:%Y-%m}: {self.amount} {self.currency}"


class PlatformAccount(models.Model):
    """A customer organisation's account on a rental platform: the API key the poll reads the platform with.
    The key is stored only as a Fernet token (`werkbank.secrets`), like BMC credentials; no serializer, page,
    document or log prints it."""

    organization = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="platform_accounts")
    platform = models.CharField(max_length=16, choices=Platform.choices)
    api_key = models.TextField(editable=False)
    label = models.CharField(max_length=200, blank=True)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = PlatformAccountQuerySet.as_manager()

    class Meta:
        ordering = ["organization_id", "platform"]
        constraints = [
            models.UniqueConstraint(
                fields=["organization", "platform"],
                name="%(app_label)s_%(class)s_one_per_platform",
                violation_error_message="This organisation has an account on this platform already.",
            ),
            models.CheckConstraint(
                condition=~Q(platform=Platform.NONE),
                name="%(app_label)s_%(class)s_platform_listed",
                violation_error_message="An account is on a rental platform.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.organization} on {self.get_platform_display()}"
