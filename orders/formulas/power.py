"""Power budget of one server (reference §5; seeds 000, 001, 003): the summed TDP against the usable PSU
power, and the wall power against the circuit's continuous limit.

Power in W.
"""

from __future__ import annotations

from dataclasses import dataclass

from orders.formulas.inputs import FormulaInputError, _at_least, _fraction, _integer, _positive, _set


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
