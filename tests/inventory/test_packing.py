"""Packing lists: CSV and scanner parsing, serial rules, duplicates and the checks against a PO line."""

from __future__ import annotations

import pytest

from inventory.packing import (
    SERIAL_PATTERN,
    PackingList,
    RowError,
    SerialRow,
    check_against_line,
    parse_csv,
    parse_scanner,
    serial_problem,
)


def errors_of(packing: PackingList) -> list[tuple[int | None, str | None, str]]:
    return [(error.row, error.column, error.message) for error in packing.errors]


def only_error(packing: PackingList) -> RowError:
    assert len(packing.errors) == 1, errors_of(packing)
    return packing.errors[0]


# --- good CSV ---------------------------------------------------------------------------------------


def test_csv_with_serial_and_mpn() -> None:
    packing = parse_csv(b"serial,mpn\nSN-0001,RTXPRO6000-BW-96G\nSN-0002,RTXPRO6000-BW-96G\n")

    assert packing.ok
    assert packing.errors == ()
    assert packing.rows == (
        SerialRow(row=2, serial="SN-0001", mpn="RTXPRO6000-BW-96G"),
        SerialRow(row=3, serial="SN-0002", mpn="RTXPRO6000-BW-96G"),
    )


def test_csv_without_mpn_column_and_without_final_newline() -> None:
    packing = parse_csv(b"serial\n1324523012345\nAB.12_3:4/5+6-7")

    assert packing.ok
    assert packing.rows == (
        SerialRow(row=2, serial="1324523012345", mpn=None),
        SerialRow(row=3, serial="AB.12_3:4/5+6-7", mpn=None),
    )


def test_csv_semicolon_delimiter_crlf_and_bom_as_german_excel_writes_it() -> None:
    data = "Seriennummer;Part Number\r\nSN1;RTX-5090\r\nSN2;RTX-5090\r\n".encode("utf-8-sig")

    packing = parse_csv(data)

    assert packing.ok, errors_of(packing)
    assert [(row.row, row.serial, row.mpn) for row in packing.rows] == [
        (2, "SN1", "RTX-5090"),
        (3, "SN2", "RTX-5090"),
    ]


@pytest.mark.parametrize(
    "serial_name", ["serial", "SERIAL", " Serial ", "serial_number", "sn", "SN", "Serial Number"]
)
@pytest.mark.parametrize("mpn_name", ["mpn", "MPN", "part_number", "pn", "Part-Number"])
def test_csv_header_aliases_case_and_spaces(serial_name: str, mpn_name: str) -> None:
    packing = parse_csv(f"{mpn_name},{serial_name}\nX-1,SN1\n".encode())

    assert packing.ok, errors_of(packing)
    assert packing.rows == (SerialRow(row=2, serial="SN1", mpn="X-1"),)


def test_csv_blank_rows_are_skipped_but_keep_the_row_numbers_of_the_spreadsheet() -> None:
    packing = parse_csv(b"serial;mpn\n\nSN1;X\n;\n   ;  \nSN2;\n\n")

    assert packing.ok, errors_of(packing)
    assert packing.rows == (SerialRow(row=3, serial="SN1", mpn="X"), SerialRow(row=6, serial="SN2", mpn=None))


def test_csv_quoted_cells_and_trimmed_mpn() -> None:
    packing = parse_csv(b'"serial","mpn"\n"SN1"," RTX-5090 "\n')

    assert packing.rows == (SerialRow(row=2, serial="SN1", mpn="RTX-5090"),)


def test_csv_delimiter_is_decided_by_the_header_line() -> None:
    # A comma inside a ;-separated file belongs to the cell, so the serial rule reports it.
    packing = parse_csv(b"serial;mpn\nSN1,X;Y\n")

    error = only_error(packing)
    assert (error.row, error.column) == (2, "serial")
    assert "','" in error.message


# --- bad files --------------------------------------------------------------------------------------


def test_csv_not_utf8_names_the_byte_offset() -> None:
    data = "serial\nSN1\nGehäuse-1\n".encode("cp1252")

    error = only_error(parse_csv(data))

    assert (error.row, error.column) == (None, None)
    assert "not valid UTF-8" in error.message
    assert "byte 0xE4 at byte offset 14 (line 3)" in error.message


def test_csv_offset_counts_the_bom() -> None:
    error = only_error(parse_csv(b"\xef\xbb\xbfserial\n\xff\n"))

    assert "byte 0xFF at byte offset 10 (line 2)" in error.message


@pytest.mark.parametrize("data", [b"", b"\n\n", b"\xef\xbb\xbf", b" \r\n"])
def test_csv_empty_file(data: bytes) -> None:
    packing = parse_csv(data)

    error = only_error(packing)
    assert (error.row, error.column) == (None, None)
    assert "no serials" in error.message
    assert not packing.ok


def test_csv_header_without_data_rows() -> None:
    error = only_error(parse_csv(b"serial,mpn\n\n"))

    assert (error.row, error.column) == (None, None)
    assert "no serials" in error.message


def test_csv_without_header() -> None:
    error = only_error(parse_csv(b"SN0001\nSN0002\n"))

    assert (error.row, error.column) == (None, None)
    assert "header" in error.message
    assert "'SN0001'" in error.message


def test_csv_unknown_column_names_it_and_lists_the_allowed_set() -> None:
    error = only_error(parse_csv(b"serial,qty,note\nSN1,1,x\n"))

    assert (error.row, error.column) == (None, None)
    assert "unknown columns 'qty', 'note'" in error.message
    assert '"serial"' in error.message
    assert '"mpn"' in error.message
    assert '"seriennummer"' in error.message


def test_csv_unnamed_column_is_an_unknown_column() -> None:
    error = only_error(parse_csv(b"serial;mpn;\nSN1;X;\n"))

    assert "column 3 (no name)" in error.message


def test_csv_missing_serial_column() -> None:
    error = only_error(parse_csv(b"mpn\nRTX-5090\n"))

    assert (error.row, error.column) == (None, None)
    assert "missing column 'serial'" in error.message


@pytest.mark.parametrize("header", [b"serial,serial", b"serial,SN", b"mpn,serial,pn"])
def test_csv_duplicated_column(header: bytes) -> None:
    error = only_error(parse_csv(header + b"\n"))

    assert (error.row, error.column) == (None, None)
    assert "given twice" in error.message


def test_csv_row_with_wrong_number_of_fields() -> None:
    packing = parse_csv(b"serial,mpn\nSN1,X\nSN2\nSN3,X,extra\nSN4,X\n")

    assert errors_of(packing) == [
        (3, None, "row has 1 fields but the header has 2"),
        (4, None, "row has 3 fields but the header has 2"),
    ]
    assert [row.serial for row in packing.rows] == ["SN1", "SN4"]
    assert not packing.ok


def test_csv_broken_quoting_is_a_row_error() -> None:
    error = only_error(parse_csv(b'serial\nSN1\n"SN2\nSN3\n'))

    assert (error.row, error.column) == (3, None)
    assert "cannot be read as CSV" in error.message


# --- serial rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "fragment"),
    [
        ("", "is empty"),
        (" SN1", "has leading or trailing whitespace (U+0020 SPACE)"),
        ("SN1 ", "has leading or trailing whitespace (U+0020 SPACE)"),
        ("SN1\u00a0", "has leading or trailing whitespace (U+00A0 NO-BREAK SPACE)"),
        ("SN 1", "contains whitespace (U+0020 SPACE) at position 3"),
        ("SN\t1", "contains a control character (U+0009) at position 3"),
        ("SN1\x00", "contains a control character (U+0000) at position 4"),
        ("SN1\x7f", "contains a control character (U+007F) at position 4"),
        ("SN\u200b1", "contains a control character (U+200B ZERO WIDTH SPACE) at position 3"),
        ("\ufeffSN1", "contains a control character (U+FEFF"),
        ("S" * 65, "is 65 characters long; at most 64 are allowed"),
        ("-SN1", "starts with '-'"),
        ("SN#1", "contains '#' (U+0023 NUMBER SIGN) at position 3"),
        ("SNÄ1", "contains 'Ä'"),
        ("SN１", "contains '１'"),  # a full-width digit is a digit to Python, not to the pattern
    ],
)
def test_csv_bad_serial_names_row_column_and_rule(cell: str, fragment: str) -> None:
    packing = parse_csv(f"mpn;serial\nX;SN-OK\nX;{cell}\n".encode())

    error = only_error(packing)
    assert (error.row, error.column) == (3, "serial")
    assert fragment in error.message
    assert not packing.ok


def test_csv_whitespace_is_not_trimmed_from_serials() -> None:
    packing = parse_csv(b'serial\n"SN1 "\n')

    assert packing.rows == (SerialRow(row=2, serial="SN1 ", mpn=None),)
    assert only_error(packing).column == "serial"


def test_csv_bad_mpn_cell() -> None:
    packing = parse_csv(b"serial,mpn\nSN1,RTX\x005090\n")

    error = only_error(packing)
    assert (error.row, error.column) == (2, "mpn")
    assert "control character (U+0000)" in error.message


def test_serial_pattern_is_anchored_at_the_very_end() -> None:
    assert SERIAL_PATTERN.match("SN1")
    assert SERIAL_PATTERN.match("S" * 64)
    assert not SERIAL_PATTERN.match("S" * 65)
    assert not SERIAL_PATTERN.match("SN1\n")
    assert not SERIAL_PATTERN.search("SN1\n")
    assert serial_problem("SN1") is None
    assert serial_problem("SN1\n") == "has leading or trailing whitespace (U+000A)"


def test_every_row_gets_its_own_error() -> None:
    packing = parse_csv(b"serial\n SN1\nSN2\nSN\t3\n\nSN#4\n")

    assert [(row, column) for row, column, _ in errors_of(packing)] == [
        (2, "serial"),
        (4, "serial"),
        (6, "serial"),
    ]


# --- duplicates -------------------------------------------------------------------------------------


def test_duplicates_name_the_first_row() -> None:
    packing = parse_csv(b"serial\nSN1\nSN2\nSN3\nSN2\nSN2\n")

    assert [(row, column) for row, column, _ in errors_of(packing)] == [(5, "serial"), (6, "serial")]
    assert all("duplicate of row 3" in message for _, _, message in errors_of(packing))


def test_case_insensitive_duplicate_is_flagged_and_says_why() -> None:
    packing = parse_csv(b"serial\nABC1\nxyz\nabc1\n")

    error = only_error(packing)
    assert (error.row, error.column) == (4, "serial")
    assert "duplicate of row 2" in error.message
    assert "letter case" in error.message
    # Serials stay as given: nothing is folded.
    assert [row.serial for row in packing.rows] == ["ABC1", "xyz", "abc1"]


def test_invalid_serials_are_not_reported_twice_as_duplicates() -> None:
    packing = parse_csv(b'serial\n"SN1 "\n"SN1 "\n')

    assert [(row, "whitespace" in message) for row, _, message in errors_of(packing)] == [
        (2, True),
        (3, True),
    ]


# --- scanner ----------------------------------------------------------------------------------------


def test_scanner_good_with_crlf_and_blank_lines() -> None:
    packing = parse_scanner("SN1\r\nSN2\r\n\r\nSN3\n\n")

    assert packing.ok, errors_of(packing)
    assert packing.rows == (
        SerialRow(row=1, serial="SN1", mpn=None),
        SerialRow(row=2, serial="SN2", mpn=None),
        SerialRow(row=4, serial="SN3", mpn=None),
    )


@pytest.mark.parametrize("line", [" SN2", "SN2 ", "\tSN2", "SN2\t"])
def test_scanner_whitespace_around_a_serial_is_an_error_and_says_why(line: str) -> None:
    packing = parse_scanner(f"SN1\n{line}\nSN3\n")

    error = only_error(packing)
    assert (error.row, error.column) == (2, "serial")
    assert "leading or trailing whitespace" in error.message
    assert "scanner never sends" in error.message
    assert "typo" in error.message


def test_scanner_bad_lines() -> None:
    packing = parse_scanner("SN1\nSN\x002\nSN 3\nsn1\nSN1\nSN\r4\n")

    assert [(row, column) for row, column, _ in errors_of(packing)] == [
        (2, "serial"),
        (3, "serial"),
        (4, "serial"),
        (5, "serial"),
        (6, "serial"),
    ]
    messages = [message for _, _, message in errors_of(packing)]
    assert "control character (U+0000)" in messages[0]
    assert "contains whitespace (U+0020 SPACE)" in messages[1]
    assert "duplicate of row 1" in messages[2]
    assert "letter case" in messages[2]
    assert "duplicate of row 1" in messages[3]
    assert "control character (U+000D)" in messages[4]


@pytest.mark.parametrize("text", ["", "\n", " \r\n\t\n"])
def test_scanner_empty(text: str) -> None:
    error = only_error(parse_scanner(text))

    assert (error.row, error.column) == (None, None)
    assert "no serials" in error.message


# --- max_rows ---------------------------------------------------------------------------------------


def test_csv_max_rows_is_one_error_and_stops_parsing() -> None:
    rows = "".join(f"SN{i}\n" for i in range(5)) + "bad serial\n"

    packing = parse_csv(f"serial\n{rows}".encode(), max_rows=3)

    assert errors_of(packing) == [
        (None, None, "more than 3 serials; split the list into parts of at most 3"),
    ]
    assert [row.serial for row in packing.rows] == ["SN0", "SN1", "SN2"]
    assert not packing.ok


def test_csv_exactly_max_rows_is_fine() -> None:
    packing = parse_csv(b"serial\n\nSN1\nSN2\nSN3\n\n", max_rows=3)

    assert packing.ok


def test_scanner_max_rows() -> None:
    packing = parse_scanner("SN1\n\nSN2\nSN3\nbad serial\n", max_rows=2)

    assert errors_of(packing) == [
        (None, None, "more than 2 serials; split the list into parts of at most 2"),
    ]


def test_ten_thousand_serials() -> None:
    serials = [f"GPU{i:06d}-{'ab'[i % 2]}" for i in range(10_000)]
    data = ("seriennummer;mpn\r\n" + "".join(f"{serial};RTX-5090\r\n" for serial in serials)).encode()

    packing = parse_csv(data)
    scanned = parse_scanner("\r\n".join(serials))

    assert packing.ok, errors_of(packing)[:5]
    assert [row.serial for row in packing.rows] == serials
    assert [row.row for row in packing.rows] == list(range(2, 10_002))
    assert {row.mpn for row in packing.rows} == {"RTX-5090"}
    assert scanned.ok
    assert [row.serial for row in scanned.rows] == serials
    assert scanned.rows[-1].row == 10_000
    assert only_error(parse_csv(data + b"ONE-MORE;RTX-5090\r\n")).message.startswith(
        "more than 10000 serials"
    )


# --- check_against_line -----------------------------------------------------------------------------


def test_check_against_line_passes_matching_mpns_case_insensitively() -> None:
    packing = parse_csv(b"serial,mpn\nSN1,RTX-5090\nSN2,rtx-5090\nSN3,\n")

    checked = check_against_line(packing, expected_mpn="RTX-5090", remaining=3)

    assert checked.ok, errors_of(checked)
    assert checked.rows == packing.rows


def test_check_against_line_mpn_mismatch_names_both_mpns() -> None:
    packing = parse_csv(b"serial,mpn\nSN1,RTX-5090\nSN2,RTX-4090\nSN3,\n")

    checked = check_against_line(packing, expected_mpn="RTX-5090", remaining=10)

    error = only_error(checked)
    assert (error.row, error.column) == (3, "mpn")
    assert "unknown part or MPN" in error.message
    assert "'RTX-4090'" in error.message
    assert "'RTX-5090'" in error.message
    assert packing.ok  # the input is not changed


def test_check_against_line_over_count_is_a_file_level_error_first() -> None:
    packing = parse_scanner("SN1\nSN2\nSN3\n")

    checked = check_against_line(packing, expected_mpn="RTX-5090", remaining=2)

    error = only_error(checked)
    assert (error.row, error.column) == (None, None)
    assert error.message == "3 serials but only 2 remain on the line"
    assert check_against_line(packing, expected_mpn="RTX-5090", remaining=3).ok


def test_check_against_line_keeps_earlier_errors_and_orders_them() -> None:
    packing = parse_csv(b"serial,mpn\nSN1,OTHER\n SN2,RTX-5090\n")

    checked = check_against_line(packing, expected_mpn="RTX-5090", remaining=1)

    assert [(row, column) for row, column, _ in errors_of(checked)] == [
        (None, None),
        (2, "mpn"),
        (3, "serial"),
    ]


def test_row_error_as_dict() -> None:
    assert RowError(row=4, column="serial", message="serial is empty").as_dict() == {
        "row": 4,
        "column": "serial",
        "message": "serial is empty",
    }
