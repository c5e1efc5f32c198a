"""Forms of the inventory's pages: they check the shape of the input; the rules are the services'.

`ReceiptForm` is the receiving page's form (inventory.receiving_page), on the PM's page and on the bench
alike: the lot, and the serials from the scanner list and the paste box, parsed as the API parses them
(inventory.packing).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.utils.translation import gettext_lazy as _

from inventory.packing import COLUMN_ALIASES, PackingList, column_name, parse_csv, parse_scanner


def _lines(text: str) -> list[str]:
    """The non-blank lines of a text field, as given (a stray space stays, for the parser to name it)."""
    return [line.removesuffix("\r") for line in text.split("\n") if line.strip()]


def looks_like_csv(text: str) -> bool:
    """Whether a pasted text is a packing-list CSV rather than one serial per line.

    A serial never holds "," or ";" (inventory.packing.SERIAL_PATTERN), so a first line with either is a
    CSV header; so is a first line that is a column name alone ("serial", "Serial Number"): a one-column
    CSV.
    """
    first = next(iter(_lines(text)), "")
    if "," in first or ";" in first:
        return True
    return column_name(first) in COLUMN_ALIASES


class ReceiptForm(forms.Form):
    """One receipt on one PO line: the lot and the serials, booked all or nothing by `po_line_receive`.

    The serials come from the scanner list (`scanned`, kept by the page's script, one serial per scan),
    the scanner field itself (`scan`: without the script, Enter sends the form with the last scan in it)
    and the paste box (`paste`): serials one per line, or a packing-list CSV as the API takes it. A CSV
    is booked alone; scanned serials and pasted lines are one list, scans first, in the order given, and
    the parser's row numbers count that list (blank lines left out).
    """

    lot = forms.CharField(
        label=_("Lot code"),
        max_length=64,
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    date_code = forms.CharField(
        label=_("Date code"),
        max_length=16,
        help_text=_("The manufacturer's date code, e.g. 2526"),
        widget=forms.TextInput(attrs={"autocomplete": "off", "spellcheck": "false"}),
    )
    # As the API's ReceiveSerializer: required, two letters; the service checks the code (check_country).
    origin = forms.CharField(
        label=_("Country of origin"),
        max_length=2,
        min_length=2,
        help_text=_("ISO 3166 code of two letters, e.g. TW"),
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "autocapitalize": "characters", "spellcheck": "false", "size": 4}
        ),
    )
    scan = forms.CharField(
        label=_("Scanner"),
        required=False,
        strip=False,
        max_length=200,
        help_text=_("One serial per scan: Enter adds it to the list below."),
        widget=forms.TextInput(
            attrs={
                "autocomplete": "off",
                "inputmode": "text",
                "autocapitalize": "characters",
                "spellcheck": "false",
                "placeholder": _("Scan or type a serial"),
                "data-receipt-scan": "",
            }
        ),
    )
    scanned = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"hidden": "", "data-receipt-scanned": ""})
    )
    paste = forms.CharField(
        label=_("Paste serials or a packing-list CSV"),
        required=False,
        strip=False,
        help_text=_(
            "One serial per line, or the packing list's CSV with a header row: "
            '"serial" and optionally "mpn".'
        ),
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "data-receipt-paste": ""}),
    )

    packing: PackingList

    def clean(self) -> dict[str, Any]:
        data: dict[str, Any] = super().clean() or {}
        scanned = _lines(data.get("scanned", "")) + _lines(data.get("scan", ""))
        paste = data.get("paste", "")
        if looks_like_csv(paste):
            if scanned:
                raise forms.ValidationError(
                    _("Scan serials or paste a packing-list CSV, not both: the CSV is booked alone.")
                )
            self.packing = parse_csv(paste.encode())
        else:
            serials = scanned + _lines(paste)
            if not serials:
                raise forms.ValidationError(_("Scan or paste at least one serial."))
            self.packing = parse_scanner("\n".join(serials))
        return data
