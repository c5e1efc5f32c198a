"""Choices of the core app."""

from django.db import models


class OrganizationKind(models.TextChoices):
    CUSTOMER = "customer", "Customer"
    PARTNER = "partner", "Assembly partner"


class MembershipRole(models.TextChoices):
    MEMBER = "member", "Member"
    ADMIN = "admin", "Administrator"


class FileJobStatus(models.TextChoices):
    """The status of every rendered-file job (werkbank.filejobs): handover packs, label batches."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    READY = "ready", "Ready"
    FAILED = "failed", "Failed"


#: What a file job's status may become (a running job may be claimed again: its worker died).
FILE_JOB_TRANSITIONS: dict[str, frozenset[str]] = {
    FileJobStatus.QUEUED: frozenset({FileJobStatus.RUNNING}),
    FileJobStatus.RUNNING: frozenset({FileJobStatus.RUNNING, FileJobStatus.READY, FileJobStatus.FAILED}),
    FileJobStatus.FAILED: frozenset({FileJobStatus.RUNNING}),
    FileJobStatus.READY: frozenset(),
}


def label_of(choices: type[models.Choices], value: object, default: str = "") -> str:
    """The label of `value` among `choices`, in the active language; `default` for a value that is not
    one of them (an audit event of a status since renamed, an empty value). Each status is translated once,
    in its `TextChoices` (with a `pgettext_lazy` context), and every page reads it from there."""
    try:
        return str(choices(value).label)
    except ValueError:
        return default
