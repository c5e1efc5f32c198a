"""The pure formulas of orders.formulas against the reference's and the seeds' worked figures.

Reference: docs/reference/sizing-and-roi.md (§2 KV table, §4 worked ROI example and H100 buy vs rent,
§5 power). Seeds: 001 (70B VRAM example), 003 (2.9 kW at the wall on a 16 A / 230 V circuit). Each
tolerance is stated next to the figure: ±$0.01 where the reference gives cents, ±$1 for whole dollars,
±0.05 for a figure given to one decimal, ±0.1 point for percentages given to one decimal.

The VRAM sizing and the power budget: test_formulas_vram_power.py.
"""

from __future__ import annotations

import math

import pytest

from orders import formulas
from orders.formulas import (
    HOURS_PER_MONTH,
    PRESETS,
    FormulaInputError,
    PowerInputs,
    ROIInputs,
    SizingInputs,
    roi,
    sizing_inputs_from_preset,
)

# Reference §4 worked example: 8× RTX PRO 6000, K = $100k, P = $1.00 host-side, U = 0.6, 6.3/1.2 kW,
# PUE 1.3, $0.15/kWh, colo $600, f = 0; discount 10 %/yr.
WORKED = {
    "capex": 100_000,
    "gpu_count": 8,
    "price_per_gpu_hour": 1.00,
    "utilization": 0.6,
    "platform_fee": 0.0,
    "power_active_kw": 6.3,
    "power_idle_kw": 1.2,
    "pue": 1.3,
    "energy_price_kwh": 0.15,
    "colo_month": 600,
    "horizon_months": 36,
    "discount_rate_annual": 0.10,
}

# Reference §4 buy vs rent: one H100, K = $35k, T = 36, F = $75, 0.7 kW; PUE 1.3 and $0.15/kWh give the
# reference's e = 0.7 × 1.3 × 0.15 = $0.1365/h.
H100 = {
    "capex": 35_000,
    "gpu_count": 1,
    "price_per_gpu_hour": 2.0,
    "utilization": 0.5,
    "power_active_kw": 0.7,
    "power_idle_kw": 0.1,
    "pue": 1.3,
    "energy_price_kwh": 0.15,
    "colo_month": 75,
    "horizon_months": 36,
}


def worked(**changes) -> formulas.ROIResult:
    return roi(ROIInputs(**{**WORKED, **changes}))


# --- ROI -----------------------------------------------------------------------------------------------


def test_hours_per_month_is_730():
    assert HOURS_PER_MONTH == 730 == 8760 // 12
    assert worked().hours_per_month == 730


def test_worked_example_monthly_figures():
    result = worked()
    assert result.revenue_month == pytest.approx(3504.00, abs=0.01)  # 8 × 730 × 0.6 × 1
    assert result.avg_power_kw == pytest.approx(4.26, abs=0.005)  # 0.6 × 6.3 + 0.4 × 1.2
    assert result.energy_month == pytest.approx(606.41, abs=0.01)
    assert result.opex_month == pytest.approx(606.41 + 600, abs=0.01)
    assert result.net_month == pytest.approx(2297.59, abs=0.01)


def test_worked_example_payback_fails_the_36_month_gate():
    result = worked()
    assert result.payback_months == pytest.approx(43.5, abs=0.05)
    assert result.pays_back is True
    assert result.meets_target is False
    assert worked(target_payback_months=44).meets_target is True


def test_worked_example_npv_over_36_months():
    assert worked().npv == pytest.approx(-28_346, abs=1)


def test_worked_example_npv_and_irr_over_60_months():
    result = worked(horizon_months=60)
    assert result.npv == pytest.approx(9_224, abs=1)
    assert result.irr_annual == pytest.approx(0.143, abs=0.001)


def test_worked_example_breakeven_utilisations():
    result = worked()
    assert result.breakeven_utilization_target == pytest.approx(0.694, abs=0.001)
    assert result.breakeven_utilization_opex == pytest.approx(0.151, abs=0.001)


def test_worked_example_with_a_25_percent_fee():
    # Reference §4: "At f = 0.25, revenue would fall to $2,628."
    assert worked(platform_fee=0.25).revenue_month == pytest.approx(2628.00, abs=0.01)


def test_breakeven_utilisations_solve_their_equations():
    target_u = worked().breakeven_utilization_target
    assert worked(utilization=target_u).payback_months == pytest.approx(36, rel=1e-9)
    opex_u = worked().breakeven_utilization_opex
    assert worked(utilization=opex_u).net_month == pytest.approx(0, abs=1e-6)


def test_irr_is_where_npv_is_zero():
    result = worked(horizon_months=60, residual_value=5_000)
    rate = formulas.monthly_rate(result.irr_annual)
    assert formulas.npv(
        capex=100_000, net_month=result.net_month, months=60, rate_monthly=rate, residual=5_000
    ) == pytest.approx(0, abs=1e-4)
    again = worked(horizon_months=60, residual_value=5_000, discount_rate_annual=result.irr_annual)
    assert again.npv == pytest.approx(0, abs=1e-4)


def test_irr_can_be_negative_when_the_horizon_is_short():
    # Over 36 months the worked example does not recover its capex: the IRR is below zero.
    result = worked()
    irr = result.irr_annual
    assert irr is not None and irr < 0
    # A negative rate is no cost of capital an assessment accepts (ROI_BOUNDS), so check it on the NPV itself.
    at_irr = formulas.npv(
        capex=WORKED["capex"],
        net_month=result.net_month,
        months=WORKED["horizon_months"],
        rate_monthly=formulas.monthly_rate(irr),
        residual=WORKED.get("residual_value", 0.0),
    )
    assert at_irr == pytest.approx(0, abs=1e-4)


def test_monthly_rate_compounds_to_the_annual_rate():
    assert formulas.monthly_rate(0.10) == pytest.approx(1.1 ** (1 / 12) - 1)
    assert formulas.annual_rate(formulas.monthly_rate(0.10)) == pytest.approx(0.10)


def test_no_net_income_means_no_payback():
    result = worked(utilization=0.0)
    assert result.net_month < 0
    assert math.isinf(result.payback_months)
    assert result.pays_back is False
    assert result.meets_target is False
    assert result.irr_annual is None
    assert result.breakeven_month is None


def test_breakeven_utilisation_may_exceed_one_and_is_reported_raw():
    result = worked(price_per_gpu_hour=0.30)
    assert result.breakeven_utilization_target > 1


def test_breakeven_utilisation_is_none_when_utilisation_cannot_help():
    # Each hour at load costs more in energy than it earns.
    result = worked(price_per_gpu_hour=0.05)
    assert result.breakeven_utilization_target is None
    assert result.breakeven_utilization_opex is None


def test_cashflows_are_cumulative_with_the_residual_at_the_horizon():
    result = worked(horizon_months=60, residual_value=10_000)
    assert len(result.cashflows) == 61
    assert result.cashflows[0] == -100_000
    assert result.cashflows[1] == pytest.approx(-100_000 + 2297.589)
    assert result.cashflows[59] == pytest.approx(-100_000 + 59 * 2297.589)
    assert result.cashflows[60] == pytest.approx(-100_000 + 60 * 2297.589 + 10_000)
    # 100000 / 2297.589 = 43.5: the cumulative cash turns positive in month 44.
    assert result.breakeven_month == 44
    assert worked().breakeven_month is None  # not within 36 months


def test_residual_value_raises_npv_by_its_discounted_value():
    plain, with_residual = worked(), worked(residual_value=20_000)
    discount = (1 + formulas.monthly_rate(0.10)) ** 36
    assert with_residual.npv - plain.npv == pytest.approx(20_000 / discount)


@pytest.mark.parametrize(("rent", "expected"), [(2.50, 0.607), (6.00, 0.245)])
def test_h100_buy_vs_rent_breakeven(rent, expected):
    result = roi(ROIInputs(**H100, rent_price_per_gpu_hour=rent))
    # u* = (35000/36 + 75) / (730 × (rent − 0.1365)); reference: 60.7 % and 24.5 %, ±0.1 point.
    assert result.buy_vs_rent_breakeven_utilization == pytest.approx(expected, abs=0.001)


def test_buy_vs_rent_costs_are_equal_at_the_breakeven():
    result = worked(rent_price_per_gpu_hour=1.50)
    u = result.buy_vs_rent_breakeven_utilization
    hours_used = HOURS_PER_MONTH * u
    own = 100_000 / 36 + 600 + hours_used * 6.3 * 1.3 * 0.15
    rent = hours_used * 1.50 * 8  # renting the server's 8 GPUs
    assert own == pytest.approx(rent)


def test_buy_vs_rent_is_absent_without_a_rent_price():
    assert worked().buy_vs_rent_breakeven_utilization is None


def test_roi_inputs_accept_decimals_and_store_floats():
    from decimal import Decimal

    inputs = ROIInputs(**{**WORKED, "capex": Decimal("100000.00"), "pue": Decimal("1.3")})
    assert isinstance(inputs.capex, float)
    assert roi(inputs).net_month == pytest.approx(2297.59, abs=0.01)


# --- Bad input names its field ----------------------------------------------------------------------------

ROI_BASE = WORKED
SIZING_BASE = {"params_b": 8, "layers": 32, "kv_heads": 8, "head_dim": 128, "context_tokens": 4096}
POWER_BASE = {"psu_count": 5, "psu_rating_w": 1600, "redundant": 1, "load_w": 4000}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"capex": 0}, "capex"),
        ({"capex": -1}, "capex"),
        ({"gpu_count": 0}, "gpu_count"),
        ({"gpu_count": 2.5}, "gpu_count"),
        ({"price_per_gpu_hour": -0.1}, "price_per_gpu_hour"),
        ({"utilization": 1.5}, "utilization"),
        ({"utilization": -0.1}, "utilization"),
        ({"platform_fee": 1.0}, "platform_fee"),
        ({"platform_fee": -0.1}, "platform_fee"),
        ({"power_active_kw": -1}, "power_active_kw"),
        ({"power_idle_kw": -1}, "power_idle_kw"),
        ({"power_idle_kw": 7}, "power_idle_kw"),
        ({"energy_price_kwh": -0.01}, "energy_price_kwh"),
        ({"pue": 0.9}, "pue"),
        ({"colo_month": -1}, "colo_month"),
        ({"other_opex_month": -1}, "other_opex_month"),
        ({"horizon_months": 0}, "horizon_months"),
        ({"discount_rate_annual": -1}, "discount_rate_annual"),
        ({"residual_value": -1}, "residual_value"),
        ({"target_payback_months": 0}, "target_payback_months"),
        ({"rent_price_per_gpu_hour": 0}, "rent_price_per_gpu_hour"),
        ({"capex": math.nan}, "capex"),
        ({"price_per_gpu_hour": math.inf}, "price_per_gpu_hour"),
        ({"capex": "lots"}, "capex"),
    ],
)
def test_bad_roi_input_names_its_field(change, field):
    with pytest.raises(FormulaInputError) as caught:
        ROIInputs(**{**ROI_BASE, **change})
    assert caught.value.field == field
    assert isinstance(caught.value, ValueError)
    assert str(caught.value).startswith(f"{field}: ")


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"params_b": 0}, "params_b"),
        ({"params_b": None}, "params_b"),
        ({"layers": None}, "layers"),
        ({"layers": 0}, "layers"),
        ({"kv_heads": None}, "kv_heads"),
        ({"head_dim": None}, "head_dim"),
        ({"head_dim": 0}, "head_dim"),
        ({"mla_latent_dim": 0}, "mla_latent_dim"),
        ({"weights_dtype": "int3"}, "weights_dtype"),
        ({"kv_dtype": "fp12"}, "kv_dtype"),
        ({"context_tokens": 0}, "context_tokens"),
        ({"concurrency": 0}, "concurrency"),
        ({"overhead_fraction": -0.1}, "overhead_fraction"),
        ({"tensor_parallel_gpus": 0}, "tensor_parallel_gpus"),
        ({"tensor_parallel_gpus": 4, "gpu_count": 2}, "gpu_count"),
        ({"gpu_vram_gb": 0}, "gpu_vram_gb"),
    ],
)
def test_bad_sizing_input_names_its_field(change, field):
    with pytest.raises(FormulaInputError) as caught:
        SizingInputs(**{**SIZING_BASE, **change})
    assert caught.value.field == field


def test_missing_architecture_field_says_so():
    with pytest.raises(FormulaInputError, match="missing architecture field") as caught:
        SizingInputs(**{**SIZING_BASE, "head_dim": None})
    assert caught.value.field == "head_dim"


def test_unknown_preset_lists_the_known_ones():
    with pytest.raises(FormulaInputError) as caught:
        sizing_inputs_from_preset("llama-4-9000b", context_tokens=1)
    assert caught.value.field == "model"
    assert "unknown preset 'llama-4-9000b'" in caught.value.message
    assert all(name in caught.value.message for name in PRESETS)


def test_preset_overrides_are_checked():
    with pytest.raises(FormulaInputError) as caught:
        sizing_inputs_from_preset("llama-3.1-8b", context_tokens=1, colour="red")
    assert caught.value.field == "colour"
    with pytest.raises(FormulaInputError) as caught:
        sizing_inputs_from_preset("llama-3.1-8b")
    assert caught.value.field == "context_tokens"
    assert sizing_inputs_from_preset("llama-3.1-8b", context_tokens=1, layers=40).layers == 40


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"psu_count": 0}, "psu_count"),
        ({"psu_rating_w": 0}, "psu_rating_w"),
        ({"redundant": 5}, "redundant"),
        ({"redundant": 6}, "redundant"),
        ({"redundant": -1}, "redundant"),
        ({"load_w": -1}, "load_w"),
        ({"efficiency": 0}, "efficiency"),
        ({"efficiency": 1.1}, "efficiency"),
        ({"headroom": 0}, "headroom"),
        ({"headroom": 1.5}, "headroom"),
        ({"phases": 2}, "phases"),
        ({"circuit_v": 230}, "circuit_a"),
        ({"circuit_a": 16}, "circuit_v"),
        ({"circuit_v": -230, "circuit_a": 16}, "circuit_v"),
        ({"circuit_v": 230, "circuit_a": 0}, "circuit_a"),
        ({"continuous_factor": 0}, "continuous_factor"),
        ({"wall_w": -5}, "wall_w"),
    ],
)
def test_bad_power_input_names_its_field(change, field):
    with pytest.raises(FormulaInputError) as caught:
        PowerInputs(**{**POWER_BASE, **change})
    assert caught.value.field == field


def test_formulas_module_imports_no_django():
    import ast
    from pathlib import Path

    # Every module of the package; its imports of its own modules are the only ones outside the stdlib.
    trees = [ast.parse(path.read_text()) for path in sorted(Path(formulas.__file__).parent.glob("*.py"))]
    imported = {
        alias.name.split(".")[0]
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        node.module.split(".")[0]
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module
        and not node.module.startswith(f"{formulas.__name__}.")
    }
    assert len(trees) > 1
    assert imported <= {"__future__", "math", "dataclasses", "decimal", "enum", "typing"}
