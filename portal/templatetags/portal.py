"""Template helpers of the portal pages."""

from __future__ import annotations

from decimal import Decimal

from django import template
from django.template.defaultfilters import floatformat

register = template.Library()


@register.filter
def percent(value: float | Decimal | None, digits: int = 1) -> str:
    """A fraction as a percentage in the page's language: 0.4312 → "43.1 %" ("43,1 %" in German)."""
    if value is None or value == "":
        return "—"
    return f"{floatformat(Decimal(str(value)) * 100, digits)} %"
