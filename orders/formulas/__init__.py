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

One module per formula, all named here: ``inputs`` (units, the input error, the checks and the
:class:`Bound` of an input), ``investment`` (ROI), ``vram`` (VRAM sizing) and ``power`` (power budget).
Import from ``orders.formulas``.
"""

from __future__ import annotations

from orders.formulas.inputs import GB, GIB, HOURS_PER_MONTH, Bound, FormulaInputError
from orders.formulas.investment import (
    IRR_MAX_MONTHLY,
    PAYBACK_NEVER_MONTHS,
    ROI_BOUNDS,
    UTILIZATION_UNREACHABLE,
    ROIInputs,
    ROIResult,
    annual_rate,
    monthly_rate,
    npv,
    roi,
)
from orders.formulas.power import PowerInputs, PowerResult, power_budget
from orders.formulas.vram import (
    DTYPE_BYTES,
    PRESETS,
    SIZING_BOUNDS,
    ModelArchitecture,
    SizingInputs,
    SizingResult,
    dtype_bytes,
    kv_bytes_per_token,
    sizing,
    sizing_inputs_from_preset,
)

__all__ = [
    "DTYPE_BYTES",
    "GB",
    "GIB",
    "HOURS_PER_MONTH",
    "IRR_MAX_MONTHLY",
    "PAYBACK_NEVER_MONTHS",
    "PRESETS",
    "ROI_BOUNDS",
    "SIZING_BOUNDS",
    "UTILIZATION_UNREACHABLE",
    "Bound",
    "FormulaInputError",
    "ModelArchitecture",
    "PowerInputs",
    "PowerResult",
    "ROIInputs",
    "ROIResult",
    "SizingInputs",
    "SizingResult",
    "annual_rate",
    "dtype_bytes",
    "kv_bytes_per_token",
    "monthly_rate",
    "npv",
    "power_budget",
    "roi",
    "sizing",
    "sizing_inputs_from_preset",
]
