"""The OpenAPI schema: each operation's area and summary (AutoSchema), and the error answers every
operation can give (postprocessing hook).

Areas are the tags of /api/docs/: an operation belongs to the area whose entry in
settings.WERKBANK_API_AREAS names the first segment of its path under /api/v1/, so a new route under a known
segment needs nothing, and one under a new segment names its area there (tests/werkbank/test_schema_actions.py
fails on an operation outside the areas). Every operation has a summary: the one its view declares with
@extend_schema, else the first sentence of its action's docstring, else one made of the action and the model
("List purchase orders.").

drf-spectacular documents the success answer of an operation. Every operation can also answer 400 (bad
input, keyed by the field), 401 (no or a revoked token), 403 (seen but not allowed), 404 (not there, or
another tenant's), 429 (throttled), every write 409 (a broken business rule, with `missing`), and every
operation that takes a body 413 (larger than its endpoint's limit, werkbank/api/parsers.py); see
werkbank/api/exceptions.py. The fuzzer (tests/fuzz) holds every answer to the codes documented here.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from django.conf import settings
from drf_spectacular import openapi
from drf_spectacular.plumbing import get_view_model

# A 400 keys each refused field (or query parameter) by its name, which may be `code` or `detail` (the
# findings' `code` filter, found by the stateful fuzzer): that property then holds the field's messages.
_TEXT_OR_MESSAGES: dict[str, Any] = {
    "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]
}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "An error: `detail` says what happened; a 400 names each refused field with its messages; "
    "a 409 adds `code` and what is `missing`.",
    "properties": {
        "detail": _TEXT_OR_MESSAGES,
        "code": _TEXT_OR_MESSAGES,
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


#: Summaries of the actions every viewset may have, by the model's verbose names.
STANDARD_SUMMARIES = {
    "list": "List {plural}.",
    "retrieve": "Show one {name}.",
    "create": "Create {a} {name}.",
    "update": "Replace {a} {name}: every writable field.",
    "partial_update": "Change some fields of {a} {name}.",
    "destroy": "Delete {a} {name}.",
}
_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z`(])")
_VERSION = re.compile(r"^/api/(?:v\d+/)?")


def first_sentence(doc: str | None) -> str:
    """The first sentence of a docstring's first paragraph, on one line ("" for no docstring)."""
    paragraph = inspect.cleandoc(doc or "").split("\n\n")[0]
    sentence = _SENTENCE_END.split(" ".join(paragraph.split()))[0]
    return sentence if not sentence or sentence[-1] in ".!?" else f"{sentence.rstrip(':;')}."


def area_of(path: str) -> str:
    """The area (tag) of an API path: the one naming its first segment under /api/v1/, else the segment."""
    segment = _VERSION.sub("", path).split("/")[0]
    for area, entry in settings.WERKBANK_API_AREAS.items():
        if segment in entry["segments"]:
            return area
    return segment


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's AutoSchema with each operation tagged by its area and given a summary."""

    def get_tags(self) -> list[str]:
        return [area_of(self.path)]

    def get_summary(self) -> str | None:
        # Only called where the view declares none (@extend_schema's summary wins).
        name = getattr(self.view, "action", None) or self.method.lower()
        documented = first_sentence(getattr(getattr(self.view, name, None), "__doc__", None))
        model = get_view_model(self.view, emit_warnings=False)
        if documented or name not in STANDARD_SUMMARIES or model is None:
            return documented or first_sentence(type(self.view).__doc__) or None
        verbose, plural = str(model._meta.verbose_name), str(model._meta.verbose_name_plural)
        article = "an" if verbose[:1].lower() in "aeiou" else "a"
        return STANDARD_SUMMARIES[name].format(name=verbose, plural=plural, a=article)
