"""The failure-rate formulas of the fleet's quality: pure, standard library only, like ``orders.formulas``.

A failure rate here is a binomial proportion: of ``units`` put in service, ``failures`` failed (each unit
counted once, whatever number of findings it had). Eight units with three failures is a rate of 37.5 %, but
with an interval so wide that eight more units could halve it; the flag is raised on the interval's lower
bound, so a small sample never raises it by chance.

The interval is Wilson's score interval:

    centre = (p + z²/2n) / (1 + z²/n)
    half   = z / (1 + z²/n) · sqrt(p(1-p)/n + z²/4n²)

Sources:
- E. B. Wilson, "Probable Inference, the Law of Succession, and Statistical Inference", Journal of the
  American Statistical Association 22 (158), 1927, pp. 209–212, doi:10.1080/01621459.1927.10502953.
- L. D. Brown, T. T. Cai and A. DasGupta, "Interval Estimation for a Binomial Proportion", Statistical
  Science 16 (2), 2001, pp. 101–133, doi:10.1214/ss/1009213286: the Wald interval p ± z·sqrt(p(1-p)/n)
  behaves badly for small n and p near 0 (it gives [0, 0] for 0 failures); they recommend Wilson's for n < 40.

z = 1.959964 is the 97.5 % quantile of the standard normal distribution (a two-sided 95 % interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The two-sided 95 % normal quantile, Φ⁻¹(0.975).
Z_95 = 1.959963984540054

#: Seconds in a Julian year (365.25 days): unit-years are service time / YEAR_S.
YEAR_S = 365.25 * 24 * 3600


@dataclass(frozen=True)
class Interval:
    """A failure rate and its 95 % Wilson interval, as fractions (0.375, not 37.5)."""

    rate: float
    low: float
    high: float


def wilson_interval(failures: int, units: int, *, z: float = Z_95) -> Interval | None:
    """The rate ``failures / units`` with its Wilson score interval; None for no units (no rate at all).

    >>> wilson_interval(3, 8)
    Interval(rate=0.375, low=0.136844..., high=0.694257...)
    """
    if units < 0 or failures < 0:
        raise ValueError("failures and units are counts: never negative")
    if failures > units:
        raise ValueError(f"{failures} failures of {units} units: a unit fails once")
    if units == 0:
        return None
    n = units
    p = failures / n
    z2 = z * z
    denominator = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # max/min only against floating-point dust at the ends (0 failures gives a low of ~1e-17).
    return Interval(rate=p, low=max(0.0, centre - half), high=min(1.0, centre + half))


def is_flagged(interval: Interval | None, *, units: int, threshold: float, min_units: int) -> bool:
    """The flag: the interval's lower bound exceeds ``threshold`` and at least ``min_units`` are behind it.

    The lower bound, not the rate: 1 of 8 (12.5 %) has a lower bound of 2.2 %, under a 5 % threshold; 3 of
    8 has 13.7 %, over it."""
    return interval is not None and units >= min_units and interval.low > threshold


def unit_years(service_seconds: float) -> float:
    """Service time in years (a Julian year)."""
    return service_seconds / YEAR_S
