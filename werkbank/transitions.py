"""The one check behind every status transition of every app: is `target` reachable from `current`?"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from werkbank.errors import RuleViolation


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
