"""Numbers and lists in the active language, as the finding sentences (`burnin.findings_text`,
`burnin.findings_text_drift`) write them: rounded as the analysis rounds, with the language's decimal
comma and thousands separator."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.utils import formats
from django.utils.text import get_text_list
from django.utils.translation import gettext as _

#: A finding's params: the figures its sentence is made of (`Finding.params`).
Params = Mapping[str, Any]


def _fixed(value: Any, digits: int, *, grouping: bool = False) -> str:
    """`value` rounded to `digits` decimals (Python rounds; Django's number_format would cut), localized."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"not a number: {value!r}")
    return formats.number_format(f"{value:.{digits}f}", decimal_pos=digits, force_grouping=grouping)


def _count(value: Any) -> str:
    """A whole number with the language's thousands separator (10,000 / 10.000)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"not a count: {value!r}")
    return _fixed(value, 0, grouping=True)


def _plain(value: Any) -> str:
    """At most two decimals, no trailing zeros: 55, 27.5, 12.75 (`burnin.analysis.common.plain`)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return _fixed(value, len(text.partition(".")[2]))


def _deg(value: Any) -> str:
    """A temperature as `burnin.analysis.common.deg` writes it: whole degrees, else one decimal."""
    if value is None:
        return "? °C"
    return f"{_fixed(value, 0 if float(value).is_integer() else 1)} °C"


def _and(items: Sequence[str]) -> str:
    return str(get_text_list(list(items), _("and")))
