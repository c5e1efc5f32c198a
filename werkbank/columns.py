"""Model fields by name, as services and selectors need them outside the ORM.

The few that write SQL of their own (bulk receiving, telemetry rollups and CSV export) name columns
through `db_column`, never by hand, so a `db_column` or a renamed field cannot leave a statement pointing
at a column that is not there; checks before a save read a field's limit through `max_length`.
"""

from __future__ import annotations

from django.db import models


def db_column(model: type[models.Model], name: str) -> str:
    """The database column of `model`'s field `name`, unquoted (a foreign key's is its `_id` column).

    A reverse relation, a generic foreign key or a many-to-many has no column of its own: asking for one
    is a programming error, and raises LookupError rather than writing SQL that names no column.
    """
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field) or field.column is None:
        raise LookupError(f"{model._meta.label}.{name} has no column of its own")
    return field.column


def max_length(model: type[models.Model], name: str) -> int:
    """The `max_length` of `model`'s field `name`, for a service that checks a value before it saves it
    (a field without one raises LookupError: a limit nobody set must not read as "no limit")."""
    field = model._meta.get_field(name)
    if not isinstance(field, models.Field) or field.max_length is None:
        raise LookupError(f"{model._meta.label}.{name} has no max_length")
    return field.max_length
