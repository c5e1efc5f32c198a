"""The audit helper services call inside their transaction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction

from werkbank.models import AuditEvent

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from werkbank.types import Actor


def user_or_none(actor: Actor) -> User | None:
    """The acting user for a foreign key: None for the system (commands, tasks) or an anonymous caller."""
    if actor is None or not actor.is_authenticated:
        return None
    return actor


def audit_value(value: Any) -> Any:
    """A value as an audit row stores it: a model instance by its name, anything else as it is."""
    return str(value) if hasattr(value, "pk") else value


def audit(
    *,
    actor: Actor,
    verb: str,
    obj: models.Model,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    note: str = "",
) -> AuditEvent:
    """Write one audit row. It must run inside the service's transaction, so the row and the change
    commit or roll back together."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("audit() must be called inside the service's transaction.atomic() block")
    return AuditEvent.objects.create(
        actor=user_or_none(actor),
        verb=verb,
        content_type=ContentType.objects.get_for_model(obj),
        object_id=str(obj.pk),
        object_repr=str(obj)[:200],
        # A model instance among the values (a foreign key a PATCH changed) is stored by its name.
        before={key: audit_value(value) for key, value in (before or {}).items()},
        after={key: audit_value(value) for key, value in (after or {}).items()},
        note=note,
    )
