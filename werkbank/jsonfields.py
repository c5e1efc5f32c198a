"""One validator for JSON that users type or send: bounded in size and nesting, finite numbers, an object.

Python's `json` parser recurses once per `[` or `{`: a few kilobytes of `[[[[…` exhaust the stack and end
in a RecursionError (a 500). So the nesting is measured first, by a scan that never recurses, and JSON
nested deeper than `MAX_DEPTH` is refused before the parser sees it. `NaN` and `Infinity`, which Python
accepts but JSON does not (and PostgreSQL's jsonb refuses), are refused too.

Users of it: the API's JSON body parser (werkbank.api.parsers), the API's JSON object fields
(werkbank.api.fields.JSONObjectField, e.g. a build step's data and a blacklist's measurements) and the
burn-in report upload (burnin.services.ingest). The bench forms take named fields, not JSON.
"""

from __future__ import annotations

import json
import math
from typing import Any

from werkbank.errors import InvalidInput

#: Deeper nesting is refused. Werkbank's own documents (a burn-in report, a step's measurements) nest
#: fewer than 10 levels.
MAX_DEPTH = 64
#: A JSON field of a form or an API body (measurements, a step's data) holds at most this many bytes.
MAX_FIELD_BYTES = 64 * 1024

# For depth only, `{` is `[` and `}` is `]`; everything but brackets and quotes is dropped.
_AS_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_OUTLINE = bytes(byte for byte in range(256) if byte not in b'[]{}"')
_OPEN = ord("[")


class JSONRefused(ValueError):
    """The text is not JSON Werkbank accepts; `message` says why, as a sentence for the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def nesting_depth_exceeds(data: bytes | str, max_depth: int = MAX_DEPTH) -> bool:
    """Whether `data` opens more than `max_depth` arrays or objects inside each other.

    Brackets inside strings do not count (escapes honoured). Nothing recurses, and the work is done by
    bytes methods: escapes are dropped, then all but brackets and quotes, then strings, then innermost
    pairs are removed a few times; what is left is counted in one loop that stops as soon as the bound is
    passed.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    # `\\` first, so that in `\\"` the quote still ends the string; then escaped quotes.
    unescaped = raw.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in raw else raw
    outline = unescaped.translate(_AS_BRACKETS, _NOT_OUTLINE)
    # Two quotes side by side are a string without brackets, or the end of one string and the start of
    # the next: dropping them leaves every bracket inside or outside a string as it was, and leaves few
    # quotes to split at (a 66 MB report has millions of strings: splitting at each took seconds).
    while b'""' in outline:
        outline = outline.replace(b'""', b"")
    # What is left splits at each quote into outside, inside, outside, … (backslashes outside strings
    # are no JSON).
    brackets = b"".join(outline.split(b'"')[0::2])
    # A document of rows (telemetry, measurements) comes down to its outline in a few passes. Each pass
    # removes the deepest level, so what is left may nest one level less per pass.
    removed = 0
    while removed < 3 and brackets:
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            break
        brackets, removed = shorter, removed + 1
    if removed > max_depth:
        return True
    depth = 0
    for byte in brackets:
        if byte == _OPEN:
            depth += 1
            if depth + removed > max_depth:
                return True
        else:
            depth = max(depth - 1, 0)
    return False


def _refuse_constant(name: str) -> Any:
    raise JSONRefused(f"{name} is not a JSON number: give a finite number or null.")


def _finite(value: str) -> float:
    number = float(value)
    if not math.isfinite(number):
        raise JSONRefused(f"{value} is too large to be a number: give a finite number or null.")
    return number


def loads(data: bytes | str, *, max_depth: int = MAX_DEPTH, max_bytes: int | None = None) -> Any:
    """Parse JSON refusing more than `max_bytes`, deeper nesting than `max_depth`, NaN and Infinity.

    Raises JSONRefused with a sentence that names the rule.
    """
    size = len(data.encode("utf-8", "surrogatepass")) if isinstance(data, str) else len(data)
    if max_bytes is not None and size > max_bytes:
        raise JSONRefused(f"is {size:,} bytes of JSON; at most {max_bytes:,} bytes are accepted.")
    if nesting_depth_exceeds(data, max_depth):
        raise JSONRefused(f"is nested more than {max_depth} levels deep; at most {max_depth} are accepted.")
    try:
        return json.loads(data, parse_constant=_refuse_constant, parse_float=_finite)
    except JSONRefused:
        raise
    except json.JSONDecodeError as exc:
        raise JSONRefused(
            f"is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})."
        ) from None
    except ValueError as exc:  # UnicodeDecodeError
        raise JSONRefused(f"is not valid JSON ({exc}).") from None
    except RecursionError:  # pragma: no cover - the scan above refuses first
        raise JSONRefused(f"is nested more than {max_depth} levels deep.") from None


def parse_json_object(
    text: bytes | str, *, field: str, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_FIELD_BYTES
) -> dict[str, Any]:
    """`text` as a JSON object, or InvalidInput(field, why): too big, too deep, NaN/Infinity, no object."""
    try:
        value = loads(text, max_depth=max_depth, max_bytes=max_bytes)
    except JSONRefused as exc:
        raise InvalidInput(field, exc.message) from None
    if not isinstance(value, dict):
        raise InvalidInput(field, 'must be a JSON object, e.g. {"torque_nm": 0.6}.')
    return value


def check_json_object(
    value: Any, *, field: str, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_FIELD_BYTES
) -> dict[str, Any]:
    """An already parsed value (from a JSON request body), held to the rules of `parse_json_object`."""
    if not isinstance(value, dict):
        raise InvalidInput(field, 'must be a JSON object, e.g. {"torque_nm": 0.6}.')
    try:
        # allow_nan keeps NaN as the token `NaN`, which the parse then refuses by name.
        text = json.dumps(value, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        raise InvalidInput(field, "must be a JSON object of JSON values.") from None
    return parse_json_object(text, field=field, max_depth=max_depth, max_bytes=max_bytes)
