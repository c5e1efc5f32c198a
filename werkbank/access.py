"""Who sees what: the one chokepoint every queryset, view and download goes through.

PMs (staff users in the `project-managers` group) see everything. Members of an organization see what
their organization owns. Anyone else sees nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    AnyUser = AbstractBaseUser | AnonymousUser


def is_pm(user: Any) -> bool:
    """A project manager is an active staff user in the PM group (superusers count as PMs)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    if not user.is_staff:
        return False
    cached = getattr(user, "_werkbank_is_pm", None)
    if cached is None:
        cached = user.groups.filter(name=settings.WERKBANK_PM_GROUP).exists()
        user._werkbank_is_pm = cached
    return cached


def member_organizations(user: Any, *, kind: str | None = None) -> models.QuerySet:
    """A subquery of the ids of the organizations the user belongs to, optionally of one kind.

    It is lazy, so filters built on it cost no extra query.
    """
    from werkbank.models import Membership

    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Membership.objects.none().values("organization_id")
    memberships = Membership.objects.filter(user=user)
    if kind is not None:
        memberships = memberships.filter(organization__kind=kind)
    return memberships.values("organization_id")


class VisibleToQuerySet(models.QuerySet):
    """Base queryset for tenant-owned models. Subclasses define `scope_for_member`."""

    def visible_to(self, user: Any) -> VisibleToQuerySet:
        if is_pm(user):
            return self.all()
        if not getattr(user, "is_authenticated", False) or not user.is_active:
            return self.none()
        return self.scope_for_member(user)

    def scope_for_member(self, user: Any) -> VisibleToQuerySet:
        """Rows a non-PM member may see. The default is none: deny unless a model says otherwise."""
        return self.none()
