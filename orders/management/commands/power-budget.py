"""``manage.py power-budget``: usable PSU power and the circuit's continuous limit.

The hyphen in the file name is the command's name: Django imports commands with ``import_module``, which
takes any file name, so ``manage.py power-budget`` finds this module.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from orders.formulas import FormulaInputError, PowerInputs, PowerResult, power_budget

from ._formula_cli import MONEY, FormulaCommand, fmt, result_dict


class Command(FormulaCommand):
    help = (
        "PSU check (DC load, the summed TDP, against (installed − redundant) × rating × headroom) and "
        "circuit check (wall power, measured or DC load / efficiency, against 0.8 × V × A × phases)."
    )
    option_names = {
        "psu_count": "--psu-count",
        "psu_rating_w": "--psu-rating-w",
        "redundant": "--redundant",
        "load_w": "--load-w",
        "efficiency": "--efficiency",
        "headroom": "--headroom",
        "circuit_v": "--circuit-v",
        "circuit_a": "--circuit-a",
        "phases": "--phases",
        "continuous_factor": "--continuous-factor",
        "wall_w": "--wall-w",
    }

    def add_arguments(self, parser: Any) -> None:
        headroom = getattr(settings, "WERKBANK_PSU_HEADROOM", 0.9)
        parser.add_argument("--psu-count", type=int, required=True, help="PSUs installed.")
        parser.add_argument("--psu-rating-w", type=float, required=True, help="Rating of one PSU, W.")
        parser.add_argument("--redundant", type=int, default=0, help="Spare PSUs (N+1: 1); default 0.")
        parser.add_argument("--load-w", type=float, required=True, help="Sum of the parts' TDP, W (DC).")
        efficiency = getattr(settings, "WERKBANK_PSU_EFFICIENCY", 0.94)
        parser.add_argument(
            "--efficiency",
            type=float,
            default=efficiency,
            help=f"PSU efficiency, for the wall power only; default {efficiency}.",
        )
        parser.add_argument(
            "--headroom",
            type=float,
            default=headroom,
            help=f"Usable fraction of PSU power; default {headroom}.",
        )
        parser.add_argument(
            "--circuit-v", type=float, default=None, help="Circuit voltage (line-to-neutral)."
        )
        parser.add_argument("--circuit-a", type=float, default=None, help="Breaker current, A.")
        parser.add_argument("--phases", type=int, default=1, help="1 or 3; default 1.")
        parser.add_argument(
            "--continuous-factor", type=float, default=0.8, help="Continuous-load fraction; default 0.8."
        )
        parser.add_argument("--wall-w", type=float, default=None, help="Measured wall power, W.")
        parser.add_argument("--json", action="store_true", help="Print JSON instead of a table.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            inputs = PowerInputs(
                psu_count=options["psu_count"],
                psu_rating_w=options["psu_rating_w"],
                redundant=options["redundant"],
                load_w=options["load_w"],
                efficiency=options["efficiency"],
                headroom=options["headroom"],
                circuit_v=options["circuit_v"],
                circuit_a=options["circuit_a"],
                phases=options["phases"],
                continuous_factor=options["continuous_factor"],
                wall_w=options["wall_w"],
            )
        except FormulaInputError as exc:
            raise self.input_error(exc) from exc
        result = power_budget(inputs)
        if options["json"]:
            self.write_json(result_dict(result, decimals={}, default=MONEY))
        else:
            self.write_table(inputs, result)

    def write_table(self, i: PowerInputs, r: PowerResult) -> None:
        ok = {True: "ok", False: "OVER", None: "n/a"}
        wall_source = (
            "measured" if r.wall_power_measured else f"DC load / η = {i.load_w:g} / {i.efficiency:g}"
        )
        rows = [
            ("Installed", f"n × P_psu = {i.psu_count} × {i.psu_rating_w:g}", fmt(r.installed_w, 0, "W")),
            (
                "Usable",
                f"(n − R) × P_psu = ({i.psu_count} − {i.redundant}) × {i.psu_rating_w:g}",
                fmt(r.usable_w, 0, "W"),
            ),
            ("Usable × headroom", f"× {i.headroom:g}", fmt(r.usable_with_headroom_w, 0, "W")),
            ("PSU load (DC)", "Σ TDP", fmt(r.psu_load_w, 0, "W")),
            (
                "PSU margin",
                "usable × headroom − DC load",
                f"{fmt(r.psu_margin_w, 0, 'W')} ({r.psu_margin_pct:.1f} %) {ok[r.psu_ok]}",
            ),
            ("Wall power", wall_source, fmt(r.wall_power_w, 0, "W")),
        ]
        if r.circuit_continuous_w is not None:
            rows += [
                (
                    "Circuit continuous",
                    f"{i.continuous_factor:g} × {i.circuit_v:g} V × {i.circuit_a:g} A × {i.phases}",
                    fmt(r.circuit_continuous_w, 0, "W"),
                ),
                (
                    "Circuit margin",
                    "continuous − wall",
                    f"{fmt(r.circuit_margin_w, 0, 'W')} ({r.circuit_margin_pct:.1f} %) {ok[r.circuit_ok]}",
                ),
            ]
        self.write_rows("Power budget", rows)
