"""What the platform poll keeps besides the listing history: who may see a platform account, and the alerts
it sent (one per listing row and kind, so a repeated poll or task sends nothing twice)."""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q

from deployment.choices import PlatformAlertKind
from werkbank.access import Purpose, VisibleToQuerySet
from werkbank.choices import OrganizationKind
from werkbank.models import member_organizations


class PlatformAccountQuerySet(VisibleToQuerySet):
    """A platform account is its customer's: the customer's members see it (never its key), PMs all of
    them, partners none."""

    def scope_for_member(self, user: Any, purpose: Purpose) -> PlatformAccountQuerySet:
        return self.filter(organization__in=member_organizations(user, kind=OrganizationKind.CUSTOMER))


class PlatformAlertQuerySet(VisibleToQuerySet):
    """An alert is seen by whoever sees its listing's server."""

    def scope_for_member(self, user: Any, purpose: Purpose) -> PlatformAlertQuerySet:
        from builds.models import Server

        return self.filter(listing__server__in=Server.objects.scope_for_member(user, purpose).values("pk"))


class PlatformAlert(models.Model):
    """One alert of the platform poll: the listing row that recorded the change and what it was. Written in
    the poll's transaction, e-mailed once by `platform_alert_send` (`sent_at` set in the same transaction as
    the mail goes out), so a re-delivered task sends nothing more."""

    listing = models.ForeignKey("deployment.PlatformListing", on_delete=models.PROTECT, related_name="alerts")
    kind = models.CharField(max_length=16, choices=PlatformAlertKind.choices)
    recipients = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    objects = PlatformAlertQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["listing", "kind"],
                name="%(app_label)s_%(class)s_one_per_listing_kind",
                violation_error_message="This listing row has this alert already.",
            ),
            models.CheckConstraint(
                condition=Q(kind__in=PlatformAlertKind.values),
                name="%(app_label)s_%(class)s_kind_valid",
                violation_error_message="Unknown alert kind.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} · listing {self.listing_id}"
