"""Map domain errors and constraint violations to API responses.

400: bad input, keyed by the field. 409: a broken business rule, saying what is missing.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DataError, IntegrityError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.integrity import integrity_sentence

logger = logging.getLogger(__name__)


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
        # The database is the last line of defence; a service should have refused first. Its own text
        # (SQL, DETAIL, the driver) is logged, never answered (werkbank.integrity).
        sentence = integrity_sentence(exc)
        return Response(
            {"detail": sentence, "code": "constraint", "missing": [sentence]}, status=status.HTTP_409_CONFLICT
        )
    if isinstance(exc, RequestDataTooBig):
        # DRF reads a JSON or form body through request.body, which Django bounds (werkbank.api.parsers).
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response(
            {"detail": f"The request body is larger than the limit of {limit:,} bytes.", "code": "too_large"},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, DataError):
        logger.warning("The database refused a value: %s", exc)
        return Response(
            {
                "detail": "A value is outside what the database stores (too large, too long, not a number).",
                "code": "data",
            },
            status=status.HTTP_400_BAD_REQUEST,
        )
    return drf_exception_handler(exc, context)
