"""The OpenAPI schema documents the error answers every operation can give (postprocessing hook).

drf-spectacular documents the success answer of an operation. Every operation can also answer 400 (bad
input, keyed by the field), 401 (no or a revoked token), 403 (seen but not allowed), 404 (not there, or
another tenant's), 429 (throttled), every write 409 (a broken business rule, with `missing`), and every
operation that takes a body 413 (larger than its endpoint's limit, werkbank/api/parsers.py); see
werkbank/api/exceptions.py. The fuzzer (tests/fuzz) holds every answer to the codes documented here.
"""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An error: `detail` says what happened; a 400 names each refused field with its messages; "
    "a 409 adds `code` and what is `missing`.",
    "properties": {
        "detail": {"type": "string"},
        "code": {"type": "string"},
        "missing": {"type": "array", "items": {}},
    },
    "additionalProperties": True,
}
DESCRIPTIONS = {
    "400": "The input was refused; each refused field is named with its messages.",
    "401": "No valid token (or session) was given.",
    "403": "The caller may see this but not do it.",
    "404": "There is no such object, or the caller may not see it.",
    "409": "A business rule refused the action; `missing` says what it needs.",
    "429": "Too many requests; try again later.",
}
TOO_LARGE = "The request body is larger than this endpoint's limit."
WRITES = {"post", "put", "patch", "delete"}


def document_errors(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            responses = operation.setdefault("responses", {})
            for code, description in DESCRIPTIONS.items():
                if code == "409" and method not in WRITES:
                    continue
                responses.setdefault(code, {"description": description, "content": content})
            if "requestBody" in operation:
                responses.setdefault("413", {"description": TOO_LARGE, "content": content})
    return result
