"""Text the database cannot store is a 400 naming the field, on every page and endpoint (issue 26).

PostgreSQL refuses a NUL character (U+0000) in text and in jsonb, and no UTF-8 encoder takes an unpaired
surrogate (U+D800–U+DFFF, which only a JSON escape such as `"\\ud800"` can produce: Django decodes query
strings and form bodies with replacement characters). Where a view handed such a value to a query, the
request ended in a 500 (`/pm/search/?q=a%00b`). Django's form fields and DRF's serializer fields refuse
both already, but not a view that reads `request.GET` itself, a JSON object field's contents, or a filter
that is no form field. So this middleware refuses them before any view runs, in one place:

- every query-string parameter (name and value) and the path;
- a form body (`application/x-www-form-urlencoded`), and a multipart body on the pages (their CSRF check
  parses it anyway; API multipart bodies are left to the API's parsers and fields, which refuse both with
  the same sentences);
- a JSON body: every string and key, at any depth, named by its path (`measurements.note`,
  `lines.0.serial`). The raw body is scanned first and parsed only when it holds a NUL or a `\\u0000` or
  surrogate escape, so ordinary requests pay one byte search.

Bodies over `DATA_UPLOAD_MAX_MEMORY_SIZE`, compressed bodies and bodies that are not valid JSON are left
to the view, which answers 413 or 400 as before. The answer is the API's 400 under /api/ (`{field:
[sentence]}`, in English like every API error), and the page `input_refused.html` elsewhere. The sentences
are Django's and DRF's own, so a field answers the same whichever check saw it first.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext, override

from werkbank.jsonfields import JSONRefused, loads

logger = logging.getLogger(__name__)

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# In raw JSON: a NUL byte, or an escape of NUL or of a surrogate (paired ones are let through by the parse).
_MAYBE_UNSTORABLE_JSON = re.compile(rb"\x00|\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")
_FORM = "application/x-www-form-urlencoded"
_MULTIPART = "multipart/form-data"


def unstorable_rule(text: str) -> str | None:
    """The rule `text` breaks, as a sentence in the active language, or None if it can be stored."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        # Django's own sentence (ProhibitNullCharactersValidator), which DRF's CharField uses too.
        return gettext("Null characters are not allowed.")
    # DRF's sentence (ProhibitSurrogateCharactersValidator).
    return gettext("Surrogate characters are not allowed: U+{code_point:X}.").format(
        code_point=ord(found.group())
    )


def printable(name: str) -> str:
    """A field name fit to show: its unstorable characters written as escapes (`a\\x00` → `a\\u0000`)."""
    return _UNSTORABLE.sub(lambda match: f"\\u{ord(match.group()):04x}", name)


def _pairs(data: Any) -> Iterator[tuple[str, str]]:
    for name, values in data.lists():
        yield name, name
        for value in values:
            yield name, value


def _json_strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(path, text) for every key and string in a parsed JSON document; no recursion (depth is bounded
    by the parse, but an explicit stack keeps this cheap and flat)."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            for key, child in item.items():
                child_path = f"{where}.{key}" if where else key
                yield child_path, key
                stack.append((child, child_path))
        elif isinstance(item, list):
            stack.extend(
                (child, f"{where}.{index}" if where else str(index)) for index, child in enumerate(item)
            )


def first_refusal(pairs: Iterable[tuple[str, str]]) -> tuple[str, str] | None:
    """(field, rule) of the first text that cannot be stored, or None."""
    for field, text in pairs:
        rule = unstorable_rule(text)
        if rule is not None:
            return printable(field) or "body", rule
    return None


def _body_fits(request: HttpRequest) -> bool:
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return length > 0 and (limit is None or length <= limit) and not request.META.get("HTTP_CONTENT_ENCODING")


def _body_pairs(request: HttpRequest, *, api: bool) -> Iterable[tuple[str, str]]:
    content_type = (request.content_type or "").lower()
    if request.method in ("GET", "HEAD", "OPTIONS") or not _body_fits(request):
        return ()
    if content_type == _FORM or (content_type == _MULTIPART and not api):
        try:
            return list(_pairs(request.POST))
        except Exception:
            return ()
    if content_type == "application/json" or content_type.endswith("+json"):
        raw = request.body
        if not _MAYBE_UNSTORABLE_JSON.search(raw):
            return ()
        try:
            document = loads(raw.decode(request.encoding or "utf-8"))
        except (JSONRefused, UnicodeDecodeError, LookupError):
            return ()  # the parser answers its own 400
        return _json_strings(document, "")
    return ()


class StorableTextMiddleware:
    """Answers 400, naming the field, for text the database cannot store (see the module's docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        api = request.path_info.startswith("/api/")
        with override("en") if api else nullcontext():
            refusal = first_refusal(
                [("path", request.path_info), *_pairs(request.GET), *_body_pairs(request, api=api)]
            )
        if refusal is None:
            return self.get_response(request)
        field, rule = refusal
        logger.warning(
            "Refused text the database cannot store in %r of %s %s", field, request.method, request.path
        )
        if api:
            return JsonResponse({field: [rule]}, status=400)
        return render(request, "input_refused.html", {"field": field, "rule": rule}, status=400)
