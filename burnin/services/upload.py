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
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from django.conf import settings

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


# --- Validation ----------------------------------------------------------------------------------------

_SCHEMA = load_schema()
_VALIDATOR = Validator(_SCHEMA)
#: A telemetry row: numbers or nulls. The fast check below stands in for exactly this schema.
_ROW_SCHEMA = {"type": "array", "items": {"type": ["number", "null"]}}
_SERIES_KEY = "^[0-9]+$"
_SERIES_SCHEMA = {
    "type": "object",
    "patternProperties": {_SERIES_KEY: {"type": "array", "items": _ROW_SCHEMA}},
    "additionalProperties": False,
}
if _SCHEMA["$defs"]["telemetry"]["properties"]["gpu_series"] != _SERIES_SCHEMA:  # pragma: no cover
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
        for i, row in enumerate(rows):
            if type(row) is list and allowed.issuperset(map(type, row)):
                continue
            errors.extend(_VALIDATOR.errors(row, _ROW_SCHEMA, f"$.telemetry.gpu_series['{key}'][{i}]"))
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
    # Refused before the parser recurses (werkbank.jsonfields); a report nests fewer than 10 levels.
    if nesting_depth_exceeds(raw, MAX_DEPTH):
        raise InvalidInput("report", f"$: not valid JSON: nested more than {MAX_DEPTH} levels deep")
    try:
        report = json.loads(raw)
    except ValueError as exc:  # UnicodeDecodeError is a ValueError too
        raise InvalidInput("report", f"$: not valid JSON: {exc}") from None
    except RecursionError:
        raise InvalidInput("report", "$: not valid JSON: nested too deeply") from None
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
    _unique(report["stages"], "name", "$.stages", "stage")
    _unique(report["gpus"], "index", "$.gpus", "GPU index")
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


def _unique(items: list[dict[str, Any]], key: str, path: str, what: str) -> None:
    seen: set[Any] = set()
    for i, item in enumerate(items):
        if item[key] in seen:
            raise InvalidInput("report", f"{path}[{i}].{key}: {what} {item[key]!r} appears twice.")
        seen.add(item[key])


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
