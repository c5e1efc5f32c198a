"""Map domain errors and constraint violations to API responses.

400: bad input, keyed by the field. 409: a broken business rule, saying what is missing.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from werkbank.errors import InvalidInput, RuleViolation, UnknownObject


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, InvalidInput):
        payload: dict[str, Any] = {exc.field: [exc.field_message]}
        if exc.rows:
            payload["rows"] = exc.rows
        return Response(payload, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, UnknownObject):
        return Response(
            {exc.field: [exc.field_message], "detail": exc.message}, status=status.HTTP_404_NOT_FOUND
        )
    if isinstance(exc, RuleViolation):
        return Response(
            {"detail": exc.message, "code": exc.code, "missing": exc.missing}, status=status.HTTP_409_CONFLICT
        )
    if isinstance(exc, DjangoValidationError):
        payload = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        return Response(payload, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, IntegrityError):
        # The database is the last line of defence; a service should have refused first.
        return Response(
            {"detail": f"Refused by a database constraint: {exc}", "code": "constraint"},
            status=status.HTTP_409_CONFLICT,
        )
    return drf_exception_handler(exc, context)
