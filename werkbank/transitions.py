"""The two halves of every status transition of every app: is `target` reachable from `current`, and, once
the app's own preconditions hold, the change itself with its audit row."""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from django.db import models

from werkbank.audit import audit
from werkbank.errors import RuleViolation
from werkbank.models import AuditEvent
from werkbank.types import Actor


def require_transition(
    *, transitions: Mapping[str, Set[str]], choices: Any, current: str, target: str, subject: str, verb: str
) -> None:
    """Raise a 409 that names the status the object is in and the statuses the verb needs.

    `transitions` is an app's map next to its status choices; `choices` is the TextChoices class.
    """
    if target in transitions[current]:
        return
    sources = [source for source, targets in transitions.items() if target in targets]
    raise RuleViolation(
        f"{subject} is {choices(current).label.lower()}; to {verb.replace('_', ' ')} it must be "
        f"{' or '.join(choices(source).label.lower() for source in sources)}.",
        missing=[f"status {' or '.join(sources)}"],
        code="invalid_transition",
    )


def record_transition(
    *,
    obj: models.Model,
    target: str,
    actor: Actor,
    verb: str,
    note: str = "",
    details: dict[str, Any] | None = None,
    update_fields: tuple[str, ...] = ("status",),
) -> tuple[str, AuditEvent]:
    """Set the locked `obj`'s status to `target`, save it, and write the audit row `verb` (e.g.
    "server.start_assembly") with the status before and after. Returns the status before and the event.
    The caller has locked the row and checked `require_transition` and its own preconditions."""
    before = obj.status  # type: ignore[attr-defined]
    obj.status = target  # type: ignore[attr-defined]
    obj.save(update_fields=list(update_fields))
    event = audit(
        actor=actor,
        verb=verb,
        obj=obj,
        before={"status": before},
        after={"status": target, **(details or {})},
        note=note,
    )
    return before, event
