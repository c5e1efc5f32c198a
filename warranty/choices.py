"""Statuses of the warranty app, with their transitions as data (CONVENTIONS.md §2)."""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from builds.choices import ServerStatus
from werkbank.choices import FileJobStatus

#: A pack is a rendered-file job (werkbank.filejobs): its statuses are the one enum of every file job, under
#: this app's name.
PackStatus = FileJobStatus


class PackLanguage(models.TextChoices):
    EN = "en", "English"
    DE = "de", "Deutsch"


class RecordKind(models.TextChoices):
    SERVER = "server", "Server"
    COMPONENT = "component", "Component"


class ClaimStatus(models.TextChoices):
    # Translated: the customer reads a claim's status in the portal, in its language.
    #: Proposed by the system from a drift finding (burnin.signals.drift_failed); a PM confirms it (open)
    #: or dismisses it with the reason the customer reads.
    DRAFT = "draft", _("Draft")
    OPEN = "open", _("Open")
    APPROVED = "approved", _("Approved")
    REJECTED = "rejected", _("Rejected")
    REPLACEMENT_SHIPPED = "replacement_shipped", _("Replacement shipped")
    CLOSED = "closed", _("Closed")
    DISMISSED = "dismissed", _("Dismissed")


CLAIM_TRANSITIONS: dict[str, frozenset[str]] = {
    ClaimStatus.DRAFT: frozenset({ClaimStatus.OPEN, ClaimStatus.DISMISSED}),
    ClaimStatus.OPEN: frozenset({ClaimStatus.APPROVED, ClaimStatus.REJECTED}),
    ClaimStatus.APPROVED: frozenset({ClaimStatus.REPLACEMENT_SHIPPED}),
    ClaimStatus.REJECTED: frozenset(),
    ClaimStatus.REPLACEMENT_SHIPPED: frozenset({ClaimStatus.CLOSED}),
    ClaimStatus.CLOSED: frozenset(),
    ClaimStatus.DISMISSED: frozenset(),
}
#: Claims still being handled: a record has at most one of them at a time (a draft too: a second drift of
#: the same card is the same fault until a PM has decided on the first).
CLAIM_OPEN = frozenset(
    {ClaimStatus.DRAFT, ClaimStatus.OPEN, ClaimStatus.APPROVED, ClaimStatus.REPLACEMENT_SHIPPED}
)


class AttachmentKind(models.TextChoices):
    """What a file attached to a claim is, by its content (warranty.services.attachments)."""

    LOG = "log", _("Log")
    PHOTO = "photo", _("Photo")


#: The content types a claim's attachment is stored as, by kind: photos re-encoded as they came (JPEG, PNG,
#: WebP), logs kept as they came (plain text, gzip, ZIP).
ATTACHMENT_TYPES: dict[str, tuple[str, ...]] = {
    AttachmentKind.PHOTO: ("image/jpeg", "image/png", "image/webp"),
    AttachmentKind.LOG: ("text/plain", "application/gzip", "application/zip"),
}

# --- fleet quality (issue #29) ------------------------------------------------------------------------


class FailureStage(models.TextChoices):
    """Where a failure showed: on the bench (a connector blacklisted), in burn-in, in a field check or
    post-repair run, or in a claim a customer filed."""

    BENCH = "bench", _("Bench")
    BURN_IN = "burn_in", _("Burn-in")
    FIELD = "field", _("Field")
    CLAIM = "claim", _("Claim")


class FailureCause(models.TextChoices):
    """What a failure is attributed to. Only a component (its lot, part and supplier) and a connector (its
    chassis layout's position) count in the fleet's failure rates; host and environment are recorded."""

    COMPONENT = "component", _("Component")
    CONNECTOR = "connector", _("Connector")
    HOST = "host", _("Host")
    ENVIRONMENT = "environment", _("Environment")


class SupplierReturnStatus(models.TextChoices):
    OPEN = "open", _("Open")
    SHIPPED = "shipped", _("Shipped to the supplier")
    CLOSED = "closed", _("Closed")


SUPPLIER_RETURN_TRANSITIONS: dict[str, frozenset[str]] = {
    SupplierReturnStatus.OPEN: frozenset({SupplierReturnStatus.SHIPPED}),
    SupplierReturnStatus.SHIPPED: frozenset({SupplierReturnStatus.CLOSED}),
    SupplierReturnStatus.CLOSED: frozenset(),
}
SUPPLIER_RETURN_OPEN = frozenset({SupplierReturnStatus.OPEN, SupplierReturnStatus.SHIPPED})


class SupplierReturnOutcome(models.TextChoices):
    CREDIT = "credit", _("Credit note")
    REPLACEMENT = "replacement", _("Replacement")
    REFUSED = "refused", _("Refused")


class NoticeThreshold(models.IntegerChoices):
    """Days before a record's end at which its customer is told (one digest e-mail per customer)."""

    DAYS_90 = 90, "90 days"
    DAYS_30 = 30, "30 days"


# --- handover packs ---------------------------------------------------------------------------------------

# A pack's status moves as every rendered-file job's does: werkbank.choices.FILE_JOB_TRANSITIONS.

#: A pack waiting for its files: a request for the same server and language returns it instead of a new one.
PACK_PENDING = frozenset({PackStatus.QUEUED.value, PackStatus.RUNNING.value})
#: ...of which a queued one has not read the server's data yet: at most one per server and language.
PACK_QUEUED = frozenset({PackStatus.QUEUED.value})

#: Server statuses for which a pack may be asked
#: for: the pack prints the rack placement, the addresses and the monitoring access, which exist once the
#: server is deployed; after the handover a new revision may still be issued (another language, a
#: replacement under warranty).
PACK_SERVER_STATUSES = frozenset({ServerStatus.DEPLOYED, ServerStatus.HANDED_OVER})
