"""Serial identity: a component is its manufacturer plus its serial, and serials compare in one normal form.

The normal form of a serial is the serial with the whitespace around it removed and its letters in upper
case (:func:`normalize_serial`). Receiving (the packing-list CSV and the scanner field) and the bench scan
compare serials only in this form, and the database enforces it: the unique index on
(``UPPER(serial)``, ``manufacturer``) of ``inventory.Component`` refuses a second "ab-1" next to "AB-1" of
the same manufacturer, and serves the scan's lookup by serial alone.

Why this rule:

- Letter case carries no meaning in a serial. Manufacturers print serials in capitals, but scanners and
  phone keyboards differ in how they send case (caps lock, a keyboard layout, a scanner's case setting), so
  the "ab-1" scanned at the bench is the "AB-1" that was received, and two serials that differ only in case
  are one serial.
- Two manufacturers may print the same serial: identity is the pair (manufacturer, normal form), and the
  bench scan asks for the manufacturer when the serial alone is ambiguous.
- Whitespace inside a serial is kept: no valid serial contains any (``inventory.packing.SERIAL_PATTERN``),
  so a scan with inner whitespace is a typo or another serial, and it finds nothing rather than being
  mended silently. Whitespace around a serial is dropped from the normal form: a scanner's trailing
  newline or a stray tab must not make a scan fail. (Receiving is stricter about the input and refuses a
  serial with whitespace around it, so the clerk looks at a typed serial; what it stores is then already
  trimmed.)

Serials are stored as received, as the label prints them; the normal form is the key they are compared
by, not the stored text. Valid serials are ASCII, where Python's ``str.upper()`` and the database's
``UPPER()`` agree.

This module is pure Python, so that the packing-list parser can use it without Django.
"""

from __future__ import annotations


def normalize_serial(raw: str | None) -> str:
    """The form serials are compared in: without surrounding whitespace, letters in upper case."""
    return (raw or "").strip().upper()
