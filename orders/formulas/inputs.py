"""What every formula input passes: the units, the input error, the checks and the bounds.

Standard library only, like the whole package (``orders.formulas``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: H = 730 = 8760/12 hours per month. Vast's host docs use 720; we fix 730 (reference §4).
HOURS_PER_MONTH = 730

GB = 10**9
GIB = 2**30


class FormulaInputError(ValueError):
    """A formula input is missing or out of range; ``field`` names it, ``message`` says the rule."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


# --- Input checks ------------------------------------------------------------------------------------


def _number(field: str, value: Any) -> float:
    """``value`` as a finite float (accepts int, float and Decimal)."""
    if value is None or isinstance(value, bool):
        raise FormulaInputError(field, f"must be a number; got {value!r}.")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise FormulaInputError(field, f"must be a number; got {value!r}.") from None
    if not math.isfinite(number):
        raise FormulaInputError(field, f"must be a finite number; got {value!r}.")
    return number


def _integer(field: str, value: Any, *, minimum: int) -> int:
    number = _number(field, value)
    if not number.is_integer():
        raise FormulaInputError(field, f"must be a whole number; got {value!r}.")
    if number < minimum:
        raise FormulaInputError(field, f"must be at least {minimum}; got {value!r}.")
    return int(number)


def _at_least(field: str, value: Any, minimum: float) -> float:
    number = _number(field, value)
    if number < minimum:
        raise FormulaInputError(field, f"must be at least {minimum:g}; got {number:g}.")
    return number


def _positive(field: str, value: Any) -> float:
    number = _number(field, value)
    if number <= 0:
        raise FormulaInputError(field, f"must be greater than 0; got {number:g}.")
    return number


def _fraction(field: str, value: Any, *, upper_open: bool = False, lower_open: bool = False) -> float:
    number = _number(field, value)
    low_ok = number > 0 if lower_open else number >= 0
    high_ok = number < 1 if upper_open else number <= 1
    if not (low_ok and high_ok):
        interval = f"{'(' if lower_open else '['}0, 1{')' if upper_open else ']'}"
        raise FormulaInputError(field, f"must be within {interval}; got {number:g}.")
    return number


def _set(obj: Any, **values: Any) -> None:
    """Store normalised values on a frozen dataclass from ``__post_init__``."""
    for name, value in values.items():
        object.__setattr__(obj, name, value)


@dataclass(frozen=True)
class Bound:
    """The range a real order's input lies in, with the reason for the limit.

    Every input of the ROI gate and of the workload has one. The formulas check them (so the management
    commands refuse the same values), and the models (validators and CheckConstraints), the API serializers
    and the admin forms read the same table, so no layer accepts what another refuses. Within the bounds
    every formula result fits the fields that store it (tests/orders/test_roi_bounds.py).
    """

    low: float
    high: float
    reason: str
    low_open: bool = False
    high_open: bool = False
    integer: bool = False

    def describe(self) -> str:
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"{left}{self.low:,g}, {self.high:,g}{right}"

    def check(self, field: str, value: Any) -> float:
        number = _number(field, value)
        if self.integer and not number.is_integer():
            raise FormulaInputError(field, f"must be a whole number; got {value!r}.")
        too_low = number <= self.low if self.low_open else number < self.low
        too_high = number >= self.high if self.high_open else number > self.high
        if too_low or too_high:
            raise FormulaInputError(field, f"must be within {self.describe()}; got {number:g}.")
        return number
