"""ROI of one server over its horizon (reference §4; seed 000 "ROI-Modell zuerst", seed 001 "Kaufen oder
mieten"): revenue, energy and net per month, payback, NPV, IRR and the break-even utilisations.

Money in the order's currency, power in kW, months of H = 730 hours (:data:`HOURS_PER_MONTH`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from orders.formulas.inputs import HOURS_PER_MONTH, Bound, FormulaInputError, _set

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
