"""Warranty models: handover packs, the warranty registration per serial, warranty records, claims (RMA)
with replacement lineage, and the expiry notices sent."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from builds.models import Allocation, Connector, ConnectorBlacklist, Server
from burnin.models import Finding
from inventory.models import Component, Supplier
from orders.models import Order
from warranty.choices import (
    ATTACHMENT_TYPES,
    CLAIM_OPEN,
    SUPPLIER_RETURN_OPEN,
    AttachmentKind,
    ClaimStatus,
    FailureCause,
    FailureStage,
    NoticeThreshold,
    PackLanguage,
    RecordKind,
    SupplierReturnOutcome,
    SupplierReturnStatus,
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
            models.Index(fields=["server", "kind", "serial", "id"], name="warranty_record_server_kind"),
            # The PM's warranty report pages by end date (warranty.selectors.warranty_report, issue #29).
            models.Index(fields=["end_date", "id"], name="warranty_record_end"),
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


class ClaimAttachmentQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> ClaimAttachmentQuerySet:
        # The claim's customer's members (and PMs): the partner that built the server sees no claim.
        return self.filter(claim__customer__in=_customers_of(user))


#: The stored file's extension by its content type (never the uploader's file name).
ATTACHMENT_EXTENSIONS = {
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/webp": "webp",
    "text/plain": "txt",
    "application/gzip": "gz",
    "application/zip": "zip",
}


#: The names a download keeps as they are, by content type; any other gets the type's extension added.
ATTACHMENT_SUFFIXES = {
    "image/jpeg": (".jpg", ".jpeg"),
    "image/png": (".png",),
    "image/webp": (".webp",),
    "text/plain": (".txt", ".log"),
    "application/gzip": (".gz", ".tgz"),
    "application/zip": (".zip",),
}


def attachment_upload_to(attachment: ClaimAttachment, filename: str) -> str:
    extension = ATTACHMENT_EXTENSIONS.get(attachment.content_type, "bin")
    return f"claim-attachments/{attachment.claim_id}/{uuid.uuid4().hex}.{extension}"


class ClaimAttachment(models.Model):
    """A log or a photo attached to a claim by its customer (or a PM), checked by its content and served
    only after the access check (warranty.services.attachments). A photo is stored re-encoded, a log as it
    came; `sha256` and `size_bytes` are of the stored bytes."""

    claim = models.ForeignKey(WarrantyClaim, on_delete=models.PROTECT, related_name="attachments")
    file = models.FileField(upload_to=attachment_upload_to, max_length=200)
    kind = models.CharField(max_length=8, choices=AttachmentKind.choices)
    content_type = models.CharField(max_length=32)
    original_name = models.CharField(max_length=200, help_text="The file's name as it was uploaded.")
    size_bytes = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)

    objects = ClaimAttachmentQuerySet.as_manager()

    class Meta:
        ordering = ["claim_id", "uploaded_at", "id"]
        indexes = [models.Index(fields=["claim", "uploaded_at", "id"], name="claim_attachment_claim_time")]
        constraints = [
            models.CheckConstraint(
                condition=Q(
                    kind=AttachmentKind.PHOTO, content_type__in=ATTACHMENT_TYPES[AttachmentKind.PHOTO]
                )
                | Q(kind=AttachmentKind.LOG, content_type__in=ATTACHMENT_TYPES[AttachmentKind.LOG]),
                name="%(app_label)s_%(class)s_type_matches_kind",
                violation_error_message="A photo is a JPEG, PNG or WebP image; a log is text, gzip or ZIP.",
            ),
            models.CheckConstraint(
                condition=Q(sha256__regex=r"^[0-9a-f]{64}$") & Q(size_bytes__gt=0),
                name="%(app_label)s_%(class)s_has_sha256_and_size",
                violation_error_message="An attachment has its SHA-256 and a size of at least one byte.",
            ),
            # The same file twice on one claim is one attachment: a form sent again adds nothing.
            models.UniqueConstraint(
                fields=["claim", "sha256"],
                name="%(app_label)s_%(class)s_once_per_claim",
                violation_error_message="This file is already attached to this claim.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.original_name} on {self.claim}"

    @property
    def download_name(self) -> str:
        """The uploader's name, ending as its content is: "dmesg" (text) downloads as "dmesg.txt"."""
        if self.original_name.lower().endswith(ATTACHMENT_SUFFIXES.get(self.content_type, ())):
            return self.original_name
        return f"{self.original_name}.{ATTACHMENT_EXTENSIONS.get(self.content_type, 'bin')}"


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


# --- fleet quality (issue #29) ------------------------------------------------------------------------


class Attribution(models.Model):
    """What caused one failure: a `fail` finding of a run, a claim a person filed, or a connector blacklisted
    on the bench (exactly one of them). The rules propose a cause (`proposed_cause`, with the rule's
    sentence); a PM confirms or corrects it (`cause`, audited). Only a component's or a connector's count in
    the fleet's failure rates (pm.quality): against the component's lot, part and supplier, or against the
    connector's position (its name) on its server's chassis layout.
    """

    server = models.ForeignKey(Server, on_delete=models.PROTECT, related_name="attributions")
    stage = models.CharField(max_length=16, choices=FailureStage.choices)
    occurred_at = models.DateTimeField(help_text="When it showed: the run, the claim, the blacklisting.")
    finding = models.OneToOneField(
        Finding, null=True, blank=True, on_delete=models.PROTECT, related_name="attribution"
    )
    claim = models.OneToOneField(
        "WarrantyClaim", null=True, blank=True, on_delete=models.PROTECT, related_name="attribution"
    )
    blacklist = models.OneToOneField(
        ConnectorBlacklist, null=True, blank=True, on_delete=models.PROTECT, related_name="attribution"
    )
    proposed_cause = models.CharField(max_length=16, choices=FailureCause.choices)
    proposed_reason = models.CharField(max_length=500, help_text="The rule's sentence: why it proposed that.")
    cause = models.CharField(max_length=16, choices=FailureCause.choices)
    component = models.ForeignKey(
        Component, null=True, blank=True, on_delete=models.PROTECT, related_name="attributions",
        help_text="The component involved (blamed when the cause is the component).",
    )  # fmt: skip
    connector = models.ForeignKey(
        Connector, null=True, blank=True, on_delete=models.PROTECT, related_name="attributions",
        help_text="The connector involved (blamed when the cause is the connector).",
    )  # fmt: skip
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    confirmed_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True, help_text="The PM's reason for a correction.")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = VisibleToQuerySet.as_manager()  # PMs only: the fleet's quality is their business

    class Meta:
        ordering = ["-occurred_at", "-id"]
        indexes = [
            models.Index(fields=["-occurred_at", "-id"], name="attribution_newest"),
            models.Index(fields=["cause", "component"], name="attribution_cause_component"),
            models.Index(fields=["cause", "connector"], name="attribution_cause_connector"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(stage__in=FailureStage.values),
                name="%(app_label)s_%(class)s_stage_valid",
                violation_error_message="Unknown failure stage.",
            ),
            models.CheckConstraint(
                condition=Q(cause__in=FailureCause.values) & Q(proposed_cause__in=FailureCause.values),
                name="%(app_label)s_%(class)s_cause_valid",
                violation_error_message="Unknown failure cause.",
            ),
            models.CheckConstraint(
                condition=Q(finding__isnull=False, claim__isnull=True, blacklist__isnull=True)
                | Q(finding__isnull=True, claim__isnull=False, blacklist__isnull=True)
                | Q(finding__isnull=True, claim__isnull=True, blacklist__isnull=False),
                name="%(app_label)s_%(class)s_one_source",
                violation_error_message="An attribution is of one finding, one claim or one blacklisting.",
            ),
            models.CheckConstraint(
                condition=~Q(cause=FailureCause.COMPONENT) | Q(component__isnull=False),
                name="%(app_label)s_%(class)s_component_cause_names_it",
                violation_error_message="A failure attributed to a component names the component.",
            ),
            models.CheckConstraint(
                condition=~Q(cause=FailureCause.CONNECTOR) | Q(connector__isnull=False),
                name="%(app_label)s_%(class)s_connector_cause_names_it",
                violation_error_message="A failure attributed to a connector names the connector.",
            ),
            models.CheckConstraint(
                condition=(Q(confirmed_at__isnull=True) & Q(confirmed_by__isnull=True))
                | Q(confirmed_at__isnull=False),
                name="%(app_label)s_%(class)s_confirmed_has_time",
                violation_error_message="A confirmed attribution has the time it was confirmed.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_stage_display()} failure of {self.server}: {self.cause}"


class SupplierReturn(models.Model):
    """A failed component sent back to its supplier (or maker): SR-YYYY-NNNN, with the supplier's RMA number.

    open → shipped → closed (warranty/choices.py) with the outcome: a credit note, a replacement (a new
    serial booked into stock, in the same lot or a new one) or refused. Linked both ways with the customer's
    claim it came from (`claim`), if any; each closes on its own.
    """

    number = models.CharField(max_length=20, unique=True, help_text="SR-YYYY-NNNN")
    component = models.ForeignKey(Component, on_delete=models.PROTECT, related_name="supplier_returns")
    supplier = models.ForeignKey(Supplier, on_delete=models.PROTECT, related_name="returns")
    claim = models.OneToOneField(
        "WarrantyClaim", null=True, blank=True, on_delete=models.PROTECT, related_name="supplier_return"
    )
    attribution = models.ForeignKey(
        Attribution, null=True, blank=True, on_delete=models.PROTECT, related_name="supplier_returns"
    )
    status = models.CharField(
        max_length=16, choices=SupplierReturnStatus.choices, default=SupplierReturnStatus.OPEN
    )
    reason = models.TextField(help_text="What is wrong with it, as the supplier is told.")
    supplier_rma_number = models.CharField(max_length=64, blank=True)
    shipped_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True, help_text="When the supplier's answer came back.")
    outcome = models.CharField(max_length=16, choices=SupplierReturnOutcome.choices, blank=True)
    outcome_note = models.TextField(blank=True)
    credit_amount = models.DecimalField(max_digits=12, decimal_places=2, null=True, blank=True)
    replacement = models.OneToOneField(
        Component, null=True, blank=True, on_delete=models.PROTECT, related_name="replaces_return"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = VisibleToQuerySet.as_manager()  # PMs only

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["-created_at", "-id"], name="supplier_return_newest")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=SupplierReturnStatus.values),
                name="%(app_label)s_%(class)s_status_valid",
                violation_error_message="Unknown supplier return status.",
            ),
            models.UniqueConstraint(
                fields=["component"],
                condition=Q(status__in=sorted(SUPPLIER_RETURN_OPEN)),
                name="%(app_label)s_%(class)s_one_open_per_component",
                violation_error_message="This component is already on its way back to its supplier.",
            ),
            models.CheckConstraint(
                condition=Q(status=SupplierReturnStatus.OPEN)
                | (Q(shipped_at__isnull=False) & ~Q(supplier_rma_number="")),
                name="%(app_label)s_%(class)s_shipped_has_rma",
                violation_error_message="A shipped return has its ship date and the supplier's RMA number.",
            ),
            models.CheckConstraint(
                condition=~Q(status=SupplierReturnStatus.CLOSED)
                | (Q(closed_at__isnull=False) & Q(outcome__in=SupplierReturnOutcome.values)),
                name="%(app_label)s_%(class)s_closed_has_outcome",
                violation_error_message="A closed return has its outcome and the date it came back.",
            ),
            models.CheckConstraint(
                condition=Q(outcome=SupplierReturnOutcome.REPLACEMENT, replacement__isnull=False)
                | (~Q(outcome=SupplierReturnOutcome.REPLACEMENT) & Q(replacement__isnull=True)),
                name="%(app_label)s_%(class)s_replacement_matches_outcome",
                violation_error_message="A replacement outcome names the replacement serial; no other does.",
            ),
        ]

    def __str__(self) -> str:
        return self.number


class PmDigest(models.Model):
    """That the PMs' weekly warranty digest of one week went out (warranty.services.digest): the week's
    Monday is unique, so a second run in the same week, or a re-delivered task, sends nothing."""

    week = models.DateField(help_text="The Monday of the week the digest was sent in.")
    sent_at = models.DateTimeField(auto_now_add=True)
    recipients = models.JSONField(default=list, blank=True, help_text="The PMs' e-mail addresses.")
    counts = models.JSONField(default=dict, blank=True, help_text="How many rows each section listed.")

    objects = VisibleToQuerySet.as_manager()  # PMs only: bookkeeping of the sender

    class Meta:
        ordering = ["-week"]
        constraints = [
            models.UniqueConstraint(
                fields=["week"],
                name="%(app_label)s_%(class)s_once_a_week",
                violation_error_message="The PMs' digest of this week was already sent.",
            ),
        ]

    def __str__(self) -> str:
        return f"PM digest of the week of {self.week:%Y-%m-%d}"
