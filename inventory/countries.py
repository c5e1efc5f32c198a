"""ISO 3166-1 alpha-2 country codes: the one list that suppliers, lot origins and sites are checked against.

The codes come from Babel (already a dependency, for the German catalogue), which ships the Unicode CLDR's
territory names. CLDR names more regions than ISO 3166-1 assigns, and they are taken out here: the
three-digit regions ("001", "150"), the codes ISO 3166 only reserves exceptionally (AC, CP, CQ, DG, EA, EU,
EZ, IC, TA, UN) and the private-use codes CLDR gives meanings to (QO, XA, XB, XK, ZZ). What is left is the
249 assigned codes; a new CLDR release that adds or withdraws a country changes the list with Babel, and
tests/inventory/test_countries.py says so when that count moves. EU membership is a separate, hand-kept
set (inventory/eu.py).
"""

from __future__ import annotations

from functools import cache

import babel

from inventory.eu import normalize_country
from werkbank.errors import InvalidInput

#: CLDR territories that are no assigned ISO 3166-1 alpha-2 code.
NOT_ASSIGNED = frozenset(
    {"AC", "CP", "CQ", "DG", "EA", "EU", "EZ", "IC", "TA", "UN", "QO", "XA", "XB", "XK", "ZZ"}
)


@cache
def iso_3166_alpha2() -> frozenset[str]:
    """Every assigned ISO 3166-1 alpha-2 code (loaded once per process)."""
    territories = babel.Locale("en").territories
    return (
        frozenset(code for code in territories if len(code) == 2 and code.isascii() and code.isalpha())
        - NOT_ASSIGNED
    )


def is_country(code: str) -> bool:
    """Whether `code` (already upper case, see inventory.eu.normalize_country) is an assigned country code."""
    return code in iso_3166_alpha2()


def check_country(field: str, code: str) -> str:
    """`code` normalised (inventory.eu.normalize_country), or a 400 on `field` if it is no country code."""
    normalized = normalize_country(code)
    if not is_country(normalized):
        raise InvalidInput(field, f"must be an ISO 3166-1 alpha-2 country code such as DE; got {code!r}.")
    return normalized
