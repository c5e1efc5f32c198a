"""Who sees what, and for what: the one chokepoint every queryset, view and download goes through.

`Model.objects.visible_to(user, purpose=...)` answers "may this user see / work on / receive this", like
NetBox's `restrict(user, action)`. PMs (staff users in the `project-managers` group) may do everything.
Members of an organization get what their organization owns, for the purposes the model's queryset
supports (`purposes`, `scope_for_member`). Anyone else gets nothing. There is no second scope beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Self

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


def pm_users() -> models.QuerySet:
    """The users `is_pm` says yes to, as a queryset (whom a notice for the PMs goes to)."""
    from django.contrib.auth import get_user_model

    pm = models.Q(is_superuser=True) | models.Q(is_staff=True, groups__name=settings.WERKBANK_PM_GROUP)
    return get_user_model().objects.filter(pm, is_active=True).distinct()


class Purpose(models.TextChoices):
    """What a user wants to do with the rows: the `purpose` of `visible_to`."""

    VIEW = "view", "see it"
    BENCH = "bench", "work on it at the bench (the assigned partner's members and PMs, never customers)"
    RECEIVE = "receive", "book deliveries on it (PMs, and partners' members for their own workshop)"


class VisibleToQuerySet(models.QuerySet):
    """Base queryset for tenant-owned models. Subclasses define `scope_for_member` and list their `purposes`.

    A purpose a model does not list raises ValueError (a typo must neither widen nor narrow access
    silently), for PMs too.
    """

    #: The purposes this model answers; `scope_for_member` is only ever asked for one of them.
    purposes: ClassVar[frozenset[str]] = frozenset({Purpose.VIEW})

    def visible_to(self, user: Any, purpose: str = Purpose.VIEW) -> Self:
        if purpose not in self.purposes:
            offered = ", ".join(sorted(str(p) for p in self.purposes))
            raise ValueError(
                f"{self.model.__name__}.objects.visible_to() knows no purpose {str(purpose)!r}; "
                f"it offers: {offered}."
            )
        if is_pm(user):
            return self.all()
        if not getattr(user, "is_authenticated", False) or not user.is_active:
            return self.none()
        return self.scope_for_member(user, Purpose(purpose))

    def scope_for_member(self, user: Any, purpose: Purpose) -> Self:
        """Rows a non-PM member may use for `purpose`. By default none: deny unless a model says otherwise."""
        return self.none()
