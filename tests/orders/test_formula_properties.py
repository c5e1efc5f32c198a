"""Properties of orders.formulas that must hold for any valid input (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from orders.formulas import (
    PowerInputs,
    ROIInputs,
    SizingInputs,
    monthly_rate,
    npv,
    power_budget,
    roi,
    sizing,
)

fractions = st.floats(min_value=0, max_value=1, allow_nan=False)
prices = st.floats(min_value=0.01, max_value=20, allow_nan=False)


def roi_inputs(**values) -> ROIInputs:
    base = {
        "capex": 100_000,
        "gpu_count": 8,
        "price_per_gpu_hour": 1.0,
        "utilization": 0.6,
        "power_active_kw": 6.3,
        "power_idle_kw": 1.2,
        "pue": 1.3,
        "energy_price_kwh": 0.15,
        "colo_month": 600,
    }
    return ROIInputs(**{**base, **values})


@settings(deadline=None, max_examples=60)
@given(low=fractions, high=fractions, price=prices)
def test_payback_does_not_rise_with_utilisation(low, high, price):
    low, high = sorted((low, high))
    slow = roi(roi_inputs(utilization=low, price_per_gpu_hour=price))
    busy = roi(roi_inputs(utilization=high, price_per_gpu_hour=price))
    # A positive net means an hour at load earns more than its extra energy, so more work helps. The
    # factor allows for float rounding between neighbouring inputs, nothing more.
    assume(slow.net_month > 0)
    assert busy.payback_months <= slow.payback_months * (1 + 1e-12)


@settings(deadline=None, max_examples=60)
@given(low=prices, high=prices, utilization=fractions)
def test_payback_does_not_rise_with_price(low, high, utilization):
    low, high = sorted((low, high))
    cheap = roi(roi_inputs(utilization=utilization, price_per_gpu_hour=low))
    dear = roi(roi_inputs(utilization=utilization, price_per_gpu_hour=high))
    assume(cheap.net_month > 0)
    assert dear.payback_months <= cheap.payback_months * (1 + 1e-12)


@settings(deadline=None, max_examples=60)
@given(utilization=fractions, price=prices, horizon=st.integers(min_value=1, max_value=120))
def test_npv_is_zero_at_the_irr(utilization, price, horizon):
    result = roi(roi_inputs(utilization=utilization, price_per_gpu_hour=price, horizon_months=horizon))
    assume(result.irr_annual is not None and -0.99 < result.irr_annual < 100)
    inputs = roi_inputs(utilization=utilization, price_per_gpu_hour=price, horizon_months=horizon)
    # The NPV itself, at any IRR (an assessment accepts discount rates of 0–100 % only, ROI_BOUNDS).
    again = npv(
        capex=inputs.capex,
        net_month=result.net_month,
        months=horizon,
        rate_monthly=monthly_rate(result.irr_annual),
        residual=inputs.residual_value,
    )
    assert again == pytest.approx(0, abs=1e-3 * 100_000)


architectures = st.fixed_dictionaries(
    {
        "params_b": st.floats(min_value=0.5, max_value=700),
        "layers": st.integers(min_value=1, max_value=128),
        "kv_heads": st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
        "head_dim": st.sampled_from([64, 96, 128, 256]),
        "kv_dtype": st.sampled_from(["fp16", "fp8", "fp32", "q8_0"]),
        "mla_latent_dim": st.sampled_from([None, 576]),
    }
)


@settings(deadline=None, max_examples=60)
@given(
    architecture=architectures,
    context=st.integers(min_value=1, max_value=1_048_576),
    concurrency=st.integers(min_value=1, max_value=64),
    factor=st.integers(min_value=1, max_value=16),
)
def test_kv_cache_is_linear_in_context_and_concurrency(architecture, context, concurrency, factor):
    base = sizing(SizingInputs(**architecture, context_tokens=context, concurrency=concurrency))
    longer = sizing(SizingInputs(**architecture, context_tokens=context * factor, concurrency=concurrency))
    wider = sizing(SizingInputs(**architecture, context_tokens=context, concurrency=concurrency * factor))
    assert longer.kv_cache_gb == pytest.approx(base.kv_cache_gb * factor, rel=1e-12)
    assert wider.kv_cache_gb == pytest.approx(base.kv_cache_gb * factor, rel=1e-12)
    assert longer.weights_gb == base.weights_gb


@settings(deadline=None, max_examples=60)
@given(
    count=st.integers(min_value=2, max_value=12),
    rating=st.floats(min_value=100, max_value=5000),
    data=st.data(),
)
def test_more_redundancy_means_less_usable_power(count, rating, data):
    fewer = data.draw(st.integers(min_value=0, max_value=count - 2))
    more = data.draw(st.integers(min_value=fewer + 1, max_value=count - 1))
    low = power_budget(PowerInputs(psu_count=count, psu_rating_w=rating, redundant=more, load_w=1000))
    high = power_budget(PowerInputs(psu_count=count, psu_rating_w=rating, redundant=fewer, load_w=1000))
    assert low.usable_w < high.usable_w
    assert low.psu_margin_w < high.psu_margin_w
    assert low.installed_w == high.installed_w


@settings(deadline=None, max_examples=60)
@given(
    load=st.floats(min_value=0, max_value=20_000, allow_nan=False),
    efficiency=st.floats(min_value=0.5, max_value=1.0),
    other=st.floats(min_value=0.5, max_value=1.0),
)
def test_efficiency_moves_only_the_wall_power(load, efficiency, other):
    # A PSU is rated by its DC output: the PSU check sees the DC load, the circuit the wall power.
    base = {
        "psu_count": 5,
        "psu_rating_w": 1600,
        "redundant": 1,
        "load_w": load,
        "circuit_v": 230,
        "circuit_a": 16,
    }
    one = power_budget(PowerInputs(**base, efficiency=efficiency))
    two = power_budget(PowerInputs(**base, efficiency=other))
    assert one.psu_load_w == two.psu_load_w == load
    assert (one.psu_margin_w, one.psu_ok) == (two.psu_margin_w, two.psu_ok)
    assert one.wall_power_w == pytest.approx(load / efficiency)
    assert one.wall_power_w >= one.psu_load_w
