"""Warranty models: handover packs, the warranty registration per serial, warranty records, claims (RMA)
with replacement lineage, and the expiry notices sent."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from builds.models import Allocation, Server
from burnin.models import Finding
from inventory.models import Component
from orders.models import Order
from warranty.choices import (
    CLAIM_OPEN,
    ClaimStatus,
    NoticeThreshold,
    PackLanguage,
    RecordKind,
)
from werkbank.access import Purpose, VisibleToQuerySet
from werkbank.choices import FileJobStatus, OrganizationKind
from werkbank.filejobs import RenderedFileJob, file_job_constraints
from werkbank.models import Organization, member_organizations


def _customers_of(user: Any) -> models.QuerySet:
    return member_organizations(user, kind=OrganizationKind.CUSTOMER)


class HandoverPackQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> HandoverPackQuerySet:
        # The pack is the customer's document; the partner built the server but is not handed it.
        return self.filter(server__order__customer__in=_customers_of(user))


def pack_upload_to(pack: HandoverPack, filename: str) -> str:
    return f"handover/{pack.server.asset_tag}/r{pack.revision}-{pack.language}/{filename}"


class HandoverPack(RenderedFileJob):
    """One revision of a server's handover pack in one language: a PDF and a ZIP (PDF, telemetry CSV, raw
    probe report, manifest), rendered by a Celery task (warranty/tasks.py) through warranty/documents/."""

    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="handover_packs")
    revision = models.PositiveIntegerField()
    language = models.CharField(max_length=2, choices=PackLanguage.choices, default=PackLanguage.EN)
    pdf = models.FileField(upload_to=pack_upload_to, blank=True, max_length=255)
    pdf_sha256 = models.CharField(max_length=64, blank=True)
    pdf_size = models.PositiveIntegerField(null=True, blank=True)
    zip = models.FileField(upload_to=pack_upload_to, blank=True, max_length=255)
    zip_sha256 = models.CharField(max_length=64, blank=True)
    zip_size = models.PositiveIntegerField(null=True, blank=True)
    generated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+",
        help_text="Who asked for this revision.",
    )  # fmt: skip

    objects = HandoverPackQuerySet.as_manager()

    class Meta:
        ordering = ["server_id", "-revision"]
        # The public /verify/ page looks a pack up by its ZIP's SHA-256, without login.
        indexes = [models.Index(fields=["zip_sha256"], name="warranty_pack_zip_sha256")]
        constraints = [
            models.UniqueConstraint(
                fields=["server", "revision"],
                name="%(app_label)s_%(class)s_unique_revision",
                violation_error_message="This server already has a handover pack of this revision.",
            ),
            # A queued revision has not read the server's data yet: a second one would render the same.
            models.UniqueConstraint(
                fields=["server", "language"],
                condition=Q(status=FileJobStatus.QUEUED),
                name="%(app_label)s_%(class)s_one_queued_per_language",
                violation_error_message="This server already has a queued handover pack in this language.",
            ),
            models.CheckConstraint(
                condition=Q(language__in=PackLanguage.values),
                name="%(app_label)s_%(class)s_language_valid",
                violation_error_message="A pack is in English (en) or German (de).",
            ),
            *file_job_constraints("pack"),
            models.CheckConstraint(
                condition=~Q(status=FileJobStatus.READY)
                | (
                    ~Q(pdf="")
                    & ~Q(zip="")
                    & Q(
                        pdf_sha256__regex=r"^[0-9a-f]{64}$", zip_sha256__regex=r"^[0-9a-f]{64}$", progress=100
                    )
                ),
                name="%(app_label)s_%(class)s_ready_has_files",
                violation_error_message="A ready pack has its PDF and ZIP with their SHA-256.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.server} pack r{self.revision} ({self.language})"


class CustomerOwnedQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> CustomerOwnedQuerySet:
        return self.filter(customer__in=_customers_of(user))


class WarrantyRegistration(models.Model):
    """The warranty of one component registered in the customer's name (seed 000: "vollständige
    Garantieunterlagen auf den Namen des Kunden"), from the moment it is allocated to the customer's server.

    One per allocation: a component allocated twice (released, then allocated again) is registered twice.
    """

    allocation = models.OneToOneField(
        Allocation, on_delete=models.PROTECT, related_name="warranty_registration"
    )
    component = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="warranty_registrations")
    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="warranty_registrations")
    customer = models.ForeignKey(
        Organization, on_delete=models.PROTECT, related_name="warranty_registrations"
    )
    registered_at = models.DateTimeField()

    objects = CustomerOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["registered_at", "id"]
        indexes = [models.Index(fields=["registered_at", "id"], name="warranty_registration_time")]

    def __str__(self) -> str:
        return f"{self.component} registered to {self.customer}"


class WarrantyRecord(models.Model):
    """The warranty of one serial the customer received: a component in a handed-over server, or the server
    itself. Start at handover, term from the order (36 or 60 months), or the remaining term for a
    replacement, whose lineage is kept both ways (`replaces` / `replaced_by`)."""

    kind = models.CharField(max_length=16, choices=RecordKind.choices)
    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="warranty_records")
    component = models.ForeignKey(
        Component, null=True, blank=True, on_delete=models.PROTECT, related_name="warranty_records"
    )
    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="warranty_records")
    customer = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="warranty_records")
    serial = models.CharField(
        max_length=64, db_index=True, help_text="The component's serial, or the server's."
    )
    description = models.CharField(
        max_length=200, help_text="What it is: the part, or the server's hostname."
    )
    start_date = models.DateField()
    term_months = models.PositiveSmallIntegerField()
    end_date = models.DateField()
    replaces = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="replaced_by"
    )
    replaced_at = models.DateTimeField(null=True, blank=True, help_text="When a replacement took its place.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CustomerOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["server_id", "kind", "serial", "id"]
        indexes = [
            models.Index(fields=["server", "kind", "serial", "id"], name="warranty_record_server_kind")
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=RecordKind.values),
                name="%(app_label)s_%(class)s_kind_valid",
                violation_error_message="Unknown warranty record kind.",
            ),
            models.CheckConstraint(
                condition=Q(kind=RecordKind.SERVER, component__isnull=True)
                | Q(kind=RecordKind.COMPONENT, component__isnull=False),
                name="%(app_label)s_%(class)s_component_matches_kind",
                violation_error_message="A component's record names its component; the server's names none.",
            ),
            models.UniqueConstraint(
                fields=["server"],
                condition=Q(kind=RecordKind.SERVER),
                name="%(app_label)s_%(class)s_one_per_server",
                violation_error_message="This server already has its warranty record.",
            ),
            models.UniqueConstraint(
                fields=["server", "component"],
                condition=Q(kind=RecordKind.COMPONENT),
                name="%(app_label)s_%(class)s_one_per_component",
                violation_error_message="This component already has a warranty record on this server.",
            ),
            models.CheckConstraint(
                condition=Q(end_date__gt=F("start_date")),
                name="%(app_label)s_%(class)s_ends_after_start",
                violation_error_message="A warranty ends after it starts.",
            ),
            models.CheckConstraint(
                condition=Q(term_months__gte=1, term_months__lte=60),
                name="%(app_label)s_%(class)s_term_range",
                violation_error_message="A warranty term is 1–60 months.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.serial} until {self.end_date}"


class WarrantyClaim(models.Model):
    """A claim (RMA) against one warranty record.

    open → approved or rejected → replacement_shipped → closed (warranty/choices.py). A claim drafted from a
    drift finding of a field check (`finding`) starts as a draft, which a PM confirms (open) or dismisses.
    """

    number = models.CharField(max_length=20, unique=True, help_text="RMA-YYYY-NNNNN")
    record = models.ForeignKey(WarrantyRecord, on_delete=models.PROTECT, related_name="claims")
    customer = models.ForeignKey(Organization, on_delete=models.PROTECT, related_name="warranty_claims")
    status = models.CharField(max_length=24, choices=ClaimStatus.choices, default=ClaimStatus.OPEN)
    description = models.TextField(help_text="What is wrong, in the customer's words.")
    decision_note = models.TextField(
        blank=True, help_text="Why it was approved or rejected (shown to the customer)."
    )
    replacement_record = models.OneToOneField(
        WarrantyRecord, null=True, blank=True, on_delete=models.PROTECT, related_name="claim_replacing"
    )
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    # One claim per finding, by the database: a drift signal delivered twice drafts nothing new. PROTECT:
    # the finding is the claim's evidence.
    finding = models.OneToOneField(
        Finding,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="warranty_claim",
        help_text="The drift finding this claim was drafted from (none: filed by a person).",
    )
    pm_notified_at = models.DateTimeField(
        null=True, blank=True, help_text="When the PMs were told of the drafted claim (once)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = CustomerOwnedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "id"]
        indexes = [models.Index(fields=["-created_at", "id"], name="warranty_claim_newest")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=ClaimStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
                violation_error_message="Unknown claim status.",
            ),
            models.UniqueConstraint(
                fields=["record"],
                condition=Q(status__in=sorted(CLAIM_OPEN)),
                name="%(app_label)s_%(class)s_one_open_per_record",
                violation_error_message="This serial already has a claim in progress.",
            ),
        ]

    def __str__(self) -> str:
        return self.number


class ExpiryNotice(models.Model):
    """That a record's customer was told of its end at one threshold: never twice for the same pair."""

    record = models.ForeignKey(WarrantyRecord, on_delete=models.CASCADE, related_name="expiry_notices")
    threshold_days = models.PositiveSmallIntegerField(choices=NoticeThreshold.choices)
    sent_at = models.DateTimeField(auto_now_add=True)

    objects = VisibleToQuerySet.as_manager()  # PMs only: bookkeeping of the sender

    class Meta:
        ordering = ["-sent_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["record", "threshold_days"],
                name="%(app_label)s_%(class)s_once_per_threshold",
                violation_error_message="This record's customer was already told at this threshold.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.record} at {self.threshold_days} days"
