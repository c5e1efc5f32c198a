"""Core models: tenancy (organizations and memberships), the audit trail and the task outbox."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import Q

from werkbank.access import Purpose, VisibleToQuerySet
from werkbank.choices import MembershipRole, OrganizationKind


class OrganizationQuerySet(VisibleToQuerySet):
    def scope_for_member(self, user: Any, purpose: Purpose) -> OrganizationQuerySet:
        return self.filter(pk__in=member_organizations(user))

    def customers(self) -> OrganizationQuerySet:
        return self.filter(kind=OrganizationKind.CUSTOMER)

    def partners(self) -> OrganizationQuerySet:
        return self.filter(kind=OrganizationKind.PARTNER)


class Organization(models.Model):
    """A tenant: a customer who orders servers, or an assembly partner who builds them."""

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=16, choices=OrganizationKind.choices)
    contact_email = models.EmailField(blank=True)
    language = models.CharField(max_length=8, choices=settings.LANGUAGES, default="en")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OrganizationQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=OrganizationKind.values),
                name="%(app_label)s_%(class)s_kind_valid",
                violation_error_message="Organization kind must be customer or partner.",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    """A user belongs to an organization and sees what that organization owns."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    organization = models.ForeignKey(Organization, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=MembershipRole.choices, default=MembershipRole.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "organization"],
                name="%(app_label)s_%(class)s_unique_user_organization",
                violation_error_message="This user is already a member of this organization.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} @ {self.organization}"


def member_organizations(user: Any, *, kind: str | None = None) -> models.QuerySet:
    """A subquery of the ids of the organizations the user belongs to, optionally of one kind: what every
    `scope_for_member` builds on.

    It is lazy, so filters built on it cost no extra query.
    """
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Membership.objects.none().values("organization_id")
    memberships = Membership.objects.filter(user=user)
    if kind is not None:
        memberships = memberships.filter(organization__kind=kind)
    return memberships.values("organization_id")


class AuditEventQuerySet(models.QuerySet):
    def for_object(self, obj: models.Model) -> AuditEventQuerySet:
        return self.filter(content_type=ContentType.objects.get_for_model(obj), object_id=str(obj.pk))


class AuditEvent(models.Model):
    """One state change, written by the service that made it, in the same transaction."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    verb = models.CharField(max_length=64)
    content_type = models.ForeignKey(ContentType, on_delete=models.PROTECT, related_name="+")
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200)
    # Services pass model values as they are: Decimals, dates and UUIDs serialise as strings.
    before = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    after = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    note = models.TextField(blank=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(fields=["content_type", "object_id", "created_at"], name="audit_object_time"),
            # The audit list's default order (issue #15: every list pages along an index of its own table).
            models.Index(fields=["created_at", "id"], name="audit_time"),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.verb} {self.object_repr}"


class NumberSequence(models.Model):
    """The last number handed out for a prefix in a year (WB-2026-0001, PO-2026-0001 …).

    The row is locked while the next number is taken, so concurrent creators never share a number.
    """

    prefix = models.CharField(max_length=8)
    year = models.PositiveSmallIntegerField()
    last_number = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["prefix", "year"],
                name="%(app_label)s_%(class)s_unique_prefix_year",
                violation_error_message="This sequence already exists.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}-{self.year}: {self.last_number}"


class TaskOutbox(models.Model):
    """A Celery task to publish, written in the transaction that asked for it (the transactional outbox).

    `werkbank.tasks.enqueue_on_commit` writes the row with the caller's changes and publishes the task once
    they commit, setting `sent_at`. A row the publish never reached (the broker refused it, or the process
    died between the commit and the publish) stays unsent; `outbox_sweep_task` publishes it again. The
    idempotency key is the Celery task id of every publish of the row, so the worker's log ties a run to
    its row. Tasks tolerate a second delivery (each is idempotent by a database constraint).
    """

    task = models.CharField(max_length=200)
    kwargs = models.JSONField(default=dict, blank=True)
    idempotency_key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]
        indexes = [
            models.Index(
                fields=["created_at"], condition=Q(sent_at__isnull=True), name="taskoutbox_unsent_created"
            ),
        ]

    def __str__(self) -> str:
        state = f"sent {self.sent_at:%Y-%m-%d %H:%M:%S}" if self.sent_at else "unsent"
        return f"{self.task}({self.kwargs}) {state}"
