"""The uploaded report: its body read within its limit, its id, and its validation, before any row.

These are the ingest's first three steps (`burnin.services.ingest` stores what they accept); none of them
reads or writes the database.

1. ``read_report_body`` reads the body in chunks and inflates a gzip body (``Content-Encoding: gzip``, or
   a body that starts with gzip's magic bytes) only up to ``WERKBANK_MAX_REPORT_BYTES``: a larger report,
   or a zip bomb, is refused once the limit is passed, never inflated whole.
2. ``report_id_of``: the report id is the SHA-256 of the uncompressed report, which is what the probe
   sends as its ``Idempotency-Key`` (the SHA-256 of the report file as written). A key that differs from
   it is a 400: the body is not the file the probe hashed.
3. ``parse_report`` validates against the probe's own schema (``probe/schema/report-v1.schema.json``)
   with the probe's validator, so the 400 names the JSON path of the first error exactly as
   ``python -m probe validate`` does. The telemetry rows (200k in a 72 h run) are checked by a fast path
   that is equivalent to their schema (it is asserted to be, at import), and explained by the validator.
   Before that, the cheap structural checks: what a server can have (the schema's ``maxItems``: GPUs,
   stages, samples per GPU, memory controllers and DIMMs) and what cannot appear twice (a GPU index or
   serial, a stage). The ``gpus`` array is counted while it is parsed, so that a report of one GPU repeated
   10,000 times (66 MB, 0.5 MB gzipped) is refused at its 17th GPU instead of after seconds of parsing and
   validation.

A refused upload is answered only after the rest of its body was read (``discard_unread_body``, up to
``WERKBANK_MAX_REPORT_BYTES``): a server that closes a connection with unread bytes resets it, and a
client still sending its body (the probe's urllib) then never reads the 400.
"""

from __future__ import annotations

import hashlib
import json
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from django.conf import settings

from burnin.hardware import has_serial
from probe.schema import load_schema
from probe.validate import ValidationError, Validator
from werkbank.errors import InvalidInput
from werkbank.jsonfields import MAX_DEPTH, nesting_depth_exceeds

GZIP_MAGIC = b"\x1f\x8b"
READ_CHUNK_BYTES = 1 << 20


class ReportTooLarge(InvalidInput):
    """The report is larger than WERKBANK_MAX_REPORT_BYTES uncompressed: the API answers 413."""


@dataclass(frozen=True)
class ReportBody:
    """An uploaded report: its bytes as the probe wrote them, and the gzip stream it came in, if any."""

    raw: bytes
    gz: bytes | None = None


# --- Reading the body ----------------------------------------------------------------------------------


def _chunks(stream: BinaryIO | None, first: bytes) -> Iterator[bytes]:
    if first:
        yield first
    while stream is not None and (chunk := stream.read(READ_CHUNK_BYTES)):
        yield chunk


def _too_large(limit: int, what: str) -> ReportTooLarge:
    return ReportTooLarge(
        "report",
        f"{what} is larger than the limit of {limit:,} bytes uncompressed (WERKBANK_MAX_REPORT_BYTES).",
    )


def read_report_body(
    stream: BinaryIO | None, *, content_encoding: str = "", limit: int | None = None
) -> ReportBody:
    """Read an uploaded report from `stream`, inflating gzip, and refuse it past `limit` bytes.

    The body is gzip when `Content-Encoding: gzip` says so or when it starts with gzip's magic bytes (a
    client may send a `.json.gz` file as it is). Reading stops as soon as the limit is passed, in the
    compressed and in the inflated bytes alike.
    """
    limit = settings.WERKBANK_MAX_REPORT_BYTES if limit is None else limit
    encoding = content_encoding.strip().lower()
    if encoding not in {"", "identity", "gzip", "x-gzip"}:
        raise InvalidInput(
            "Content-Encoding",
            f"{content_encoding!r} is not accepted: send the report as plain JSON or gzip.",
        )
    first = stream.read(READ_CHUNK_BYTES) if stream is not None else b""
    if not first:
        raise InvalidInput("report", "The body is empty: send the report JSON (plain or gzip).")
    if encoding in {"gzip", "x-gzip"} or first.startswith(GZIP_MAGIC):
        if not first.startswith(GZIP_MAGIC):
            raise InvalidInput("Content-Encoding", "says gzip, but the body is not gzip data.")
        return _inflate(_chunks(stream, first), limit)
    parts, size = [], 0
    for chunk in _chunks(stream, first):
        size += len(chunk)
        if size > limit:
            raise _too_large(limit, "The report")
        parts.append(chunk)
    return ReportBody(raw=b"".join(parts))


def _inflate(chunks: Iterable[bytes], limit: int) -> ReportBody:
    inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)  # gzip framing only
    compressed: list[bytes] = []
    out: list[bytes] = []
    size = compressed_size = 0
    for chunk in chunks:
        if inflater.eof:
            raise InvalidInput("report", "There are bytes after the end of the gzip stream.")
        # Deflate can pad with empty blocks: the compressed bytes are held to the limit too.
        compressed_size += len(chunk)
        if compressed_size > limit:
            raise _too_large(limit, "The gzip body")
        compressed.append(chunk)
        data = chunk
        while data and not inflater.eof:
            try:
                # At most one byte past the limit: enough to refuse, whatever the stream would inflate to.
                piece = inflater.decompress(data, limit + 1 - size)
            except zlib.error as exc:
                raise InvalidInput("report", f"The gzip body is corrupt: {exc}.") from None
            size += len(piece)
            if size > limit:
                raise _too_large(limit, "The inflated report")
            out.append(piece)
            data = inflater.unconsumed_tail
        if inflater.unused_data:
            raise InvalidInput("report", "There are bytes after the end of the gzip stream.")
    if not inflater.eof:
        raise InvalidInput("report", "The gzip body ends early: the upload is truncated.")
    return ReportBody(raw=b"".join(out), gz=b"".join(compressed))


def discard_unread_body(stream: BinaryIO | None, *, content_length: int, limit: int | None = None) -> None:
    """Read what is left of a refused upload's body and drop it, so that the client reads the answer.

    A server that closes a connection with unread request bytes resets it; a client still sending its body
    then gets the reset instead of the 400 (urllib, the probe's client, raises; requests reads the answer).
    A body declared longer than `limit` is left unread: reading it to its end is the cost the limit spares.
    """
    limit = settings.WERKBANK_MAX_REPORT_BYTES if limit is None else limit
    if stream is None or content_length > limit:
        return
    try:
        while stream.read(READ_CHUNK_BYTES):
            pass
    except OSError:  # the client went away (Django's UnreadablePostError): nothing left to answer
        return


# --- Validation ----------------------------------------------------------------------------------------

_SCHEMA = load_schema()
_VALIDATOR = Validator(_SCHEMA)
#: A telemetry row: numbers or nulls. The fast check below stands in for exactly this schema.
_ROW_SCHEMA = {"type": "array", "items": {"type": ["number", "null"]}}
_SERIES_KEY = "^[0-9]+$"


def _without_comments(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _without_comments(value) for key, value in node.items() if key != "$comment"}
    return node


# --- What a server can have: the schema's bounds, checked before the full validation -------------------
# The reasons are the schema's `$comment`s: at most 16 GPUs (8 on an HGX board, 10 PCIe cards in the
# largest 4U servers, 16 in a DGX-2); each of the 5 stages once; at most 604,800 samples per GPU (7 days
# at 1 s; the probe samples every 10 s by default, an order's burn-in is 72 h by default); at most 64 EDAC
# memory controllers and 64 DIMMs per controller (a two-socket server has at most 48 DIMM slots). They
# narrow input no server produces, so they came without a version bump (1.1.0 added `purpose`). Read from
# the schema here, the cheap checks and the validator cannot disagree.
_PROPERTIES = _SCHEMA["properties"]
MAX_GPUS: int = _PROPERTIES["gpus"]["maxItems"]
MAX_STAGES: int = _PROPERTIES["stages"]["maxItems"]
_EDAC = _PROPERTIES["host_memory"]["properties"]["edac"]["properties"]
MAX_MEMORY_CONTROLLERS: int = _EDAC["mc"]["maxItems"]
MAX_DIMMS: int = _SCHEMA["$defs"]["edac_mc"]["properties"]["dimms"]["maxItems"]
_SERIES = _SCHEMA["$defs"]["telemetry"]["properties"]["gpu_series"]
MAX_SAMPLES: int = _SERIES["patternProperties"][_SERIES_KEY]["maxItems"]
_SERIES_SCHEMA = {
    "type": "object",
    "maxProperties": MAX_GPUS,
    "patternProperties": {_SERIES_KEY: {"type": "array", "maxItems": MAX_SAMPLES, "items": _ROW_SCHEMA}},
    "additionalProperties": False,
}
if _without_comments(_SERIES) != _SERIES_SCHEMA:  # pragma: no cover
    raise ImportError(
        "The schema's telemetry.gpu_series changed: update the fast row check in burnin.services.upload."
    )
#: Python types a row value of `_ROW_SCHEMA` may have (not bool: JSON's true is no number).
_ROW_VALUE_TYPES = frozenset({int, float, type(None)})


def _series_errors(series: Mapping[str, Any]) -> list[ValidationError]:
    """The schema's errors in the telemetry rows, found fast and worded by the probe's validator."""
    errors: list[ValidationError] = []
    allowed = _ROW_VALUE_TYPES
    for key, rows in series.items():
        if not isinstance(rows, list):
            continue  # the validator reports it, with the rest of the document
        path = f"$.telemetry.gpu_series['{key}']"
        errors.extend(_VALIDATOR.errors(rows, {"maxItems": MAX_SAMPLES}, path))  # not the rows: below
        for i, row in enumerate(rows):
            if type(row) is list and allowed.issuperset(map(type, row)):
                continue
            errors.extend(_VALIDATOR.errors(row, _ROW_SCHEMA, f"{path}[{i}]"))
    return errors


def validation_errors(report: Any) -> list[ValidationError]:
    """Every schema error of `report`, as `python -m probe validate` words them (path and message).

    The telemetry rows are checked by a fast loop that accepts exactly what their schema accepts; the
    rest of the document by the probe's validator, with each series' rows left out of it. Errors in the
    document come before errors in the rows.
    """
    telemetry = report.get("telemetry") if isinstance(report, dict) else None
    series = telemetry.get("gpu_series") if isinstance(telemetry, dict) else None
    if not isinstance(telemetry, dict) or not isinstance(series, dict):
        return _VALIDATOR.errors(report)
    fast = {
        key: rows
        for key, rows in series.items()
        if isinstance(rows, list) and key.isascii() and key.isdigit()  # the schema's ^[0-9]+$
    }
    shallow = {
        **report,
        "telemetry": {**telemetry, "gpu_series": {**series, **{key: [] for key in fast}}},
    }
    return _VALIDATOR.errors(shallow) + _series_errors(fast)


def parse_report(raw: bytes) -> dict[str, Any]:
    """The report as a dict, or a 400 naming the JSON path of the first error."""
    too_deep = InvalidInput("report", f"$: not valid JSON: nested more than {MAX_DEPTH} levels deep")
    try:
        report = _load(raw)  # counts the GPUs as it goes: the cheapest refusal comes first
    except ValueError as exc:  # UnicodeDecodeError is a ValueError too
        raise InvalidInput("report", f"$: not valid JSON: {exc}") from None
    except RecursionError:  # json's C parser stops at the interpreter's recursion limit
        raise too_deep from None
    # A report nests fewer than 10 levels; anything deeper (werkbank.jsonfields) never reaches the
    # validator, which recurses in Python. Measured after the parse, so that a report refused by its GPU
    # count is not scanned whole first.
    if nesting_depth_exceeds(raw, MAX_DEPTH):
        raise too_deep
    _check_structure(report)
    errors = validation_errors(report)
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise InvalidInput("report", f"{errors[0]}{more}")
    _check_consistency(report)
    return report


def _check_consistency(report: dict[str, Any]) -> None:
    """What the schema cannot say but the rows need: each rule a 400 naming the path."""
    probe = report["probe"]
    if probe["ended_at"] is not None and probe["ended_at"] < probe["started_at"]:
        raise InvalidInput("report", "$.probe.ended_at: is before $.probe.started_at.")
    telemetry = report["telemetry"]
    if not telemetry or not any(telemetry["gpu_series"].values()):
        return
    columns = telemetry["gpu_columns"]
    if "t_offset_s" not in columns:
        raise InvalidInput("report", "$.telemetry.gpu_columns: needs 't_offset_s' to time the samples.")
    offset, width = columns.index("t_offset_s"), len(columns)
    for key, rows in telemetry["gpu_series"].items():
        # Whole-series checks run in C; the loop below only looks for the first offending row.
        if any(length != width for length in set(map(len, rows))):
            i = next(i for i, row in enumerate(rows) if len(row) != width)
            raise InvalidInput(
                "report",
                f"$.telemetry.gpu_series['{key}'][{i}]: has {len(rows[i])} values, "
                f"expected {width} (one per gpu_columns entry).",
            )
        offsets = [row[offset] for row in rows]
        if None in offsets:
            i = offsets.index(None)
            path = f"$.telemetry.gpu_series['{key}'][{i}][{offset}]"
            raise InvalidInput("report", f"{path}: t_offset_s is null.")


# --- Parsing, with the GPUs counted as they are parsed -------------------------------------------------

_DECODER = json.JSONDecoder()  # json.loads' own
_SPACE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace


def _skip(text: str, at: int) -> int:
    """Where the whitespace at `text[at]` ends."""
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _load(raw: bytes) -> Any:
    """`json.loads(raw)`, but a top-level `gpus` array is refused once it has more than `MAX_GPUS` items,
    before the rest of it is parsed. Whatever this reading does not follow is read by `json.loads`, which
    then words the error."""
    text = raw.decode(json.detect_encoding(raw), "surrogatepass")  # as json.loads decodes bytes
    try:
        return _load_object(text)
    except ValueError:
        return json.loads(text)


def _load_object(text: str) -> Any:
    """The document in `text` when it is an object, parsed one member at a time (ValueError otherwise)."""
    at = _skip(text, 0)
    if not text.startswith("{", at):
        raise ValueError("not an object")
    report: dict[str, Any] = {}
    at = _skip(text, at + 1)
    while not text.startswith("}", at) or report:
        if not text.startswith('"', at):
            raise ValueError("not a member")
        key, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if not text.startswith(":", at):
            raise ValueError("not a member")
        at = _skip(text, at + 1)
        if key == "gpus" and text.startswith("[", at):
            report[key], at = _load_array(text, at, MAX_GPUS, "$.gpus")
        else:
            report[key], at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text.startswith("}", at):
            break
        if not text.startswith(",", at):
            raise ValueError("not an object")
        at = _skip(text, at + 1)
    if _skip(text, at + 1) != len(text):
        raise ValueError("extra data")
    return report


def _load_array(text: str, at: int, bound: int, path: str) -> tuple[list[Any], int]:
    """The array at `text[at]`, and where it ends; a 400 as soon as it has more than `bound` items."""
    items: list[Any] = []
    at = _skip(text, at + 1)
    if text.startswith("]", at):
        return items, at + 1
    while True:
        item, at = _DECODER.raw_decode(text, at)
        items.append(item)
        if len(items) > bound:
            raise _over_bound(path, bound, f"more than {bound}")
        at = _skip(text, at)
        if text.startswith("]", at):
            return items, at + 1
        if not text.startswith(",", at):
            raise ValueError("not an array")
        at = _skip(text, at + 1)


# --- The cheap structural checks: run before the validation, on whatever shape the document has -------

#: Why each bound holds, for the 400 (the schema's `$comment`s say it at length).
_BOUND_REASONS = {
    "$.gpus": "a server holds at most {bound} GPUs",
    "$.stages": "each of the probe's {bound} stages at most once",
    "$.telemetry.gpu_series": "one series per GPU",
    "samples": "7 days sampled every second",
    "$.host_memory.edac": "a server has at most {bound} memory controllers",
    "dimms": "at most {bound} DIMMs per memory controller",
}


def _over_bound(
    path: str, bound: int, got: object, reason: str | None = None, *, unit: str = "items"
) -> InvalidInput:
    """The 400, worded as the probe's validator words `maxItems` and `maxProperties`, with the reason."""
    why = (reason or _BOUND_REASONS[path]).format(bound=bound)
    return InvalidInput("report", f"{path}: expected at most {bound} {unit} ({why}), got {got}.")


def _at_most(value: Any, bound: int, path: str, reason: str | None = None) -> None:
    if isinstance(value, list | dict) and len(value) > bound:
        unit = "items" if isinstance(value, list) else "properties"
        raise _over_bound(path, bound, len(value), reason, unit=unit)


def _check_structure(report: Any) -> None:
    """What a server can have and what appears once, checked in time linear in the few items counted:
    the report's shape is the validator's to judge, so anything not as expected is left to it."""
    if not isinstance(report, dict):
        return
    gpus, stages = report.get("gpus"), report.get("stages")
    _at_most(gpus, MAX_GPUS, "$.gpus")
    _at_most(stages, MAX_STAGES, "$.stages")
    telemetry = report.get("telemetry")
    series = telemetry.get("gpu_series") if isinstance(telemetry, dict) else None
    if isinstance(series, dict):
        _at_most(series, MAX_GPUS, "$.telemetry.gpu_series")
        for key, rows in series.items():
            _at_most(rows, MAX_SAMPLES, f"$.telemetry.gpu_series['{key}']", _BOUND_REASONS["samples"])
    _check_memory(report.get("host_memory"))
    _unique(stages, "name", "$.stages", "stage")
    _unique(gpus, "index", "$.gpus", "GPU index")
    _unique(gpus, "serial", "$.gpus", "GPU serial", counts=has_serial)  # GeForce cards: "N/A", each


def _check_memory(memory: Any) -> None:
    """The EDAC memory controllers and their DIMMs, at the start of the run and at its end."""
    edac = memory.get("edac") if isinstance(memory, dict) else None
    if not isinstance(edac, dict):
        return
    for name in ("mc", "mc_start"):
        controllers = edac.get(name)
        reason = _BOUND_REASONS["$.host_memory.edac"]
        _at_most(controllers, MAX_MEMORY_CONTROLLERS, f"$.host_memory.edac.{name}", reason)
        for i, controller in enumerate(controllers if isinstance(controllers, list) else []):
            dimms = controller.get("dimms") if isinstance(controller, dict) else None
            path = f"$.host_memory.edac.{name}[{i}].dimms"
            _at_most(dimms, MAX_DIMMS, path, _BOUND_REASONS["dimms"])


def _unique(
    items: Any, key: str, path: str, what: str, *, counts: Callable[[Any], bool] = lambda value: True
) -> None:
    """A 400 for the second item with the same `key`; items of another shape are the validator's."""
    seen: set[Any] = set()
    for i, item in enumerate(items if isinstance(items, list) else []):
        value = item.get(key) if isinstance(item, dict) else None
        if not isinstance(value, str | int | float) or not counts(value):
            continue
        if value in seen:
            raise InvalidInput("report", f"{path}[{i}].{key}: {what} {value!r} appears twice.")
        seen.add(value)


# --- The report id -------------------------------------------------------------------------------------


def report_id_of(raw: bytes, idempotency_key: str | None = None) -> str:
    """The report id: SHA-256 of the uncompressed report. A given Idempotency-Key must be that hash."""
    report_id = hashlib.sha256(raw).hexdigest()
    if idempotency_key is not None and idempotency_key.strip().lower() != report_id:
        raise InvalidInput(
            "Idempotency-Key",
            f"must be the SHA-256 of the uncompressed report ({report_id}), as the probe sends it; "
            f"got {idempotency_key[:80]!r}.",
        )
    return report_id
