"""Core services: organizations and memberships, and the audit of users' access."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from werkbank.audit import audit
from werkbank.choices import MembershipRole, OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.models import AuditEvent, Membership, NumberSequence, Organization
from werkbank.types import Actor

if TYPE_CHECKING:
    from django.contrib.auth.models import User

ORGANIZATION_FIELDS = ("name", "kind", "contact_email", "language")


@transaction.atomic
def organization_create(
    *, actor: Actor, name: str, kind: str, contact_email: str = "", language: str = "en"
) -> Organization:
    """Register a customer or an assembly partner."""
    if kind not in OrganizationKind.values:
        raise InvalidInput("kind", "must be customer or partner.")
    if Organization.objects.filter(name=name).exists():
        raise InvalidInput("name", f"an organization named {name!r} already exists.")
    organization = Organization.objects.create(
        name=name, kind=kind, contact_email=contact_email, language=language
    )
    audit(actor=actor, verb="organization.create", obj=organization, after={"kind": kind})
    return organization


@transaction.atomic
def organization_update(*, organization: Organization, actor: Actor, **values: Any) -> Organization:
    """Change an organization's name or contact details. Its kind never changes: orders hang off it."""
    locked = Organization.objects.select_for_update().get(pk=organization.pk)
    if "kind" in values and values["kind"] != locked.kind:
        raise InvalidInput("kind", "cannot change once the organization exists.")
    values.pop("kind", None)
    unknown = set(values) - set(ORGANIZATION_FIELDS)
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "is not an organization field.")
    if "name" in values and Organization.objects.exclude(pk=locked.pk).filter(name=values["name"]).exists():
        raise InvalidInput("name", f"an organization named {values['name']!r} already exists.")
    before = {key: getattr(locked, key) for key in values}
    for key, value in values.items():
        setattr(locked, key, value)
    if values:
        locked.save(update_fields=list(values))
    audit(actor=actor, verb="organization.update", obj=locked, before=before, after=values)
    return locked


@transaction.atomic
def organization_recipients(organization: Organization) -> list[str]:
    """Who is told about an organisation's work by e-mail: its contact address and its active members'
    addresses (issue #24: a customer with only a contact address was told nothing). Empty: nobody is."""
    addresses = set(
        organization.memberships.filter(user__is_active=True)
        .exclude(user__email="")
        .values_list("user__email", flat=True)
    )
    if organization.contact_email:
        addresses.add(organization.contact_email)
    return sorted(addresses)


def membership_add(
    *, actor: Actor, organization: Organization, user: User, role: str = MembershipRole.MEMBER
) -> Membership:
    """Make a user a member of an organization (idempotent)."""
    membership, created = Membership.objects.get_or_create(
        user=user, organization=organization, defaults={"role": role}
    )
    if created:
        audit(
            actor=actor,
            verb="membership.add",
            obj=organization,
            after={"user": user.get_username(), "role": role},
        )
    return membership


@transaction.atomic
def membership_remove(*, actor: Actor, membership: Membership) -> None:
    """End a user's membership: from now on they see nothing of the organization."""
    organization = membership.organization
    username = membership.user.get_username()
    membership.delete()
    audit(actor=actor, verb="membership.remove", obj=organization, before={"user": username})


#: What decides a user's access: who may log in, who reaches the admin, who is a PM (a group).
ACCESS_FIELDS = ("is_active", "is_staff", "is_superuser")


def user_access(user: User) -> dict[str, Any]:
    """A user's access as an audit row records it: the flags and the sorted group names."""
    return {
        **{field: getattr(user, field) for field in ACCESS_FIELDS},
        "groups": sorted(user.groups.values_list("name", flat=True)),
    }


@transaction.atomic
def user_access_record(*, actor: Actor, user: User, before: dict[str, Any] | None) -> AuditEvent | None:
    """Audit a user's creation (`before` None) or a change of their access, as saved by the user admin.

    The admin writes the user and its groups itself (the password form, the group widget); it takes
    `user_access(user)` before it saves and calls this once the groups are saved too, in the same
    transaction. A save that changed no access field writes nothing: name and e-mail are not access.
    """
    after = user_access(user)
    if before is None:
        return audit(actor=actor, verb="user.create", obj=user, after=after)
    changed = {key: value for key, value in after.items() if before.get(key) != value}
    if not changed:
        return None
    return audit(
        actor=actor,
        verb="user.access",
        obj=user,
        before={key: before.get(key) for key in changed},
        after=changed,
    )


def next_reference(prefix: str, *, digits: int = 4) -> str:
    """The next `PREFIX-YYYY-NNNN` of this year (`digits` wide). Call it inside the creating service's
    transaction."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("next_reference() must run inside the creating service's transaction")
    year = timezone.now().year
    NumberSequence.objects.get_or_create(prefix=prefix, year=year)
    sequence = NumberSequence.objects.select_for_update().get(prefix=prefix, year=year)
    sequence.last_number += 1
    sequence.save(update_fields=["last_number"])
    return f"{prefix}-{year}-{sequence.last_number:0{digits}d}"


# --- API tokens ------------------------------------------------------------------------------------------


def live_api_tokens(*, user: User) -> Any:
    """The user's API tokens that have not expired (knox rows), newest first: what the cap of
    REST_KNOX["TOKEN_LIMIT_PER_USER"] counts."""
    from django.db.models import Q
    from knox.models import AuthToken

    return (
        AuthToken.objects.filter(user=user)
        .filter(Q(expiry__gt=timezone.now()) | Q(expiry__isnull=True))
        .order_by("-created", "token_key")
    )


def api_token_limit_check(*, user: User) -> None:
    """Refuse (409 `token_limit`) when the user already holds the most live tokens allowed."""
    from knox.settings import knox_settings

    limit = knox_settings.TOKEN_LIMIT_PER_USER
    if limit is not None and live_api_tokens(user=user).count() >= limit:
        raise RuleViolation(
            f"You already hold {limit} live API tokens, the most allowed. Revoke one with "
            "POST /api/v1/auth/logout/ (with that token) or all with /api/v1/auth/logoutall/.",
            code="token_limit",
        )


@transaction.atomic
def api_token_create(*, user: User, actor: Actor) -> tuple[Any, str]:
    """Issue an API token for `user` (knox: only its SHA-512 digest and its first characters are stored).

    Returns the row and the raw token, which exists nowhere else: the caller shows it once. The user's row is
    locked first, so two requests at once cannot both pass the cap.
    """
    from django.contrib.auth import get_user_model
    from knox.models import AuthToken

    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    api_token_limit_check(user=user)
    token, raw = AuthToken.objects.create(user=user)
    # The audit row names the user and the token's public prefix, never the digest or the token.
    audit(
        actor=actor,
        verb="api_token.create",
        obj=user,
        after={"token_key": token.token_key, "expiry": token.expiry.isoformat() if token.expiry else None},
    )
    return token, raw


@transaction.atomic
def api_token_revoke(*, user: User, token_key: str, actor: Actor) -> None:
    """Revoke the user's live token with this prefix (404 if the user holds none: another user's token is
    not theirs to name)."""
    from knox.models import AuthToken

    token = AuthToken.objects.select_for_update().filter(user=user, token_key=token_key).first()
    if token is None:
        raise UnknownObject("token_key", f"you hold no API token {token_key!r}.")
    before = {"token_key": token.token_key, "expiry": token.expiry.isoformat() if token.expiry else None}
    token.delete()
    audit(actor=actor, verb="api_token.revoke", obj=user, before=before)
