"""Pure formulas of the order gates: ROI, VRAM sizing and the power budget.

Standard library only, no Django: the services, the management commands, the PM page and the tests all
call these functions, and the Django layer converts the floats to ``Decimal`` when it stores them. The
math is done in floats because the IRR needs root finding.

Sources: ``docs/reference/sizing-and-roi.md`` (§1 sizing, §2 architectures, §4 ROI, §5 power) and the
seeds 001 (VRAM example, buy vs rent) and 003 (wall power against a 16 A / 230 V circuit).

Units: money in the order's currency, power in kW (ROI) or W (power budget), GB = 10**9 bytes and
GiB = 2**30 bytes, months of H = 730 hours.

Every input dataclass checks itself on construction and raises :class:`FormulaInputError` naming the
field, so an inputs object that exists is valid.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, fields
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


# --- Bounds of every input -------------------------------------------------------------------------------


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


#: Bounds of the ROI inputs: one server over its horizon, in the order's currency (EUR-sized figures).
ROI_BOUNDS: dict[str, Bound] = {
    "capex": Bound(
        0,
        10_000_000,
        low_open=True,
        reason="one server with 64 of today's dearest GPUs costs under 5 million",
    ),
    "gpu_count": Bound(
        1, 64, integer=True, reason="no server holds more than 64 GPUs (HGX boards 8, the densest chassis 20)"
    ),
    "price_per_gpu_hour": Bound(
        0, 100, reason="GPU-hours rent for 0.10–10; 100 is ten times the dearest list price"
    ),
    "utilization": Bound(0, 1, reason="a fraction of the month"),
    "platform_fee": Bound(0, 1, high_open=True, reason="a fraction of revenue; 1 would leave nothing"),
    "power_active_kw": Bound(0, 100, reason="one server draws under 20 kW; 100 kW is a whole dense rack"),
    "power_idle_kw": Bound(0, 100, reason="as power_active_kw, and never above it"),
    "energy_price_kwh": Bound(0, 10, reason="the dearest retail kWh in Europe costs under 1"),
    "pue": Bound(1, 3, reason="1 is the ideal; 3 is a very poor machine room"),
    "colo_month": Bound(0, 1_000_000, reason="a whole cage costs less per month"),
    "other_opex_month": Bound(0, 1_000_000, reason="as colo_month"),
    "horizon_months": Bound(1, 600, integer=True, reason="50 years, longer than any server lives"),
    "discount_rate_annual": Bound(
        0,
        1,
        reason="a cost of capital from 0 to 100 % a year; below 0 the NPV of a long horizon grows without "
        "bound (−50 % over 315 months is 10¹² on a capex of 1)",
    ),
    "residual_value": Bound(0, 10_000_000, reason="as capex"),
    "target_payback_months": Bound(0, 600, low_open=True, reason="as horizon_months"),
    "rent_price_per_gpu_hour": Bound(0, 100, low_open=True, reason="as price_per_gpu_hour"),
}

#: Bounds of the workload (VRAM sizing) inputs. The largest public models have ~2,000 B parameters,
#: 128 layers, 128 KV heads of 256, and contexts of 10 M tokens.
SIZING_BOUNDS: dict[str, Bound] = {
    "params_b": Bound(0, 100_000, low_open=True, reason="50 times the largest public model (2 T)"),
    "layers": Bound(1, 10_000, integer=True, reason="today's deepest models have under 200 layers"),
    "kv_heads": Bound(1, 4_096, integer=True, reason="models have at most 128 attention heads"),
    "head_dim": Bound(1, 65_536, integer=True, reason="head dimensions are 64–256"),
    "mla_latent_dim": Bound(1, 65_536, integer=True, reason="DeepSeek's latent is 576"),
    "context_tokens": Bound(1, 100_000_000, integer=True, reason="the longest contexts are 10 M tokens"),
    "concurrency": Bound(1, 1_000_000, integer=True, reason="a server serves at most thousands at once"),
    "tensor_parallel_gpus": Bound(1, 1_024, integer=True, reason="64 GPUs per server, 16 servers"),
    "overhead_fraction": Bound(0, 1, reason="the seed's 10–15 %; over 100 % is no estimate"),
    "gpu_count": Bound(1, 65_536, integer=True, reason="the configuration's GPUs in the whole order"),
    "gpu_vram_gb": Bound(0, 100_000, low_open=True, reason="today's largest GPU has under 300 GB"),
}

#: A payback later than this many months (about 83,000 years) counts as never: ``payback_months`` is inf.
PAYBACK_NEVER_MONTHS = 1_000_000.0
#: A break-even utilisation above this (a thousand times the full month) is reported as None: unreachable.
UTILIZATION_UNREACHABLE = 1_000.0
#: The IRR search covers monthly rates up to 900 % (an annual IRR of 10^12 − 1); an IRR above that
#: (a server that pays back within days) is reported as None, as one that does not exist.
IRR_MAX_MONTHLY = 9.0
#: ``npv`` keeps every discount factor below e^600 (about 10^260): the IRR search's lowest rate for a
#: horizon of T months is max(−99 %, e^(−600/T) − 1) a month, so a long horizon can never overflow.
_MAX_LOG_DISCOUNT = 600.0


# --- ROI (reference §4) --------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ROIInputs:
    """Inputs of the ROI gate for one server (reference §4).

    ``power_active_kw`` and ``power_idle_kw`` are the whole server at the wall under full load and at
    idle, so the reference's per-GPU ``P_base + N·(U·p_act + (1−U)·p_idle)`` becomes
    ``U·power_active_kw + (1−U)·power_idle_kw``. ``platform_fee`` is a fraction of revenue: set it only
    when ``price_per_gpu_hour`` is the renter-facing price. ``rent_price_per_gpu_hour`` is what renting
    one GPU costs; give it to get the buy-vs-rent break-even.
    """

    capex: float
    gpu_count: int
    price_per_gpu_hour: float
    utilization: float
    platform_fee: float = 0.0
    power_active_kw: float
    power_idle_kw: float
    energy_price_kwh: float
    pue: float = 1.0
    colo_month: float = 0.0
    other_opex_month: float = 0.0
    horizon_months: int = 36
    discount_rate_annual: float = 0.10
    residual_value: float = 0.0
    target_payback_months: float = 36.0
    rent_price_per_gpu_hour: float | None = None

    def __post_init__(self) -> None:
        b = ROI_BOUNDS
        active = b["power_active_kw"].check("power_active_kw", self.power_active_kw)
        idle = b["power_idle_kw"].check("power_idle_kw", self.power_idle_kw)
        if idle > active:
            raise FormulaInputError(
                "power_idle_kw", f"must not exceed power_active_kw ({active:g} kW); got {idle:g}."
            )
        rent = self.rent_price_per_gpu_hour
        _set(
            self,
            power_active_kw=active,
            power_idle_kw=idle,
            rent_price_per_gpu_hour=None
            if rent is None
            else b["rent_price_per_gpu_hour"].check("rent_price_per_gpu_hour", rent),
            **{
                name: bound.check(name, getattr(self, name))
                for name, bound in b.items()
                if name not in {"power_active_kw", "power_idle_kw", "rent_price_per_gpu_hour"}
            },
        )
        _set(self, gpu_count=int(self.gpu_count), horizon_months=int(self.horizon_months))


@dataclass(frozen=True)
class ROIResult:
    """Outputs of :func:`roi`. Money per month unless named otherwise; utilisations are fractions."""

    hours_per_month: int
    revenue_month: float
    avg_power_kw: float
    energy_month: float
    opex_month: float
    net_month: float
    payback_months: float
    pays_back: bool
    meets_target: bool
    npv: float
    irr_annual: float | None
    breakeven_utilization_target: float | None
    breakeven_utilization_opex: float | None
    buy_vs_rent_breakeven_utilization: float | None
    cashflows: tuple[float, ...]
    breakeven_month: int | None


def monthly_rate(annual: float) -> float:
    """r_m = (1 + r_a)^(1/12) − 1: the compound monthly rate of an annual rate."""
    return (1 + annual) ** (1 / 12) - 1


def annual_rate(monthly: float) -> float:
    """r_a = (1 + r_m)^12 − 1."""
    return (1 + monthly) ** 12 - 1


def npv(*, capex: float, net_month: float, months: int, rate_monthly: float, residual: float = 0.0) -> float:
    """NPV = −K + Σ_{t=1..T} Net/(1+r_m)^t + S/(1+r_m)^T.

    The factors are computed as exp(−t·ln(1+r_m)): for a high rate they fall smoothly to 0 where
    (1+r_m)^t would overflow, and dividing by a factor never happens, so a long horizon at a rate near
    −100 % cannot divide by an underflowed 0 (which the horizon of 162 months at −99 % a month did).
    """
    log_growth = math.log1p(rate_monthly)
    flows = [-capex]
    flows.extend(net_month * math.exp(-t * log_growth) for t in range(1, months + 1))
    flows.append(residual * math.exp(-months * log_growth))
    return math.fsum(flows)


def _irr_monthly(*, capex: float, net_month: float, months: int, residual: float) -> float | None:
    """The monthly rate where NPV = 0, by bisection; None where it is undefined.

    The flows are −K, then Net each month, plus S ≥ 0 in the last one, so they change sign at most once
    and NPV(r) falls monotonically: one root at most (Descartes). Without any positive flow there is none.
    The search covers max(−99 %, e^(−600/T) − 1) to :data:`IRR_MAX_MONTHLY` (900 %) a month: at the lower
    end no discount factor exceeds e^600, so nothing overflows for any horizon; a root outside the range is
    reported as undefined.
    """
    if net_month <= 0 and net_month + residual <= 0:
        return None

    def value(rate: float) -> float:
        return npv(capex=capex, net_month=net_month, months=months, rate_monthly=rate, residual=residual)

    low = max(-0.99, math.expm1(-_MAX_LOG_DISCOUNT / months))
    high = IRR_MAX_MONTHLY
    if value(low) <= 0 or value(high) > 0:
        return None
    for _ in range(200):
        mid = (low + high) / 2
        if value(mid) > 0:
            low = mid
        else:
            high = mid
        if high - low < 1e-13:
            break
    return (low + high) / 2


def _utilization_for(*, fixed_month: float, margin_per_unit_u: float) -> float | None:
    """Solve fixed_month = U · margin_per_unit_u; None when no U up to :data:`UTILIZATION_UNREACHABLE` does.

    None when more utilisation does not help (margin ≤ 0), or when the answer is over a thousand times the
    whole month (a margin of a fraction of a cent), which is as unreachable and would not fit a field.
    """
    if margin_per_unit_u <= 0 or fixed_month > UTILIZATION_UNREACHABLE * margin_per_unit_u:
        return None
    return fixed_month / margin_per_unit_u


def roi(inputs: ROIInputs) -> ROIResult:
    """ROI of one server over its horizon (reference §4), with H = 730 = 8760/12; Vast's docs use 720.

    - Revenue_m = N·H·U·P·(1−f)
    - kW_avg = U·P_act + (1−U)·P_idle  (whole server at the wall; the worked example: 0.6·6.3 + 0.4·1.2
      = 4.26 kW)
    - Energy_m = kW_avg·H·PUE·c;  Opex_m = Energy_m + Colo_m + Other_m;  Net_m = Revenue_m − Opex_m
    - Payback = K/Net_m (inf when Net_m ≤ 0, or when it exceeds :data:`PAYBACK_NEVER_MONTHS`); the gate
      passes when Payback ≤ target T
    - U_T = (K/T + Colo + Other + P_idle·H·PUE·c) / (N·H·P·(1−f) − (P_act − P_idle)·H·PUE·c), with T the
      target payback; K = 0 gives the opex break-even. None when the denominator is ≤ 0 (more
      utilisation loses money) or the value exceeds :data:`UTILIZATION_UNREACHABLE`; a value over 1
      means the target is out of reach.
    - NPV = −K + Σ_{t=1..T} Net/(1+r_m)^t + S/(1+r_m)^T, r_m = (1+r_a)^(1/12) − 1, T the horizon
    - IRR: the annual rate (1+r_m)^12 − 1 at which that NPV is 0, found by bisection on r_m (None outside
      the search range, see :func:`_irr_monthly`).
    - Buy vs rent: u* = (K/T + F) / (H·(R − e)), T the horizon, F = Colo + Other, R = rent per GPU-hour × N
      (renting as many GPUs as the server has), e = P_act·PUE·c, the energy cost of an hour at load. As in
      the reference's H100 example (K = 35k, T = 36, F = 75, 0.7 kW · 1.3 · 0.15 = 0.1365/h; rent 2.50 →
      60.7 %, 6.00 → 24.5 %) the server is taken to draw power only while it works: idle draw is left out.
      None without a rent price, or when renting costs no more per hour than the energy.
    - cashflows: the undiscounted cumulative cash flow for months 0..horizon (month 0 = −K; S is added at
      the horizon); breakeven_month is the first month where it is ≥ 0.
    """
    n, u, hours = inputs.gpu_count, inputs.utilization, HOURS_PER_MONTH
    energy_per_kw_month = hours * inputs.pue * inputs.energy_price_kwh
    revenue_per_u = n * hours * inputs.price_per_gpu_hour * (1 - inputs.platform_fee)
    revenue = revenue_per_u * u
    avg_power_kw = u * inputs.power_active_kw + (1 - u) * inputs.power_idle_kw
    energy = avg_power_kw * energy_per_kw_month
    fixed_opex = inputs.colo_month + inputs.other_opex_month
    opex = energy + fixed_opex
    net = revenue - opex

    # A net so small that the capex takes over PAYBACK_NEVER_MONTHS counts as never paying back.
    pays = net > 0 and inputs.capex <= PAYBACK_NEVER_MONTHS * net
    payback = inputs.capex / net if pays else math.inf
    rate_m = monthly_rate(inputs.discount_rate_annual)
    horizon = inputs.horizon_months
    npv_value = npv(
        capex=inputs.capex, net_month=net, months=horizon, rate_monthly=rate_m, residual=inputs.residual_value
    )
    irr_m = _irr_monthly(capex=inputs.capex, net_month=net, months=horizon, residual=inputs.residual_value)

    # Both break-evens solve Net(U) = K/T: the idle draw is a fixed cost, each unit of U earns the
    # revenue of a full month minus the extra energy of running at load instead of idling.
    idle_energy = inputs.power_idle_kw * energy_per_kw_month
    margin_per_u = revenue_per_u - (inputs.power_active_kw - inputs.power_idle_kw) * energy_per_kw_month
    u_target = _utilization_for(
        fixed_month=inputs.capex / inputs.target_payback_months + fixed_opex + idle_energy,
        margin_per_unit_u=margin_per_u,
    )
    u_opex = _utilization_for(fixed_month=fixed_opex + idle_energy, margin_per_unit_u=margin_per_u)

    u_rent = None
    if inputs.rent_price_per_gpu_hour is not None:
        rent_per_hour = inputs.rent_price_per_gpu_hour * n
        energy_per_hour = inputs.power_active_kw * inputs.pue * inputs.energy_price_kwh
        u_rent = _utilization_for(
            fixed_month=inputs.capex / horizon + fixed_opex,
            margin_per_unit_u=hours * (rent_per_hour - energy_per_hour),
        )

    cumulative = [-inputs.capex + month * net for month in range(horizon + 1)]
    cumulative[-1] += inputs.residual_value
    breakeven_month = next((month for month, cash in enumerate(cumulative) if cash >= 0), None)

    return ROIResult(
        hours_per_month=hours,
        revenue_month=revenue,
        avg_power_kw=avg_power_kw,
        energy_month=energy,
        opex_month=opex,
        net_month=net,
        payback_months=payback,
        pays_back=math.isfinite(payback),
        meets_target=payback <= inputs.target_payback_months,
        npv=npv_value,
        irr_annual=None if irr_m is None else annual_rate(irr_m),
        breakeven_utilization_target=u_target,
        breakeven_utilization_opex=u_opex,
        buy_vs_rent_breakeven_utilization=u_rent,
        cashflows=tuple(cumulative),
        breakeven_month=breakeven_month,
    )


# --- VRAM sizing (reference §1, §2; seed 001) ------------------------------------------------------------

#: Bytes per element. fp32 4, fp16/bf16 2, fp8/int8 1, int4/fp4 0.5. ``awq`` is 4-bit group-quantised
#: weights with their scales and zeros, ≈ 4.16 bits (group 128, reference §1). ``q8_0``/``q4_0`` are
#: llama.cpp's block formats, 34 and 18 bytes per 32 values (reference §1).
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "fp16": 2.0,
    "bf16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "int4": 0.5,
    "fp4": 0.5,
    "awq": 4.16 / 8,
    "q8_0": 34 / 32,
    "q4_0": 18 / 32,
}


def dtype_bytes(field: str, dtype: str) -> float:
    """Bytes per element of ``dtype`` (case-insensitive); FormulaInputError naming ``field`` if unknown."""
    key = str(dtype).strip().lower()
    if key not in DTYPE_BYTES:
        raise FormulaInputError(field, f"unknown dtype {dtype!r}; known: {', '.join(DTYPE_BYTES)}.")
    return DTYPE_BYTES[key]


@dataclass(frozen=True, kw_only=True)
class ModelArchitecture:
    """What sizing needs from a model's config.json (reference §2). ``params_b`` in billions.

    For MLA models (DeepSeek) ``mla_latent_dim`` = kv_lora_rank + qk_rope_head_dim, and, as in vLLM,
    ``kv_heads`` = 1 and ``head_dim`` = the latent dimension.
    """

    params_b: float
    layers: int
    kv_heads: int
    head_dim: int
    mla_latent_dim: int | None = None
    source: str = ""


#: Known architectures, from the reference's table (§2). Parameter counts are the totals: every expert
#: of an MoE model must be resident.
PRESETS: dict[str, ModelArchitecture] = {
    "llama-3.1-8b": ModelArchitecture(
        params_b=8.030,
        layers=32,
        kv_heads=8,
        head_dim=128,
        source="NaniDAO/Meta-Llama-3.1-8B-Instruct-ablated (_name_or_path meta-llama)",
    ),
    "llama-3.1-70b": ModelArchitecture(
        params_b=70.554,
        layers=80,
        kv_heads=8,
        head_dim=128,
        source="mlabonne/Llama-3.1-70B-Instruct-lorablated; FriendliAI int8 copy",
    ),
    "qwen2.5-72b": ModelArchitecture(
        params_b=72.706,
        layers=80,
        kv_heads=8,
        head_dim=128,
        source="m8than/banana-2-b-72b (_name_or_path Qwen/Qwen2.5-72B-Instruct)",
    ),
    "mixtral-8x7b": ModelArchitecture(
        params_b=46.70,
        layers=32,
        kv_heads=8,
        head_dim=128,
        source="mistralai/Mixtral-8x7B-Instruct-v0.1 @eba92302 (46.70 B total, 12.88 B active)",
    ),
    "deepseek-v3": ModelArchitecture(
        params_b=671.0,
        layers=61,
        kv_heads=1,
        head_dim=576,
        mla_latent_dim=576,
        source=(
            "amd/DeepSeek-R1-0528-MXFP4 config; vLLM DeepseekV3Config (MLA: kv_lora_rank 512 + "
            "qk_rope_head_dim 64); 671 B is DeepSeek's publicly stated total, not in the reference table"
        ),
    ),
    "glm-4.6": ModelArchitecture(
        params_b=355.0,
        layers=92,
        kv_heads=8,
        head_dim=128,
        source=(
            "zai-org/GLM-4.7-FP8; RedHatAI/GLM-4.6-NVFP4 (MTP layer not counted); 355 B is Z.ai's "
            "publicly stated total, not in the reference table"
        ),
    ),
}

_ARCHITECTURE_FIELDS = ("params_b", "layers", "kv_heads", "head_dim", "mla_latent_dim")


@dataclass(frozen=True, kw_only=True)
class SizingInputs:
    """Inputs of the VRAM check (seed 001; reference §1).

    ``params_b`` in billions. ``kv_heads`` and ``head_dim`` may be left out (None or 0) for an MLA model:
    they become 1 and ``mla_latent_dim`` (vLLM's convention). ``overhead_fraction`` defaults to 0.12, inside
    the seed's 10–15 %. The model is split over ``tensor_parallel_gpus``; ``gpu_count`` (the
    configuration's GPUs, default ``tensor_parallel_gpus``) and ``gpu_vram_gb`` give the VRAM to compare.
    """

    params_b: float
    layers: int
    kv_heads: int | None = None
    head_dim: int | None = None
    mla_latent_dim: int | None = None
    weights_dtype: str = "fp16"
    kv_dtype: str = "fp16"
    context_tokens: int
    concurrency: int = 1
    overhead_fraction: float = 0.12
    tensor_parallel_gpus: int = 1
    gpu_vram_gb: float | None = None
    gpu_count: int | None = None

    def __post_init__(self) -> None:
        for name in ("params_b", "layers"):
            if getattr(self, name) is None:
                raise FormulaInputError(name, "missing architecture field: give it or choose a preset.")
        latent = None
        if self.mla_latent_dim is not None:
            latent = int(SIZING_BOUNDS["mla_latent_dim"].check("mla_latent_dim", self.mla_latent_dim))
        kv_heads, head_dim = self.kv_heads, self.head_dim
        if latent is not None:
            # MLA caches one latent per layer: the head fields do not enter the formula, so an unset (None
            # or 0) value takes vLLM's convention instead of failing.
            kv_heads = kv_heads or 1
            head_dim = head_dim or latent
        for name, value in (("kv_heads", kv_heads), ("head_dim", head_dim)):
            if value is None:
                raise FormulaInputError(
                    name, "missing architecture field: give it (or mla_latent_dim) or choose a preset."
                )
        tp = _sized("tensor_parallel_gpus", self.tensor_parallel_gpus)
        gpu_count = tp if self.gpu_count is None else _sized("gpu_count", self.gpu_count)
        if gpu_count < tp:
            raise FormulaInputError(
                "gpu_count", f"the model is split over {tp} GPUs but the configuration has {gpu_count}."
            )
        vram = None if self.gpu_vram_gb is None else _sized("gpu_vram_gb", self.gpu_vram_gb)
        dtype_bytes("weights_dtype", self.weights_dtype)
        dtype_bytes("kv_dtype", self.kv_dtype)
        _set(
            self,
            params_b=_sized("params_b", self.params_b),
            layers=_sized("layers", self.layers),
            kv_heads=_sized("kv_heads", kv_heads),
            head_dim=_sized("head_dim", head_dim),
            mla_latent_dim=latent,
            weights_dtype=str(self.weights_dtype).strip().lower(),
            kv_dtype=str(self.kv_dtype).strip().lower(),
            context_tokens=_sized("context_tokens", self.context_tokens),
            concurrency=_sized("concurrency", self.concurrency),
            overhead_fraction=_sized("overhead_fraction", self.overhead_fraction),
            tensor_parallel_gpus=tp,
            gpu_vram_gb=vram,
            gpu_count=gpu_count,
        )


def _sized(field: str, value: Any) -> Any:
    """``value`` checked against its :data:`SIZING_BOUNDS`; an int for the whole-number fields."""
    bound = SIZING_BOUNDS[field]
    number = bound.check(field, value)
    return int(number) if bound.integer else number


def sizing_inputs_from_preset(name: str, **overrides: Any) -> SizingInputs:
    """SizingInputs for a known model (:data:`PRESETS`), with ``overrides`` for any field.

    Raises FormulaInputError("model", …) for an unknown preset, and names any unknown or missing field.
    """
    key = str(name).strip().lower()
    if key not in PRESETS:
        raise FormulaInputError("model", f"unknown preset {name!r}; known: {', '.join(PRESETS)}.")
    architecture = PRESETS[key]
    values: dict[str, Any] = {field: getattr(architecture, field) for field in _ARCHITECTURE_FIELDS}
    known = {f.name: f for f in fields(SizingInputs)}
    for field, value in overrides.items():
        if field not in known:
            raise FormulaInputError(field, "not a sizing input.")
        values[field] = value
    for field in known.values():
        if field.name not in values and field.default is MISSING:
            raise FormulaInputError(field.name, "is required.")
    return SizingInputs(**values)


@dataclass(frozen=True)
class SizingResult:
    """Outputs of :func:`sizing`: GB = 10**9 B, GiB = 2**30 B; ``per_gpu`` is the busiest GPU."""

    weights_gb: float
    kv_bytes_per_token: float
    kv_cache_gb: float
    overhead_gb: float
    total_gb: float
    total_gib: float
    per_gpu_gb: float
    per_gpu_gib: float
    weights_gib: float
    kv_cache_gib: float
    total_vram_gb: float | None
    fits: bool | None
    headroom_gb: float | None


def kv_bytes_per_token(
    *, layers: int, kv_heads: int, head_dim: int, kv_bytes: float, mla_latent_dim: int | None = None
) -> float:
    """KV-cache bytes per token.

    GQA/MHA: 2 × L × n_kv × d_head × b_kv (K and V, only the KV heads; vLLM ``AttentionSpec``).
    MLA: L × latent × b_kv (one compressed latent, no factor 2; vLLM ``MLAAttentionSpec``).
    """
    if mla_latent_dim is not None:
        return layers * mla_latent_dim * kv_bytes
    return 2 * layers * kv_heads * head_dim * kv_bytes


def sizing(inputs: SizingInputs) -> SizingResult:
    """VRAM a model needs to serve ``concurrency`` requests of ``context_tokens`` each (seed 001).

    - weights W = params × bytes/param
    - KV = context × concurrency × kv_bytes_per_token (the worst case: every request at full context)
    - overhead = o × (W + KV); total = W + KV + overhead. total is the model's own sum, as in the seed,
      without the copies tensor parallelism replicates.
    - per GPU = (W / tp + KV_gpu) × (1 + o). Each GPU holds ceil(n_kv / tp) of the n_kv KV heads, so
      KV_gpu = KV × ceil(n_kv/tp) / n_kv: KV is replicated when tp > n_kv (reference §1). This equals the
      reference's max(1, n_kv // tp) whenever one divides the other (the layouts vLLM accepts) and takes
      the busiest GPU for uneven splits (e.g. 6 GPUs, 8 KV heads). MLA has a single latent "head",
      replicated in full on every GPU.
    - fits = per_gpu ≤ VRAM per GPU and total ≤ VRAM × gpu_count; headroom = VRAM − per_gpu (per GPU).
      None without a VRAM figure.
    """
    w_bytes = dtype_bytes("weights_dtype", inputs.weights_dtype)
    kv_elem = dtype_bytes("kv_dtype", inputs.kv_dtype)
    per_token = kv_bytes_per_token(
        layers=inputs.layers,
        kv_heads=inputs.kv_heads or 1,
        head_dim=inputs.head_dim or 1,
        kv_bytes=kv_elem,
        mla_latent_dim=inputs.mla_latent_dim,
    )
    weights = inputs.params_b * 1e9 * w_bytes
    kv_total = inputs.context_tokens * inputs.concurrency * per_token
    factor = 1 + inputs.overhead_fraction
    total = (weights + kv_total) * factor

    tp = inputs.tensor_parallel_gpus
    if inputs.mla_latent_dim is not None:
        kv_share = 1.0
    else:
        n_kv = inputs.kv_heads or 1
        kv_share = math.ceil(n_kv / tp) / n_kv
    per_gpu = (weights / tp + kv_total * kv_share) * factor

    total_vram = fits = headroom = None
    if inputs.gpu_vram_gb is not None:
        count = inputs.gpu_count or tp
        total_vram = inputs.gpu_vram_gb * count
        fits = per_gpu / GB <= inputs.gpu_vram_gb and total / GB <= total_vram
        headroom = inputs.gpu_vram_gb - per_gpu / GB

    return SizingResult(
        weights_gb=weights / GB,
        kv_bytes_per_token=per_token,
        kv_cache_gb=kv_total / GB,
        overhead_gb=(weights + kv_total) * inputs.overhead_fraction / GB,
        total_gb=total / GB,
        total_gib=total / GIB,
        per_gpu_gb=per_gpu / GB,
        per_gpu_gib=per_gpu / GIB,
        weights_gib=weights / GIB,
        kv_cache_gib=kv_total / GIB,
        total_vram_gb=total_vram,
        fits=fits,
        headroom_gb=headroom,
    )


# --- Power budget (reference §5; seeds 000, 001, 003) ------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PowerInputs:
    """Inputs of the power check of one server.

    ``load_w`` is the DC load: the sum of the parts' TDP, which is what the PSUs deliver. ``redundant`` PSUs
    are spares (N+1: 1). ``efficiency`` (η) only turns the DC load into wall power (AC input). For three
    phases ``circuit_v`` is line-to-neutral. ``wall_w`` is a measured wall power; without it the wall power
    is ``load_w / efficiency``. Give both ``circuit_v`` and ``circuit_a``, or neither.
    """

    psu_count: int
    psu_rating_w: float
    redundant: int = 0
    load_w: float
    efficiency: float = 0.94
    headroom: float = 0.9
    circuit_v: float | None = None
    circuit_a: float | None = None
    phases: int = 1
    continuous_factor: float = 0.8
    wall_w: float | None = None

    def __post_init__(self) -> None:
        count = _integer("psu_count", self.psu_count, minimum=1)
        redundant = _integer("redundant", self.redundant, minimum=0)
        if redundant >= count:
            raise FormulaInputError(
                "redundant", f"must be fewer than the {count} installed PSUs; got {redundant}."
            )
        phases = _integer("phases", self.phases, minimum=1)
        if phases not in (1, 3):
            raise FormulaInputError("phases", f"must be 1 or 3; got {phases}.")
        if (self.circuit_v is None) != (self.circuit_a is None):
            missing = "circuit_a" if self.circuit_a is None else "circuit_v"
            raise FormulaInputError(missing, "give both circuit_v and circuit_a, or neither.")
        _set(
            self,
            psu_count=count,
            psu_rating_w=_positive("psu_rating_w", self.psu_rating_w),
            redundant=redundant,
            load_w=_at_least("load_w", self.load_w, 0),
            efficiency=_fraction("efficiency", self.efficiency, lower_open=True),
            headroom=_fraction("headroom", self.headroom, lower_open=True),
            circuit_v=None if self.circuit_v is None else _positive("circuit_v", self.circuit_v),
            circuit_a=None if self.circuit_a is None else _positive("circuit_a", self.circuit_a),
            phases=phases,
            continuous_factor=_fraction("continuous_factor", self.continuous_factor, lower_open=True),
            wall_w=None if self.wall_w is None else _at_least("wall_w", self.wall_w, 0),
        )


@dataclass(frozen=True)
class PowerResult:
    """Outputs of :func:`power_budget`, in W and percent.

    ``psu_load_w`` is the DC load the PSUs must deliver (the summed TDP); ``wall_power_w`` is what the
    server draws from the circuit (measured, else DC load / η).
    """

    installed_w: float
    usable_w: float
    usable_with_headroom_w: float
    psu_load_w: float
    psu_margin_w: float
    psu_margin_pct: float
    psu_ok: bool
    wall_power_w: float
    wall_power_measured: bool
    circuit_continuous_w: float | None
    circuit_margin_w: float | None
    circuit_margin_pct: float | None
    circuit_ok: bool | None


def power_budget(inputs: PowerInputs) -> PowerResult:
    """PSU check on the DC side, circuit check on the AC side (seeds 000, 001, 003).

    - installed = n × P_psu;  usable = (n − R) × P_psu (seed 000: 5 × 1600 W in N+1 → 6400 W usable)
    - PSU check: DC load = Σ TDP, compared with usable × headroom (0.9). A PSU's rating is its DC output,
      so the load is not divided by the efficiency here. margin = usable × headroom − DC load; margin % is
      of usable × headroom; ok when margin ≥ 0.
    - wall power = measured wall power, else DC load / η (the AC input that delivers the DC load)
    - circuit check: continuous limit = 0.8 × V × A × phases (NEC's 80 % rule for loads ≥ 3 h; a design
      convention in IEC countries; three phases: 3 × V_LN × A), compared with the wall power.
      margin = limit − wall power; margin % is of the limit; ok when margin ≥ 0.
    """
    installed = inputs.psu_count * inputs.psu_rating_w
    usable = (inputs.psu_count - inputs.redundant) * inputs.psu_rating_w
    usable_headroom = usable * inputs.headroom
    psu_load = inputs.load_w
    psu_margin = usable_headroom - psu_load
    measured = inputs.wall_w is not None
    wall = inputs.wall_w if inputs.wall_w is not None else psu_load / inputs.efficiency

    continuous = circuit_margin = circuit_pct = circuit_ok = None
    if inputs.circuit_v is not None and inputs.circuit_a is not None:
        continuous = inputs.continuous_factor * inputs.circuit_v * inputs.circuit_a * inputs.phases
        circuit_margin = continuous - wall
        circuit_pct = circuit_margin / continuous * 100
        circuit_ok = circuit_margin >= 0

    return PowerResult(
        installed_w=installed,
        usable_w=usable,
        usable_with_headroom_w=usable_headroom,
        psu_load_w=psu_load,
        psu_margin_w=psu_margin,
        psu_margin_pct=psu_margin / usable_headroom * 100,
        psu_ok=psu_margin >= 0,
        wall_power_w=wall,
        wall_power_measured=measured,
        circuit_continuous_w=continuous,
        circuit_margin_w=circuit_margin,
        circuit_margin_pct=circuit_pct,
        circuit_ok=circuit_ok,
    )
