"""Request body parsers with limits: the API's defaults (REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]).

- A body larger than its endpoint's limit is a 413 before it is read: `DATA_UPLOAD_MAX_MEMORY_SIZE` (1 MB
  unless configured) for every endpoint, or more where an upload view says so with `max_body_bytes`
  (an int, or a function of no arguments that reads the settings) on the view or its action. A larger
  limit helps multipart uploads only: DRF reads JSON and form bodies through `request.body`, which Django
  holds to `DATA_UPLOAD_MAX_MEMORY_SIZE` (its RequestDataTooBig is a 413 in werkbank.api.exceptions).
- JSON nested deeper than werkbank.jsonfields.MAX_DEPTH is a 400 before the parser recurses (a few KB of
  `[[[[…` would otherwise end in a RecursionError); NaN and Infinity are a 400 as well.
- Multipart bodies keep Django's own limits: `DATA_UPLOAD_MAX_NUMBER_FIELDS`, `DATA_UPLOAD_MAX_NUMBER_FILES`
  and `DATA_UPLOAD_MAX_MEMORY_SIZE` for the fields other than files; each is a JSON 400 or 413 here.

The burn-in report upload reads its body itself (burnin.services.ingest, bounded by
WERKBANK_MAX_REPORT_BYTES) and does not go through these parsers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import QueryDict
from rest_framework import parsers, status
from rest_framework.exceptions import APIException, ParseError

from werkbank import jsonfields


class RequestTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "too_large"


def body_limit(parser_context: Mapping[str, Any] | None) -> int:
    """The most bytes this request's endpoint accepts: the view's `max_body_bytes`, else the global one."""
    view = (parser_context or {}).get("view")
    limit = getattr(view, "max_body_bytes", None)
    if callable(limit):
        limit = limit()
    return int(limit) if limit is not None else settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def _declared_length(parser_context: Mapping[str, Any] | None) -> int:
    request = (parser_context or {}).get("request")
    meta = getattr(request, "META", {})
    try:
        return int(meta.get("CONTENT_LENGTH") or 0)
    except (TypeError, ValueError):
        return 0


def _too_large(limit: int) -> RequestTooLarge:
    return RequestTooLarge(f"The request body is larger than this endpoint's limit of {limit:,} bytes.")


def check_declared_length(parser_context: Mapping[str, Any] | None) -> int:
    """Refuse a body whose Content-Length is over the limit (413) before reading it; return the limit."""
    limit = body_limit(parser_context)
    if _declared_length(parser_context) > limit:
        raise _too_large(limit)
    return limit


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, bounded in size and nesting; refuses NaN and Infinity."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = check_declared_length(parser_context)
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise _too_large(limit)
        encoding = parsers.get_encoding(parser_context or {})
        try:
            text = raw.decode(encoding)
        except (LookupError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - the body is not {encoding} text ({exc}).") from None
        try:
            return jsonfields.loads(text)
        except jsonfields.JSONRefused as exc:
            raise ParseError(f"JSON parse error - the body {exc.message}") from None


class FormParser(parsers.FormParser):
    """DRF's form parser (which reads the whole body), bounded in size."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = check_declared_length(parser_context)
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise _too_large(limit)
        return QueryDict(raw, encoding=parsers.get_encoding(parser_context or {}))


class MultiPartParser(parsers.MultiPartParser):
    """DRF's multipart parser, bounded in size; Django's field and file counts answer as JSON."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        check_declared_length(parser_context)
        try:
            return super().parse(stream, media_type, parser_context)
        except RequestDataTooBig:
            raise RequestTooLarge(
                "The form fields other than files are larger than "
                f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes (DATA_UPLOAD_MAX_MEMORY_SIZE)."
            ) from None
        except TooManyFilesSent:
            raise ParseError(
                f"More than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files in one request "
                "(DATA_UPLOAD_MAX_NUMBER_FILES)."
            ) from None
        except TooManyFieldsSent:
            raise ParseError(
                f"More than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields in one request "
                "(DATA_UPLOAD_MAX_NUMBER_FIELDS)."
            ) from None
