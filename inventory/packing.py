"""Packing lists: parse and validate the serials a receiving clerk books under one lot.

Two sources feed a receipt: a packing-list CSV upload (:func:`parse_csv`) and the text of a scanner field,
one serial per line (:func:`parse_scanner`). Both return a :class:`PackingList`: the rows and, separately,
every problem found, each naming the row and the column as the user sees them. Validation is all or
nothing: the receiving service writes nothing unless ``PackingList.ok``. :func:`check_against_line` adds
the checks that need the purchase-order line (the MPN and the quantity still open on it).

This module is pure Python (no Django, no database): checks against serials already in the database
belong to the receiving service.

CSV format
    UTF-8, with or without a byte order mark. The delimiter is ``,`` or ``;`` (German Excel writes ``;``),
    decided from the header line alone. A header row is required; its names are trimmed and compared
    case-insensitively, with spaces and hyphens read as ``_`` (so "Serial Number" is ``serial_number``).
    Columns:

    ``serial`` (required)
        also accepted as ``serial_number``, ``sn`` or ``seriennummer``
    ``mpn`` (optional)
        also accepted as ``part_number`` or ``pn``; trimmed, and an empty cell means "not given"

    Any other column, a missing ``serial`` column or a column given twice (also under two aliases) is one
    file-level error. Rows whose cells are all blank are skipped but still counted, so row numbers match
    the spreadsheet: the header is row 1 and, without blank rows, the first serial is row 2.

Serials
    Must match :data:`SERIAL_PATTERN`: 1 to 64 characters, ASCII letters, digits and ``. _ : / + -``,
    starting with a letter or digit. Whitespace around a serial is an error, never trimmed silently: a
    serial with a stray space is either a typo or a different serial, and the clerk must look at it.
    Serials are compared in their normal form (:func:`inventory.serials.normalize_serial`): two serials
    that differ only in letter case are one serial, and flagged as duplicates, because scanners differ in
    how they send case. Each is kept as given.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from inventory.serials import normalize_serial

# \Z, not $: with $ a trailing newline would match, also through .match() or .search().
SERIAL_PATTERN: re.Pattern[str] = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,63}\Z")
SERIAL_MAX_LENGTH = 64
MPN_MAX_LENGTH = 100  # the length of Part.mpn in the catalogue
DEFAULT_MAX_ROWS = 10_000

SERIAL = "serial"
MPN = "mpn"
COLUMN_ALIASES: dict[str, str] = {
    "serial": SERIAL,
    "serial_number": SERIAL,
    "sn": SERIAL,
    "seriennummer": SERIAL,
    "mpn": MPN,
    "part_number": MPN,
    "pn": MPN,
}
ALLOWED_COLUMNS_TEXT = (
    'allowed columns: "serial" (required; also "serial_number", "sn", "seriennummer") '
    'and "mpn" (optional; also "part_number", "pn")'
)
_SERIAL_CHARS_TEXT = "letters A-Z and a-z, digits and . _ : / + -"
_UTF8_BOM = b"\xef\xbb\xbf"
_NAME_SEPARATORS = re.compile(r"[\s-]+")


@dataclass(frozen=True)
class SerialRow:
    """One serial as read, with its row number as the user sees it."""

    row: int
    serial: str
    mpn: str | None = None


@dataclass(frozen=True)
class RowError:
    """One problem: in a row and column, or (``row`` None) with the whole file."""

    row: int | None
    column: str | None
    message: str

    def as_dict(self) -> dict[str, Any]:
        """The error as the API answers it."""
        return {"row": self.row, "column": self.column, "message": self.message}


@dataclass(frozen=True)
class PackingList:
    """The parsed rows and every error found.

    ``rows`` holds every data row of the right shape, in file order, also those whose serial is invalid
    or a duplicate (so counts and row numbers match the file). Nothing may be booked unless ``ok``.
    """

    rows: tuple[SerialRow, ...]
    errors: tuple[RowError, ...]

    @property
    def ok(self) -> bool:
        """True when there are rows and no errors."""
        return bool(self.rows) and not self.errors


def _char_name(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name}" if name else f"U+{ord(char):04X}"


def _is_control(char: str) -> bool:
    # Category C* covers Cc (\t, \x00, \x7f), Cf (zero-width space, BOM, bidi marks), Cs, Co and Cn.
    return unicodedata.category(char)[0] == "C"


def serial_problem(value: str) -> str | None:
    """Say what is wrong with one serial as given, or None when it is valid."""
    if SERIAL_PATTERN.match(value):
        return None  # the fast path: almost every serial
    if value == "":
        return "is empty"
    if value.strip() == "":
        return "is blank (only whitespace)"
    if value != value.strip():
        edge = value[0] if value[0].isspace() else value[-1]
        return f"has leading or trailing whitespace ({_char_name(edge)})"
    for position, char in enumerate(value, start=1):
        if _is_control(char):
            return f"contains a control character ({_char_name(char)}) at position {position}"
    for position, char in enumerate(value, start=1):
        if char.isspace():
            return f"contains whitespace ({_char_name(char)}) at position {position}"
    if len(value) > SERIAL_MAX_LENGTH:
        return f"is {len(value)} characters long; at most {SERIAL_MAX_LENGTH} are allowed"
    if not value[0].isascii() or not value[0].isalnum():
        return f"starts with {value[0]!r} ({_char_name(value[0])}); a serial starts with a letter or digit"
    for position, char in enumerate(value, start=1):
        if not SERIAL_PATTERN.match(f"0{char}"):
            return (
                f"contains {char!r} ({_char_name(char)}) at position {position}; "
                f"allowed are {_SERIAL_CHARS_TEXT}"
            )
    return f"does not match {SERIAL_PATTERN.pattern}"  # unreachable with the checks above; kept as a guard


def _mpn_problem(value: str) -> str | None:
    for position, char in enumerate(value, start=1):
        if _is_control(char):
            return f"contains a control character ({_char_name(char)}) at position {position}"
    if len(value) > MPN_MAX_LENGTH:
        return f"is {len(value)} characters long; at most {MPN_MAX_LENGTH} are allowed"
    return None


class _Collector:
    """Collects rows and errors, and flags duplicates within the file."""

    def __init__(self) -> None:
        self.rows: list[SerialRow] = []
        self.errors: list[RowError] = []
        self._first_row: dict[str, tuple[int, str]] = {}  # normal form -> (row, serial as given)

    def add(self, *, row: int, serial: str, mpn: str | None, serial_message: str | None) -> None:
        self.rows.append(SerialRow(row=row, serial=serial, mpn=mpn))
        if serial_message is None:
            serial_message = self._duplicate(row=row, serial=serial)
        if serial_message is not None:
            self.errors.append(RowError(row=row, column=SERIAL, message=f"serial {serial_message}"))

    def _duplicate(self, *, row: int, serial: str) -> str | None:
        key = normalize_serial(serial)
        first = self._first_row.setdefault(key, (row, serial))
        if first[0] == row:
            return None
        if first[1] == serial:
            return f"{serial!r} is a duplicate of row {first[0]}"
        return (
            f"{serial!r} is a duplicate of row {first[0]} ({first[1]!r}): they differ only in letter case, "
            "which a scanner may change"
        )

    def file_error(self, message: str) -> None:
        self.errors.append(RowError(row=None, column=None, message=message))

    def result(self, *, empty: str) -> PackingList:
        if not self.rows and not self.errors:
            self.file_error(empty)
        return PackingList(rows=tuple(self.rows), errors=_ordered(self.errors))


def _ordered(errors: list[RowError]) -> tuple[RowError, ...]:
    """File-level errors first, then by row; stable, so a row's errors keep their order."""
    return tuple(sorted(errors, key=lambda error: (error.row is not None, error.row or 0)))


def _too_many(max_rows: int) -> str:
    return f"more than {max_rows} serials; split the list into parts of at most {max_rows}"


def _decode(data: bytes) -> tuple[str | None, str | None]:
    bom = len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0
    try:
        return data[bom:].decode("utf-8"), None
    except UnicodeDecodeError as exc:
        offset = bom + exc.start
        line = data.count(b"\n", 0, offset) + 1
        return None, (
            f"the file is not valid UTF-8: byte 0x{data[offset]:02X} at byte offset {offset} (line {line}); "
            'save it as "CSV UTF-8"'
        )


def _sniff_delimiter(text: str) -> str:
    header = next((line for line in io.StringIO(text) if line.strip()), "")
    return ";" if header.count(";") > header.count(",") else ","


def column_name(name: str) -> str:
    """A header's column name as the aliases spell it: "Serial Number" → "serial_number"."""
    return _NAME_SEPARATORS.sub("_", name.strip().lower())


def _header_columns(header: list[str]) -> tuple[dict[str, int] | None, str | None]:
    """Map each canonical column to its index, or say what is wrong with the header."""
    names = [column_name(name) for name in header]
    if not any(name in COLUMN_ALIASES for name in names):
        found = ", ".join(repr(name.strip()) for name in header)
        return (
            None,
            f"the first row must be a header naming the columns, found {found}; {ALLOWED_COLUMNS_TEXT}",
        )
    index: dict[str, int] = {}
    problems: list[str] = []
    unknown = [
        repr(header[i].strip()) if name else f"column {i + 1} (no name)"
        for i, name in enumerate(names)
        if name not in COLUMN_ALIASES
    ]
    if unknown:
        problems.append(f"unknown column{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}")
    for i, name in enumerate(names):
        column = COLUMN_ALIASES.get(name)
        if column is None:
            continue
        if column in index:
            problems.append(
                f"column {column!r} given twice ({header[index[column]].strip()!r} and {header[i].strip()!r})"
            )
        else:
            index[column] = i
    if SERIAL not in index:
        problems.append("missing column 'serial'")
    if problems:
        return None, f"{'; '.join(problems)}; {ALLOWED_COLUMNS_TEXT}"
    return index, None


def parse_csv(data: bytes, *, max_rows: int = DEFAULT_MAX_ROWS) -> PackingList:
    """Parse a packing-list CSV upload (see the module docstring for the format).

    File-level problems (encoding, header, no serials, too many rows) are errors with ``row`` None.
    More than ``max_rows`` data rows stop the parse with one error.
    """
    collector = _Collector()
    text, problem = _decode(data)
    if text is None:
        collector.file_error(problem or "the file cannot be read")
        return PackingList(rows=(), errors=tuple(collector.errors))

    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_sniff_delimiter(text), strict=True)
    row = 0
    columns: dict[str, int] | None = None
    width = 0
    data_rows = 0
    try:
        for row, record in enumerate(reader, start=1):
            if not any(cell.strip() for cell in record):
                continue  # blank rows are skipped, but keep their number
            if columns is None:
                columns, problem = _header_columns(record)
                if columns is None:
                    collector.file_error(problem or "the header is invalid")
                    return PackingList(rows=(), errors=tuple(collector.errors))
                width = len(record)
                continue
            data_rows += 1
            if data_rows > max_rows:
                collector.file_error(_too_many(max_rows))
                break
            if len(record) != width:
                collector.errors.append(
                    RowError(
                        row=row,
                        column=None,
                        message=f"row has {len(record)} fields but the header has {width}",
                    )
                )
                continue
            _add_csv_row(collector, row=row, record=record, columns=columns)
    except csv.Error as exc:
        collector.errors.append(
            RowError(
                row=row + 1, column=None, message=f"cannot be read as CSV ({exc}); nothing after it was read"
            )
        )
    if columns is None:
        return collector.result(empty="no serials: the file is empty")
    return collector.result(empty="no serials: the file has a header but no data rows")


def _add_csv_row(collector: _Collector, *, row: int, record: list[str], columns: dict[str, int]) -> None:
    serial = record[columns[SERIAL]]
    mpn: str | None = None
    if MPN in columns:
        mpn = record[columns[MPN]].strip() or None
        mpn_message = _mpn_problem(mpn) if mpn else None
        if mpn_message:
            collector.errors.append(RowError(row=row, column=MPN, message=f"MPN {mpn_message}"))
    collector.add(row=row, serial=serial, mpn=mpn, serial_message=serial_problem(serial))


def _scanner_lines(text: str) -> Iterable[tuple[int, str]]:
    for number, line in enumerate(text.split("\n"), start=1):
        yield number, line.removesuffix("\r")


def parse_scanner(text: str, *, max_rows: int = DEFAULT_MAX_ROWS) -> PackingList:
    """Parse the text of a scanner field: one serial per line, ``\\n`` or ``\\r\\n`` line endings.

    The first line is row 1; blank lines are skipped but counted. Spaces or tabs around a serial are an
    error, as in a CSV: a scanner never sends them, so the serial was typed and may hide a typo.
    """
    collector = _Collector()
    for row, line in _scanner_lines(text):
        if not line.strip():
            continue
        if len(collector.rows) >= max_rows:
            collector.file_error(_too_many(max_rows))
            break
        problem = serial_problem(line)
        if problem is not None and line != line.strip():
            problem = (
                f"{problem}: a scanner never sends it, so the serial was probably typed; "
                "check it for a typo and remove the whitespace"
            )
        collector.add(row=row, serial=line, mpn=None, serial_message=problem)
    return collector.result(empty="no serials: the text is empty")


def check_against_line(packing: PackingList, *, expected_mpn: str, remaining: int) -> PackingList:
    """Check a parsed list against its purchase-order line: the MPN given per row and the open quantity.

    A row whose MPN is given and differs from ``expected_mpn`` (compared trimmed and case-insensitively,
    as MPNs are printed in either case) gets an error in column "mpn". More rows than ``remaining`` is a
    file-level error. Returns a new list; errors are ordered file-level first, then by row.
    """
    expected = expected_mpn.strip()
    errors = list(packing.errors)
    for row in packing.rows:
        if row.mpn is not None and row.mpn.strip().casefold() != expected.casefold():
            errors.append(
                RowError(
                    row=row.row,
                    column=MPN,
                    message=f"unknown part or MPN: the row gives {row.mpn!r}, this line is for {expected!r}",
                )
            )
    if len(packing.rows) > remaining:
        errors.append(
            RowError(
                row=None,
                column=None,
                message=f"{len(packing.rows)} serials but only {max(remaining, 0)} remain on the line",
            )
        )
    return PackingList(rows=packing.rows, errors=_ordered(errors))
