"""``manage.py roi``: the ROI gate's figures for one server (orders.formulas.roi, H = 730 h/month)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from orders.formulas import HOURS_PER_MONTH, FormulaInputError, ROIInputs, roi

from ._formula_cli import MONEY, RATIO, FormulaCommand, fmt, pct, result_dict

#: Rounding of each result field in the JSON; the rest are money (2 decimals).
DECIMALS = {
    "avg_power_kw": RATIO,
    "irr_annual": RATIO,
    "breakeven_utilization_target": RATIO,
    "breakeven_utilization_opex": RATIO,
    "buy_vs_rent_breakeven_utilization": RATIO,
}


class Command(FormulaCommand):
    help = (
        f"Revenue, energy, net, payback, NPV, IRR and break-even utilisations of one server, with "
        f"H = {HOURS_PER_MONTH} hours per month (8760/12)."
    )
    option_names = {
        "capex": "--capex",
        "gpu_count": "--gpus",
        "price_per_gpu_hour": "--price",
        "utilization": "--utilization",
        "platform_fee": "--platform-fee",
        "power_active_kw": "--power-active-kw",
        "power_idle_kw": "--power-idle-kw",
        "energy_price_kwh": "--energy-price",
        "pue": "--pue",
        "colo_month": "--colo",
        "other_opex_month": "--other-opex",
        "horizon_months": "--horizon",
        "discount_rate_annual": "--discount-rate",
        "residual_value": "--residual",
        "target_payback_months": "--target-payback",
        "rent_price_per_gpu_hour": "--rent-price",
    }

    def add_arguments(self, parser: Any) -> None:
        required = parser.add_argument_group("required")
        required.add_argument("--capex", type=float, required=True, help="Capex K of the server.")
        required.add_argument("--gpus", type=int, required=True, help="GPUs in the server (N).")
        required.add_argument("--price", type=float, required=True, help="Price per GPU-hour (P).")
        required.add_argument("--utilization", type=float, required=True, help="Utilisation U in [0, 1].")
        required.add_argument(
            "--power-active-kw", type=float, required=True, help="Whole server at the wall under load, kW."
        )
        required.add_argument(
            "--power-idle-kw", type=float, required=True, help="Whole server at the wall at idle, kW."
        )
        required.add_argument("--energy-price", type=float, required=True, help="Electricity per kWh (c).")
        parser.add_argument(
            "--platform-fee", type=float, default=0.0, help="Fraction of revenue (f), default 0."
        )
        parser.add_argument("--pue", type=float, default=1.0, help="PUE, default 1.0.")
        parser.add_argument("--colo", type=float, default=0.0, help="Colocation per month.")
        parser.add_argument("--other-opex", type=float, default=0.0, help="Other opex per month.")
        parser.add_argument("--horizon", type=int, default=36, help="Horizon in months, default 36.")
        parser.add_argument("--discount-rate", type=float, default=0.10, help="Annual, default 0.10.")
        parser.add_argument("--residual", type=float, default=0.0, help="Residual value at the horizon.")
        target = getattr(settings, "WERKBANK_PAYBACK_TARGET_MONTHS", 36.0)
        parser.add_argument(
            "--target-payback",
            type=float,
            default=target,
            help=f"Payback target in months; default {target:g}.",
        )
        parser.add_argument("--rent-price", type=float, default=None, help="Rent per GPU-hour (buy vs rent).")
        parser.add_argument("--json", action="store_true", help="Print JSON instead of a table.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            inputs = ROIInputs(
                capex=options["capex"],
                gpu_count=options["gpus"],
                price_per_gpu_hour=options["price"],
                utilization=options["utilization"],
                platform_fee=options["platform_fee"],
                power_active_kw=options["power_active_kw"],
                power_idle_kw=options["power_idle_kw"],
                energy_price_kwh=options["energy_price"],
                pue=options["pue"],
                colo_month=options["colo"],
                other_opex_month=options["other_opex"],
                horizon_months=options["horizon"],
                discount_rate_annual=options["discount_rate"],
                residual_value=options["residual"],
                target_payback_months=options["target_payback"],
                rent_price_per_gpu_hour=options["rent_price"],
            )
        except FormulaInputError as exc:
            raise self.input_error(exc) from exc
        result = roi(inputs)
        if options["json"]:
            data = result_dict(result, decimals=DECIMALS, default=MONEY)
            if inputs.rent_price_per_gpu_hour is None:
                del data["buy_vs_rent_breakeven_utilization"]
            self.write_json(data)
        else:
            self.write_table(inputs, result)

    def write_table(self, i: ROIInputs, r: Any) -> None:
        h = HOURS_PER_MONTH
        c = f"{i.pue:g} × {i.energy_price_kwh:g}"
        gate = "meets" if r.meets_target else "misses"
        rows = [
            (
                "Revenue/month",
                f"N·H·U·P·(1−f) = {i.gpu_count} × {h} × {i.utilization:g} × "
                f"{i.price_per_gpu_hour:g} × (1 − {i.platform_fee:g})",
                fmt(r.revenue_month),
            ),
            (
                "Average power",
                f"U·P_act + (1−U)·P_idle = {i.utilization:g} × {i.power_active_kw:g} + "
                f"{1 - i.utilization:g} × {i.power_idle_kw:g}",
                fmt(r.avg_power_kw, 2, "kW"),
            ),
            ("Energy/month", f"kW_avg·H·PUE·c = {r.avg_power_kw:.2f} × {h} × {c}", fmt(r.energy_month)),
            (
                "Opex/month",
                f"Energy + Colo + Other = {r.energy_month:,.2f} + {i.colo_month:,.2f} + "
                f"{i.other_opex_month:,.2f}",
                fmt(r.opex_month),
            ),
            ("Net/month", "Revenue − Opex", fmt(r.net_month)),
            (
                "Payback",
                f"K/Net = {i.capex:,.2f} / {r.net_month:,.2f}",
                f"{fmt(r.payback_months, 1, 'months')} ({gate} the {i.target_payback_months:g}-month target)",
            ),
            (
                "Break-even month",
                "first month with cumulative cash ≥ 0",
                "none within the horizon" if r.breakeven_month is None else str(r.breakeven_month),
            ),
            (
                "NPV",
                f"−K + Σ Net/(1+r_m)^t + S/(1+r_m)^T, T = {i.horizon_months}, "
                f"r_a = {i.discount_rate_annual:g}",
                fmt(r.npv),
            ),
            ("IRR (annual)", "r where NPV = 0 (bisection)", pct(r.irr_annual)),
            (
                "U for target payback",
                "(K/T + Colo + Other + idle energy) / (N·H·P·(1−f) − ΔP·H·PUE·c)",
                pct(r.breakeven_utilization_target),
            ),
            ("U opex break-even", "the same with K = 0", pct(r.breakeven_utilization_opex)),
        ]
        if i.rent_price_per_gpu_hour is not None:
            rows.append(
                (
                    "Buy-vs-rent U",
                    f"(K/T + F) / (H·(R − e)), R = {i.rent_price_per_gpu_hour:g} × "
                    f"{i.gpu_count}, e = {i.power_active_kw:g} × {c}",
                    pct(r.buy_vs_rent_breakeven_utilization),
                )
            )
        self.write_rows(f"ROI with H = {h} h/month (8760/12; Vast's docs use 720)", rows)
