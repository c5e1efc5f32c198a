"""The normal form serials are compared in (inventory.serials)."""

from __future__ import annotations

import pytest

from inventory.packing import parse_scanner
from inventory.serials import normalize_serial


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("AB-1", "AB-1"),
        ("ab-1", "AB-1"),
        (" aB-1\r\n", "AB-1"),  # a scanner's line ending, a stray space
        ("\tsn:1652/a+b_c.d", "SN:1652/A+B_C.D"),
        ("AB 1", "AB 1"),  # inner whitespace stays: no valid serial has any, so it matches nothing
        ("", ""),
        (None, ""),
    ],
)
def test_normal_form(raw, normal):
    assert normalize_serial(raw) == normal


def test_receiving_and_scanning_share_it():
    # The packing list flags "ab-1" after "AB-1" because both have the normal form the scan looks up.
    packing = parse_scanner("AB-1\nab-1")
    assert [error.row for error in packing.errors] == [2]
    assert normalize_serial(" ab-1 ") == normalize_serial(packing.rows[0].serial)
