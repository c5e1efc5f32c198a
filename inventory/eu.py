"""EU membership, in one place.

The 27 member states as ISO 3166-1 alpha-2 codes (Council of the EU / europa.eu, "EU countries", since the
United Kingdom left on 2020-01-31). Greece is "GR" in ISO 3166 (the EU's own "EL" is accepted as an alias).
Update this set, and only this set, when membership changes.
"""

from __future__ import annotations

EU_MEMBER_STATES: frozenset[str] = frozenset(
    {
        "AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT",
        "LU", "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE",
    }
)  # fmt: skip
_ALIASES = {"EL": "GR"}


def normalize_country(code: str) -> str:
    """Upper-case a two-letter country code and map EU-specific aliases to ISO 3166."""
    code = (code or "").strip().upper()
    return _ALIASES.get(code, code)


def is_eu(country: str) -> bool:
    """Whether a supplier in this country ships from inside the EU."""
    return normalize_country(country) in EU_MEMBER_STATES
