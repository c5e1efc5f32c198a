"""What each build step records: its fields, as data next to `BuildStepKind` (builds.choices).

A checklist item is a step kind (`ChecklistItem.kind`), so each item's fields are the fields of its kind.
The bench page draws one form per step from these definitions (labels with units, `min`/`max`/`step`,
`inputmode`), the API documents them in its schema, and `builds.services.step_log` checks a step's `data`
against them with `clean_step_data`, so the page and the API refuse the same input with the same sentence.

The figures are those a workshop writes on its build sheet today: screw torques from the chassis and
cooler makers' manuals, the link width and per-card host-to-device bandwidth of seed 003 (a healthy Gen4
x16 card shows 27.7 GB/s, one trained at x8 only 13.9), memory test passes and idle temperatures at QC.
Steps logged before these definitions existed keep whatever `data` they have; the page shows unknown
keys as they are.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from django.db import models
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from builds.choices import BuildStepKind
from werkbank.errors import InvalidInput


class FieldType(models.TextChoices):
    DECIMAL = "decimal", "decimal"
    INT = "int", "int"
    TEXT = "text", "text"
    CHOICE = "choice", "choice"
    BOOL = "bool", "bool"


@dataclass(frozen=True)
class StepField:
    """One value a build step records: its key in `BuildStep.data`, label, unit, type and allowed range."""

    name: str
    label: str | Promise
    type: str
    unit: str = ""
    min: Decimal | int | None = None
    max: Decimal | int | None = None
    required: bool = False
    choices: tuple[str, ...] = ()
    #: Decimal places a decimal field keeps (its HTML `step`); text fields: at most `max_length` characters.
    places: int = 1
    max_length: int = 64
    help_text: str | Promise = ""

    @property
    def step(self) -> str:
        """The HTML `step` attribute: 1 for whole numbers, 0.1 for one decimal place, and so on."""
        if self.type == FieldType.DECIMAL:
            return str(Decimal(1).scaleb(-self.places))
        return "1"

    def describe(self) -> dict[str, Any]:
        """The definition as plain data, for the API schema."""
        described: dict[str, Any] = {"name": self.name, "label": str(self.label), "type": self.type}
        if self.unit:
            described["unit"] = self.unit
        if self.min is not None:
            described["min"] = float(self.min) if self.type == FieldType.DECIMAL else self.min
        if self.max is not None:
            described["max"] = float(self.max) if self.type == FieldType.DECIMAL else self.max
        if self.choices:
            described["choices"] = list(self.choices)
        if self.type == FieldType.TEXT:
            described["max_length"] = self.max_length
        described["required"] = self.required
        return described


D = Decimal

STEP_FIELDS: dict[str, tuple[StepField, ...]] = {
    BuildStepKind.CHASSIS_PREPARATION: (
        StepField(
            "standoff_torque_nm",
            gettext_lazy("Mainboard screw torque"),
            FieldType.DECIMAL,
            unit="Nm",
            min=D("0.1"),
            max=D("3.0"),
            places=2,
            help_text=gettext_lazy("As set on the torque driver (typically 0.5–0.9 Nm)."),
        ),
        StepField("fans_fitted", gettext_lazy("Fans fitted"), FieldType.INT, min=0, max=16),
        StepField("psu_count", gettext_lazy("PSUs fitted"), FieldType.INT, min=1, max=8, required=True),
        StepField("dust_filters_fitted", gettext_lazy("Dust filters fitted"), FieldType.BOOL),
    ),
    BuildStepKind.PCIE_TOPOLOGY_CHECK: (
        StepField(
            "gpus_detected", gettext_lazy("GPUs detected"), FieldType.INT, min=0, max=16, required=True
        ),
        StepField("link_gen", gettext_lazy("PCIe generation"), FieldType.CHOICE, choices=("Gen4", "Gen5")),
        StepField(
            "link_width", gettext_lazy("Narrowest link width"), FieldType.CHOICE, choices=("x16", "x8", "x4")
        ),
        StepField(
            "h2d_gbps_min",
            gettext_lazy("Lowest host-to-device bandwidth"),
            FieldType.DECIMAL,
            unit="GB/s",
            min=D(0),
            max=D(128),
            places=1,
            help_text=gettext_lazy("The slowest card under load (Gen4 x16: 27.7 GB/s; at x8: 13.9 GB/s)."),
        ),
        StepField("numa_balanced", gettext_lazy("GPUs split evenly across NUMA nodes"), FieldType.BOOL),
    ),
    BuildStepKind.CABLE_ROUTING: (
        StepField("gpu_power_cables", gettext_lazy("GPU power cables"), FieldType.INT, min=0, max=16),
        StepField("cable_ties", gettext_lazy("Cable ties used"), FieldType.INT, min=0, max=500),
        StepField("airflow_clear", gettext_lazy("Airflow path clear"), FieldType.BOOL),
    ),
    BuildStepKind.FIRMWARE: (
        StepField("bios_version", gettext_lazy("BIOS version"), FieldType.TEXT, required=True, max_length=32),
        StepField("bmc_version", gettext_lazy("BMC version"), FieldType.TEXT, max_length=32),
        StepField("gpu_vbios_version", gettext_lazy("GPU VBIOS version"), FieldType.TEXT, max_length=32),
        StepField("nvidia_driver", gettext_lazy("NVIDIA driver"), FieldType.TEXT, max_length=32),
    ),
    BuildStepKind.QC_SIGNOFF: (
        StepField(
            "memory_test_passes",
            gettext_lazy("Memory test passes"),
            FieldType.INT,
            min=0,
            max=99,
            help_text=gettext_lazy("Completed passes without an error."),
        ),
        StepField(
            "cpu_idle_temp_c",
            gettext_lazy("CPU temperature at idle"),
            FieldType.DECIMAL,
            unit="°C",
            min=D(0),
            max=D(110),
        ),
        StepField(
            "gpu_idle_temp_c",
            gettext_lazy("Hottest GPU at idle"),
            FieldType.DECIMAL,
            unit="°C",
            min=D(0),
            max=D(110),
        ),
        StepField(
            "wall_power_idle_w",
            gettext_lazy("Wall power at idle"),
            FieldType.INT,
            unit="W",
            min=0,
            max=20000,
        ),
        StepField("torque_checked", gettext_lazy("Screw torques checked"), FieldType.BOOL),
    ),
    BuildStepKind.NOTE: (),
}


def step_fields(kind: str) -> tuple[StepField, ...]:
    """The fields a step of this kind records (none for an unknown kind)."""
    return STEP_FIELDS.get(kind, ())


def _unit(field: StepField) -> str:
    return f" {field.unit}" if field.unit else ""


def _number(field: StepField, value: Any) -> Decimal:
    whole = field.type == FieldType.INT
    rule = _("must be a whole number.") if whole else _("must be a number.")
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise InvalidInput(f"data.{field.name}", rule)
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidInput(f"data.{field.name}", rule)
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise InvalidInput(f"data.{field.name}", rule) from None
    if not number.is_finite() or (whole and number != number.to_integral_value()):
        raise InvalidInput(f"data.{field.name}", rule)
    if field.type == FieldType.DECIMAL and -number.as_tuple().exponent > field.places:  # type: ignore[operator]
        raise InvalidInput(
            f"data.{field.name}",
            _("has at most %(places)d decimal places.") % {"places": field.places},
        )
    if field.min is not None and number < field.min:
        raise InvalidInput(
            f"data.{field.name}",
            _("must be at least %(limit)s%(unit)s.") % {"limit": field.min, "unit": _unit(field)},
        )
    if field.max is not None and number > field.max:
        raise InvalidInput(
            f"data.{field.name}",
            _("must be at most %(limit)s%(unit)s.") % {"limit": field.max, "unit": _unit(field)},
        )
    return number


def clean_value(field: StepField, value: Any) -> Any:
    """One value checked against its field and turned into what is stored (a JSON number, string or bool)."""
    if field.type in (FieldType.INT, FieldType.DECIMAL):
        number = _number(field, value)
        return int(number) if field.type == FieldType.INT else float(number)
    if field.type == FieldType.BOOL:
        if not isinstance(value, bool):
            raise InvalidInput(f"data.{field.name}", _("must be true or false."))
        return value
    if not isinstance(value, str):
        raise InvalidInput(f"data.{field.name}", _("must be text."))
    text = value.strip()
    if field.type == FieldType.CHOICE and text not in field.choices:
        raise InvalidInput(
            f"data.{field.name}", _("must be one of %(choices)s.") % {"choices": ", ".join(field.choices)}
        )
    if len(text) > field.max_length:
        raise InvalidInput(
            f"data.{field.name}",
            _("has at most %(limit)d characters.") % {"limit": field.max_length},
        )
    return text


def clean_step_data(kind: str, data: Mapping[str, Any] | None) -> dict[str, Any]:
    """`data` checked against the fields of `kind`: the stored dict, or InvalidInput naming the field.

    Refused: a key the step does not define, a value of the wrong type or outside its range, and a
    required field left out. An empty value (`None`, `""`) counts as left out and is not stored.
    """
    data = dict(data or {})
    fields = {field.name: field for field in step_fields(kind)}
    label = BuildStepKind(kind).label if kind in BuildStepKind.values else kind
    for key in data:
        if key not in fields:
            known = ", ".join(fields) or _("none")
            raise InvalidInput(
                f"data.{key}",
                _("is not a field of the step “%(step)s”; its fields are: %(fields)s.")
                % {"step": label, "fields": known},
            )
    cleaned: dict[str, Any] = {}
    for name, field in fields.items():
        value = data.get(name)
        if value is None or (isinstance(value, str) and not value.strip()):
            if field.required:
                raise InvalidInput(
                    f"data.{name}",
                    _("is required for the step “%(step)s” (%(label)s).")
                    % {"step": label, "label": field.label},
                )
            continue
        cleaned[name] = clean_value(field, value)
    return cleaned


def data_lines(kind: str, data: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """A step's stored data as (label, value with unit) pairs for reading; unknown keys as they are."""
    fields = {field.name: field for field in step_fields(kind)}
    data = data or {}
    # In the definition's order, whatever order the keys were sent in; keys it does not define last.
    keys = [name for name in fields if name in data] + [key for key in data if key not in fields]
    lines = []
    for key in keys:
        value = data[key]
        field = fields.get(key)
        if field is None:
            lines.append((key, str(value)))
        elif field.type == FieldType.BOOL:
            lines.append((str(field.label), _("yes") if value else _("no")))
        else:
            lines.append((str(field.label), f"{value}{_unit(field)}"))
    return lines


def schema_description() -> str:
    """The definitions as text for the API schema: each step kind's fields with type, unit and range."""
    lines = []
    for kind in BuildStepKind:
        fields = step_fields(kind)
        if not fields:
            lines.append(f"- `{kind.value}`: no fields (send `{{}}`).")
            continue
        parts = []
        for field in fields:
            bits = [field.type]
            if field.unit:
                bits.append(field.unit)
            if field.min is not None or field.max is not None:
                low = "" if field.min is None else field.min
                high = "" if field.max is None else field.max
                bits.append(f"{low}–{high}")
            if field.choices:
                bits.append(" | ".join(field.choices))
            if field.required:
                bits.append("required")
            parts.append(f"`{field.name}` ({', '.join(bits)})")
        lines.append(f"- `{kind.value}`: " + "; ".join(parts))
    return "\n".join(lines)
