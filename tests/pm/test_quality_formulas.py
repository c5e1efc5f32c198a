"""The failure-rate formulas (pm/quality/formulas.py) against values computed by hand.

Wilson's interval for 3 failures of 8 units, z = 1.959964 (z² = 3.841459):
  p = 0.375, z²/n = 0.480182, denominator = 1.480182
  centre = (0.375 + 0.240091) / 1.480182 = 0.415551
  half = 1.959964 / 1.480182 · sqrt(0.375 · 0.625 / 8 + 3.841459 / 256)
       = 1.324140 · sqrt(0.029297 + 0.015006) = 1.324140 · 0.210482 = 0.278707
  → [0.136844, 0.694258]
1 of 8: p = 0.125, centre = (0.125 + 0.240091) / 1.480182 = 0.246653,
  half = 1.324140 · sqrt(0.013672 + 0.015006) = 1.324140 · 0.169346 = 0.224238 → [0.022415, 0.470891]
0 of 8: centre = half = 0.162204 → [0, 0.324408]
"""

import math

import pytest

from pm.quality.formulas import YEAR_S, Interval, is_flagged, unit_years, wilson_interval


@pytest.mark.parametrize(
    ("failures", "units", "low", "high"),
    [(3, 8, 0.136844, 0.694258), (1, 8, 0.022415, 0.470891), (0, 8, 0.0, 0.324408), (8, 8, 0.675592, 1.0)],
)
def test_wilson_interval_matches_hand_computed_values(failures, units, low, high):
    interval = wilson_interval(failures, units)
    assert interval is not None
    assert interval.rate == failures / units
    assert interval.low == pytest.approx(low, abs=5e-6)
    assert interval.high == pytest.approx(high, abs=5e-6)


def test_a_larger_sample_narrows_the_interval_around_the_same_rate():
    small, large = wilson_interval(3, 8), wilson_interval(300, 800)
    assert small is not None and large is not None
    assert small.rate == large.rate
    assert large.high - large.low < (small.high - small.low) / 5
    # At n = 800 Wilson is close to the normal approximation p ± z·sqrt(p(1-p)/n).
    wald = 1.959964 * math.sqrt(0.375 * 0.625 / 800)
    assert large.low == pytest.approx(0.375 - wald, abs=2e-3)


def test_no_units_is_no_rate_and_impossible_counts_are_refused():
    assert wilson_interval(0, 0) is None
    with pytest.raises(ValueError, match="a unit fails once"):
        wilson_interval(9, 8)
    with pytest.raises(ValueError, match="never negative"):
        wilson_interval(-1, 8)


def test_the_flag_reads_the_lower_bound_and_the_minimum_units():
    three, one = wilson_interval(3, 8), wilson_interval(1, 8)
    assert is_flagged(three, units=8, threshold=0.05, min_units=8)
    # 1 of 8 is a 12.5 % rate, but its lower bound (2.2 %) is under the threshold: too few units to tell.
    assert not is_flagged(one, units=8, threshold=0.05, min_units=8)
    # 3 of 8 under a minimum of 10 units: not enough behind it.
    assert not is_flagged(three, units=8, threshold=0.05, min_units=10)
    assert not is_flagged(None, units=0, threshold=0.0, min_units=0)
    assert not is_flagged(Interval(rate=0.5, low=0.05, high=0.9), units=8, threshold=0.05, min_units=8)


def test_unit_years_are_julian_years():
    assert unit_years(YEAR_S) == 1.0
    assert unit_years(2 * 365.25 * 86400) == pytest.approx(2.0)
