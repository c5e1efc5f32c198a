"""Every ROI and workload input has a bound no real order leaves; within it nothing crashes (issue #16, 4).

The audit found: a horizon of 162 months or more divided by an underflowed 0 in the IRR search (preview, save
and `manage.py roi`); a high return (512 GPUs, or 50 per GPU-hour) overflowed the stored IRR's digits (500);
and a gpu_count ≥ 2^31 overflowed PostgreSQL's integer. The bounds live in `orders.formulas` (ROI_BOUNDS,
SIZING_BOUNDS) and are checked by the formulas, the models (validators and CheckConstraints), the API and
the commands alike.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orders.choices import OrderStatus
from orders.formulas import ROI_BOUNDS, SIZING_BOUNDS, ROIInputs, SizingInputs, roi, sizing
from orders.models import ROI_STORED_INPUTS, ROIAssessment, Workload
from orders.services.roi import _decimal
from tests import factories

WORKED = {
    "capex": "100000",
    "gpu_count": 8,
    "price_per_gpu_hour": "1.00",
    "utilization": "0.6",
    "platform_fee": "0",
    "power_active_kw": "6.3",
    "power_idle_kw": "1.2",
    "energy_price_kwh": "0.15",
    "pue": "1.3",
    "colo_month": "600",
    "horizon_months": 36,
    "discount_rate_annual": "0.10",
}
ROI_ARGS = [
    "--capex", "100000", "--gpus", "8", "--price", "1.00", "--utilization", "0.6", "--platform-fee", "0",
    "--power-active-kw", "6.3", "--power-idle-kw", "1.2", "--pue", "1.3", "--energy-price", "0.15",
    "--colo", "600", "--horizon", "36", "--discount-rate", "0.10",
]  # fmt: skip
#: The former crash points: (API change, command option, value).
CRASHES = [
    ({"horizon_months": 162}, "--horizon", "162"),
    ({"horizon_months": 600}, "--horizon", "600"),
    ({"price_per_gpu_hour": "50"}, "--price", "50"),
    ({"price_per_gpu_hour": "100", "gpu_count": 64, "capex": "0.01"}, "--price", "100"),
]
#: Decimal places of each input as the API and the model take it (integers: 0).
PLACES = {
    "capex": 2, "gpu_count": 0, "price_per_gpu_hour": 4, "utilization": 4, "platform_fee": 4,
    "power_active_kw": 3, "power_idle_kw": 3, "energy_price_kwh": 4, "pue": 2, "colo_month": 2,
    "other_opex_month": 2, "horizon_months": 0, "discount_rate_annual": 4, "residual_value": 2,
    "rent_price_per_gpu_hour": 4,
}  # fmt: skip
#: Each output and the decimals the assessment stores it with (the service's quantize).
OUTPUT_PLACES = {
    "revenue_month": "0.01",
    "energy_month": "0.01",
    "net_month": "0.01",
    "payback_months": "0.01",
    "npv": "0.01",
    "irr_annual": "0.0001",
    "breakeven_utilization_target": "0.0001",
    "breakeven_utilization_opex": "0.0001",
    "buy_vs_rent_breakeven_utilization": "0.0001",
}


@pytest.fixture
def order(tenants):
    return factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)


def _preview(client, body):
    return client.post("/api/v1/roi-assessments/preview/", body, format="json")


def _save(client, order, body):
    return client.post(f"/api/v1/orders/{order.pk}/roi-assessments/", body, format="json")


# --- the former crash points, through every interface ---------------------------------------------------


@pytest.mark.parametrize(("change", "option", "value"), CRASHES)
def test_former_crash_points_preview_and_save(pm_client, order, change, option, value):
    preview = _preview(pm_client, {**WORKED, **change})
    assert preview.status_code == 200, preview.content
    saved = _save(pm_client, order, {**WORKED, **change})
    assert saved.status_code == 201, saved.content
    assert preview.json()["net_month"] == pytest.approx(float(saved.json()["net_month"]), abs=0.01)


def test_a_long_horizon_has_its_npv_and_irr(pm_client, order):
    body = _preview(pm_client, {**WORKED, "horizon_months": 600}).json()
    assert len(body["cashflows"]) == 601
    # 2,297.59 a month on 100,000 for 50 years is nearly a perpetuity: IRR_m ≈ Net/K.
    assert body["irr_annual"] == pytest.approx((1 + 2297.59 / 100_000) ** 12 - 1, abs=1e-4)
    saved = _save(pm_client, order, {**WORKED, "horizon_months": 162}).json()
    assert Decimal(saved["irr_annual"]) > 0


def test_a_high_return_stores_its_irr(pm_client, order):
    saved = _save(pm_client, order, {**WORKED, "price_per_gpu_hour": "50"})
    assert saved.status_code == 201
    assert Decimal(saved.json()["irr_annual"]) > 100_000  # an annual IRR over 10,000,000 %, stored in full


@pytest.mark.parametrize(("change", "option", "value"), CRASHES)
def test_former_crash_points_on_the_pm_roi_page(client, tenants, pm_client, order, change, option, value):
    assert _save(pm_client, order, {**WORKED, **change}).status_code == 201
    client.force_login(tenants.pm)
    page = client.get(f"/pm/orders/{order.pk}/roi/")
    assert page.status_code == 200
    assert "<svg" in page.content.decode()


@pytest.mark.parametrize(
    ("change", "field"), [({"gpu_count": 512}, "gpu_count"), ({"gpu_count": 2**31}, "gpu_count")]
)
def test_gpu_counts_beyond_a_server_are_a_400(pm_client, order, change, field):
    for response in (
        _preview(pm_client, {**WORKED, **change}),
        _save(pm_client, order, {**WORKED, **change}),
    ):
        assert response.status_code == 400
        assert field in response.json()
    assert not ROIAssessment.objects.exists()


@pytest.mark.parametrize(("change", "option", "value"), CRASHES)
def test_former_crash_points_in_the_command(change, option, value):
    args = list(ROI_ARGS)
    args[args.index(option) + 1] = value
    if "gpu_count" in change:
        args[args.index("--gpus") + 1] = "64"
        args[args.index("--capex") + 1] = "0.01"
    out = StringIO()
    call_command("roi", *args, "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["net_month"] > 0


@pytest.mark.parametrize("gpus", ["512", str(2**31)])
def test_the_command_refuses_gpu_counts_beyond_a_server(gpus):
    args = list(ROI_ARGS)
    args[args.index("--gpus") + 1] = gpus
    with pytest.raises(CommandError, match=r"--gpus \(gpu_count\): must be within \[1, 64\]"):
        call_command("roi", *args, stdout=StringIO())


# --- within the bounds nothing raises and every result fits its field -------------------------------------


def _in(name: str) -> st.SearchStrategy:
    bound = ROI_BOUNDS[name]
    if bound.integer:
        return st.integers(min_value=int(bound.low), max_value=int(bound.high))
    return st.floats(
        min_value=bound.low,
        max_value=bound.high,
        exclude_min=bound.low_open,
        exclude_max=bound.high_open,
        allow_nan=False,
    )


@st.composite
def roi_inputs(draw):
    values = {
        name: draw(_in(name))
        for name in ROI_BOUNDS
        if name not in {"power_idle_kw", "rent_price_per_gpu_hour"}
    }
    values["power_idle_kw"] = draw(st.floats(min_value=0, max_value=values["power_active_kw"]))
    values["rent_price_per_gpu_hour"] = draw(st.none() | _in("rent_price_per_gpu_hour"))
    return ROIInputs(**values)


@settings(deadline=None, max_examples=300)
@given(inputs=roi_inputs())
def test_within_the_bounds_roi_never_raises_and_fits_the_stored_fields(inputs):
    result = roi(inputs)
    for name, places in OUTPUT_PLACES.items():
        value = getattr(result, name)
        assert value is None or not math.isnan(value)
        stored = _decimal(value, places)
        if stored is not None:
            ROIAssessment._meta.get_field(name).run_validators(stored)  # max_digits and decimal places
    assert all(math.isfinite(cash) for cash in result.cashflows)
    assert result.pays_back == math.isfinite(result.payback_months)


@settings(deadline=None, max_examples=60)
@given(
    capex=_in("capex"),
    net=st.floats(min_value=1e-9, max_value=5e6),
    horizon=_in("horizon_months"),
)
def test_the_irr_search_never_overflows_at_any_horizon(capex, net, horizon):
    inputs = ROIInputs(
        capex=capex, gpu_count=1, price_per_gpu_hour=0, utilization=0, power_active_kw=0, power_idle_kw=0,
        energy_price_kwh=0, colo_month=0, horizon_months=horizon, residual_value=0,
    )  # fmt: skip
    result = roi(inputs)
    assert result.irr_annual is None  # no positive flow: no IRR, and no ZeroDivisionError on the way


def _sizing_in(name: str) -> st.SearchStrategy:
    bound = SIZING_BOUNDS[name]
    if bound.integer:
        return st.integers(min_value=int(bound.low), max_value=int(bound.high))
    return st.floats(min_value=bound.low, max_value=bound.high, exclude_min=bound.low_open, allow_nan=False)


@settings(deadline=None, max_examples=150)
@given(
    values=st.fixed_dictionaries(
        {name: _sizing_in(name) for name in ("params_b", "layers", "kv_heads", "head_dim", "context_tokens")}
        | {"concurrency": _sizing_in("concurrency"), "overhead_fraction": _sizing_in("overhead_fraction")}
    ),
    tp=_sizing_in("tensor_parallel_gpus"),
    vram=_sizing_in("gpu_vram_gb"),
)
def test_within_the_bounds_sizing_never_raises(values, tp, vram):
    result = sizing(SizingInputs(**values, tensor_parallel_gpus=tp, gpu_count=tp, gpu_vram_gb=vram))
    assert math.isfinite(result.total_gb) and math.isfinite(result.per_gpu_gb)


# --- just outside the bounds: a 400 naming the field -------------------------------------------------------


def _outside() -> list[tuple[str, str | int]]:
    cases = []
    for name, places in PLACES.items():
        bound = ROI_BOUNDS[name]
        step = Decimal(1).scaleb(-places)
        low, high = Decimal(str(bound.low)), Decimal(str(bound.high))
        below = low if bound.low_open else low - step
        above = high if bound.high_open else high + step
        for value in (below, above):
            cases.append((name, int(value) if places == 0 else str(value)))
    return cases


@pytest.mark.parametrize(("field", "value"), _outside())
def test_just_outside_a_bound_is_a_400_naming_the_field(pm_client, order, field, value):
    body = {**WORKED, field: value}
    if field == "power_active_kw":
        body["power_idle_kw"] = "0"
    for response in (_preview(pm_client, body), _save(pm_client, order, body)):
        assert response.status_code == 400, (field, value, response.content)
        assert field in response.json()
    assert not ROIAssessment.objects.exists()


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(sorted(PLACES)), excess=st.integers(min_value=1, max_value=10**12))
def test_any_value_beyond_a_bound_is_a_400_naming_the_field(pm_client, field, excess):
    bound = ROI_BOUNDS[field]
    value = Decimal(str(bound.high)) + Decimal(excess).scaleb(-PLACES[field])
    response = _preview(pm_client, {**WORKED, field: int(value) if PLACES[field] == 0 else str(value)})
    assert response.status_code == 400
    assert field in response.json()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("layers", 2**31),
        ("layers", 10_001),
        ("kv_heads", 4_097),
        ("head_dim", 65_537),
        ("context_tokens", 100_000_001),
        ("concurrency", 1_000_001),
        ("tensor_parallel_gpus", 1_025),
        ("params_b", "100000.001"),
        ("overhead_fraction", "1.001"),
    ],
)
def test_workload_beyond_a_bound_is_a_400_naming_the_field(pm_client, order, field, value):
    body = {
        "params_b": "8",
        "layers": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "context_tokens": 8192,
        field: value,
    }
    response = pm_client.put(f"/api/v1/orders/{order.pk}/workload/", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()
    assert not Workload.objects.exists()


# --- the same bounds in the model and the database ------------------------------------------------------


def _assessment(order, **change) -> ROIAssessment:
    values = {
        name: Decimal(str(v)) if not isinstance(v, int) else v
        for name, v in {**WORKED, "target_payback_months": "36", **change}.items()
    }
    return ROIAssessment(
        order=order, version=1, hours_per_month=730, revenue_month=0, energy_month=0, net_month=0, npv=0,
        **values,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("field", "value"),
    [("gpu_count", 65), ("gpu_count", 2**31 - 1), ("price_per_gpu_hour", "100.0001"), ("pue", "3.01")],
)
def test_the_database_refuses_values_beyond_a_bound(order, field, value):
    assessment = _assessment(order, **{field: value})
    with pytest.raises(ValidationError) as caught:
        assessment.full_clean()
    assert field in caught.value.message_dict
    with pytest.raises(IntegrityError, match=f"orders_roiassessment_{field}_range"), transaction.atomic():
        assessment.save()


def test_every_stored_input_has_a_bound_and_a_constraint():
    names = {constraint.name for constraint in ROIAssessment._meta.constraints}
    for field in ROI_STORED_INPUTS:
        assert field in ROI_BOUNDS
        assert f"orders_roiassessment_{field}_range" in names
    workload_names = {constraint.name for constraint in Workload._meta.constraints}
    for field in ("params_b", "layers", "kv_heads", "head_dim", "context_tokens", "concurrency"):
        assert f"orders_workload_{field}_range" in workload_names
