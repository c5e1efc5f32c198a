"""A database constraint's refusal as a sentence for the user, never the database's own text.

Services check the rules first; the constraints in the models' `Meta.constraints` are the backstop (a race,
a rule a service missed). When one refuses, the user is told its `violation_error_message` ("This site
already has a rack of this name."), found by the constraint's name; anything else gets a general sentence.
The database's text (SQL, DETAIL lines, the driver's name) goes to the log only.
"""

from __future__ import annotations

import logging
import re
from functools import cache

from django.apps import apps
from django.db import IntegrityError
from django.db.models import BaseConstraint, UniqueConstraint

logger = logging.getLogger("werkbank.integrity")

GENERAL_SENTENCE = "This conflicts with data already stored: a database rule refused the change."

# SQLite's wording: "CHECK constraint failed: <name>", "UNIQUE constraint failed: table.col, table.col".
_SQLITE_CHECK = re.compile(r"CHECK constraint failed: (\w+)")
_SQLITE_UNIQUE = re.compile(r"UNIQUE constraint failed: ([\w.]+(?:, [\w.]+)*)")


@cache
def _constraints_by_name() -> dict[str, BaseConstraint]:
    return {
        constraint.name: constraint for model in apps.get_models() for constraint in model._meta.constraints
    }


@cache
def _unique_by_columns() -> dict[tuple[str, frozenset[str]], BaseConstraint]:
    found: dict[tuple[str, frozenset[str]], BaseConstraint] = {}
    for model in apps.get_models():
        for constraint in model._meta.constraints:
            if isinstance(constraint, UniqueConstraint) and constraint.fields:
                columns = frozenset(model._meta.get_field(name).column for name in constraint.fields)
                found.setdefault((model._meta.db_table, columns), constraint)
    return found


def constraint_of(error: IntegrityError) -> BaseConstraint | None:
    """The model constraint that refused, when the database names one Werkbank declared."""
    diag = getattr(error.__cause__, "diag", None)  # psycopg
    name = getattr(diag, "constraint_name", None)
    if name:
        return _constraints_by_name().get(name)
    text = str(error)
    if match := _SQLITE_CHECK.search(text):
        return _constraints_by_name().get(match.group(1))
    if match := _SQLITE_UNIQUE.search(text):
        qualified = [item.split(".", 1) for item in match.group(1).split(", ")]
        tables = {table for table, _ in qualified}
        if len(tables) == 1:
            return _unique_by_columns().get((tables.pop(), frozenset(column for _, column in qualified)))
    return None


def integrity_sentence(error: IntegrityError) -> str:
    """What to tell the user about `error`; the database's own text is logged, never returned."""
    logger.warning("A database constraint refused a change: %s", error)
    constraint = constraint_of(error)
    if constraint is not None and constraint.violation_error_message != (
        constraint.default_violation_error_message
    ):
        return constraint.get_violation_error_message()
    return GENERAL_SENTENCE
