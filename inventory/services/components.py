"""Components: the status, location and holder of serials change here only, with a ledger row each."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from django.db import transaction
from django.db.models import QuerySet

from inventory.choices import COMPONENT_TRANSITIONS, ComponentStatus
from inventory.models import Component, StockMovement
from werkbank.audit import user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import Organization
from werkbank.types import Actor


def serials_seen_by(actor: Actor) -> QuerySet:
    """The components whose whereabouts a refusal may name to `actor`: those it may see. Without an actor
    (a command run by an operator on the server), all of them."""
    if actor is None:
        return Component.objects.all()
    return Component.objects.visible_to(actor)


@transaction.atomic
def component_move(
    *,
    components: Iterable[Component],
    actor: Actor,
    to_status: str,
    reason: str,
    location: str | None = None,
    holder: Organization | Literal[False] | None = False,
) -> list[Component]:
    """Change the status (and optionally the location and holder) of components, with one ledger row each.

    The apps above call this; nobody sets a component's status directly. `holder=False` keeps the holder.
    """
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "a reason is required for every stock movement.")
    ids = [component.pk for component in components]
    locked = list(Component.objects.select_for_update().filter(pk__in=ids).order_by("pk"))
    if len(locked) != len(set(ids)):
        raise RuleViolation("Some components no longer exist.", code="component_missing")
    refused = [c for c in locked if to_status not in COMPONENT_TRANSITIONS[c.status]]
    if refused:
        raise RuleViolation(
            f"{len(refused)} component(s) cannot become {ComponentStatus(to_status).label.lower()}: "
            + ", ".join(f"{c.serial} is {c.get_status_display().lower()}" for c in refused[:10]),
            missing=[f"{c.serial}: a status from which {to_status} is allowed" for c in refused],
            code="invalid_transition",
        )
    movements = []
    for component in locked:
        movements.append(
            StockMovement(
                component=component,
                actor=user_or_none(actor),
                from_status=component.status,
                to_status=to_status,
                from_location=component.location,
                to_location=location or component.location,
                reason=reason,
            )
        )
        component.status = to_status
        if location is not None:
            component.location = location
        if holder is not False:
            component.holder = holder
    Component.objects.bulk_update(locked, ["status", "location", "holder"])
    StockMovement.objects.bulk_create(movements)
    return locked
