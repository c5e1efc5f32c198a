"""ROI assessments (versioned, computed by `orders.formulas`) and the customer's workload for VRAM sizing."""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from orders import formulas
from orders.models import (
    ROI_INPUT_FIELDS,
    WORKLOAD_FIELDS,
    Order,
    ROIAssessment,
    Workload,
)
from werkbank.audit import audit, audit_value, user_or_none
from werkbank.errors import InvalidInput
from werkbank.types import Actor


def roi_inputs(**values: Any) -> formulas.ROIInputs:
    """Build the pure module's inputs; a bad value is an InvalidInput naming its field."""
    unknown = set(values) - set(ROI_INPUT_FIELDS) - {"target_payback_months"}
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "is not an ROI input.")
    values.setdefault("target_payback_months", settings.WERKBANK_PAYBACK_TARGET_MONTHS)
    # Any: the values are the caller's, as given; the dataclass checks each against its bounds.
    converted: dict[str, Any] = {
        key: (
            None if value is None else int(value) if key in {"gpu_count", "horizon_months"} else float(value)
        )
        for key, value in values.items()
    }
    try:
        return formulas.ROIInputs(**converted)
    except TypeError as exc:  # a required input is missing
        raise InvalidInput("inputs", str(exc)) from exc
    except formulas.FormulaInputError as exc:
        raise InvalidInput(exc.field, exc.message) from exc


def roi_preview(**values: Any) -> formulas.ROIResult:
    """Compute an ROI without saving anything."""
    inputs = roi_inputs(**values)
    try:
        return formulas.roi(inputs)
    except formulas.FormulaInputError as exc:
        raise InvalidInput(exc.field, exc.message) from exc


def _quantized(value: float, places: str) -> Decimal:
    return Decimal(str(value)).quantize(Decimal(places), rounding=ROUND_HALF_UP)


def _decimal(value: float | None, places: str) -> Decimal | None:
    if value is None or math.isinf(value) or math.isnan(value):
        return None
    return _quantized(value, places)


@transaction.atomic
def roi_assess(
    *, order: Order, actor: Actor, currency: str = "EUR", note: str = "", **values: Any
) -> ROIAssessment:
    """Save a new version of the order's ROI assessment, with its computed outputs."""
    locked = Order.objects.select_for_update().get(pk=order.pk)
    result = roi_preview(**values)
    inputs = roi_inputs(**values)
    version = (locked.roi_assessments.aggregate(last=Max("version"))["last"] or 0) + 1
    assessment = ROIAssessment.objects.create(
        order=locked,
        version=version,
        created_by=user_or_none(actor),
        note=note,
        currency=currency,
        **{key: values[key] for key in ROI_INPUT_FIELDS if key in values},
        target_payback_months=_quantized(inputs.target_payback_months, "0.1"),  # finite: ROIInputs bounds it
        hours_per_month=result.hours_per_month,
        revenue_month=_decimal(result.revenue_month, "0.01"),
        energy_month=_decimal(result.energy_month, "0.01"),
        net_month=_decimal(result.net_month, "0.01"),
        payback_months=_decimal(result.payback_months, "0.01"),
        npv=_decimal(result.npv, "0.01"),
        irr_annual=_decimal(result.irr_annual, "0.0001"),
        breakeven_utilization_target=_decimal(result.breakeven_utilization_target, "0.0001"),
        breakeven_utilization_opex=_decimal(result.breakeven_utilization_opex, "0.0001"),
        buy_vs_rent_breakeven_utilization=_decimal(result.buy_vs_rent_breakeven_utilization, "0.0001"),
    )
    audit(
        actor=actor,
        verb="order.roi_assess",
        obj=locked,
        after={
            "version": version,
            "payback_months": str(assessment.payback_months)
            if assessment.payback_months is not None
            else "never",
            "net_month": str(assessment.net_month),
        },
        note=note,
    )
    return assessment


ARCHITECTURE_FIELDS = ("params_b", "layers", "kv_heads", "head_dim")


@transaction.atomic
def workload_set(*, order: Order, actor: Actor, **values: Any) -> Workload:
    """Record (or replace) the customer's workload for the VRAM sizing check."""
    from orders.selectors import sizing_inputs

    locked = Order.objects.select_for_update().get(pk=order.pk)
    unknown = set(values) - set(WORKLOAD_FIELDS)
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "is not a workload field.")
    preset = values.get("preset") or ""
    if preset and preset not in formulas.PRESETS:
        raise InvalidInput(
            "preset", f"unknown preset {preset!r}; known: {', '.join(sorted(formulas.PRESETS))}."
        )
    if not preset:
        for name in ARCHITECTURE_FIELDS:
            if name == "kv_heads" and values.get("mla_latent_dim"):
                continue
            if values.get(name) in (None, ""):
                raise InvalidInput(name, "is required when no preset is given.")
    workload = Workload.objects.filter(order=locked).first()
    before = {key: audit_value(getattr(workload, key)) for key in WORKLOAD_FIELDS} if workload else {}
    if workload is None:
        workload = Workload(order=locked)
    for key in WORKLOAD_FIELDS:
        if key in values:
            setattr(workload, key, values[key] if values[key] is not None or key != "preset" else "")
    try:
        sizing_inputs(workload=workload, order=locked)
    except formulas.FormulaInputError as exc:
        raise InvalidInput(exc.field, exc.message) from exc
    workload.save()
    audit(
        actor=actor,
        verb="order.workload_set",
        obj=locked,
        before=before,
        after={key: audit_value(getattr(workload, key)) for key in WORKLOAD_FIELDS},
    )
    return workload
