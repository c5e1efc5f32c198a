"""Order reads: the checks of the approval gate, computed from the order, its configuration and workload.

The arithmetic lives in `orders.formulas` (pure, no Django); this module feeds it from the database.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import QuerySet, prefetch_related_objects
from django.utils import formats
from django.utils.translation import gettext, gettext_lazy

from inventory.choices import PartCategory
from orders import formulas, gates
from orders.choices import REASON_REQUIRED, TRANSITION_ACTIONS, TRANSITIONS, OrderStatus
from orders.models import ROI_INPUT_LABELS, ROI_STORED_INPUTS, Order, ROIAssessment, Workload
from werkbank.audiences import CUSTOMER_ORDER_VERBS, Audience
from werkbank.models import AuditEvent


@dataclass(frozen=True)
class GateCheck:
    """One check of the approval gate: its verdict, a sentence with the numbers, and the numbers."""

    name: str
    ok: bool
    summary: str
    numbers: dict[str, Any] = field(default_factory=dict)


def _prefetched(instance: Any, name: str) -> bool:
    return name in getattr(instance, "_prefetched_objects_cache", {})


def latest_assessment(*, order: Order) -> ROIAssessment | None:
    """The ROI assessment that counts: the highest version (from the prefetched versions when the caller
    prefetched `roi_assessments`, as `transition_checks_many` does)."""
    if _prefetched(order, "roi_assessments"):
        return max(order.roi_assessments.all(), key=lambda assessment: assessment.version, default=None)
    return order.roi_assessments.order_by("-version").first()


def order_workload(*, order: Order) -> Workload | None:
    """The order's workload, or None (no query where the caller selected `workload` with the order)."""
    try:
        return order.workload
    except Workload.DoesNotExist:
        return None


def configuration_lines(*, order: Order) -> list[Any]:
    """The lines of the order's configuration with their parts (no query where the caller prefetched
    `configuration__lines__part`)."""
    if _prefetched(order.configuration, "lines"):
        return list(order.configuration.lines.all())
    return list(order.configuration.lines.select_related("part"))


def configuration_gpus(*, order: Order) -> tuple[int, float | None]:
    """How many GPUs one server of the order has, and the VRAM of each (GB)."""
    gpu_lines = [line for line in configuration_lines(order=order) if line.part.category == PartCategory.GPU]
    count = sum(line.quantity for line in gpu_lines)
    vram = min((line.part.vram_gb for line in gpu_lines if line.part.vram_gb), default=None)
    return count, float(vram) if vram is not None else None


def configuration_load_w(*, order: Order) -> int:
    """The sum of the parts' TDP × quantity of one server (DC side)."""
    return sum(
        line.part.tdp_w * line.quantity
        for line in configuration_lines(order=order)
        if line.part.tdp_w is not None
    )


def power_inputs(*, order: Order) -> formulas.PowerInputs:
    configuration = order.configuration
    return formulas.PowerInputs(
        psu_count=configuration.psu_count,
        psu_rating_w=configuration.psu_rating_w,
        redundant=configuration.psu_redundant,
        load_w=configuration_load_w(order=order),
        efficiency=settings.WERKBANK_PSU_EFFICIENCY,
        headroom=settings.WERKBANK_PSU_HEADROOM,
        circuit_v=order.circuit_v,
        circuit_a=order.circuit_a,
        phases=order.circuit_phases,
    )


def order_power_budget(*, order: Order) -> formulas.PowerResult:
    """The power budget of one server of the order."""
    return formulas.power_budget(power_inputs(order=order))


def sizing_inputs(*, workload: Workload, order: Order) -> formulas.SizingInputs:
    gpu_count, vram_gb = configuration_gpus(order=order)
    common: dict[str, Any] = {  # the fields both ways share; SizingInputs checks each
        "weights_dtype": workload.weights_dtype,
        "kv_dtype": workload.kv_dtype,
        "context_tokens": workload.context_tokens,
        "concurrency": workload.concurrency,
        "overhead_fraction": float(workload.overhead_fraction),
        "tensor_parallel_gpus": workload.tensor_parallel_gpus,
        "gpu_vram_gb": vram_gb,
        "gpu_count": gpu_count or None,
    }
    if workload.preset:
        return formulas.sizing_inputs_from_preset(workload.preset, **common)
    return formulas.SizingInputs(
        params_b=float(workload.params_b) if workload.params_b is not None else 0.0,
        layers=workload.layers or 0,
        kv_heads=workload.kv_heads or 0,
        head_dim=workload.head_dim or 0,
        mla_latent_dim=workload.mla_latent_dim,
        **common,
    )


def order_sizing(*, order: Order) -> formulas.SizingResult | None:
    """The VRAM sizing of the order's workload on its configuration's GPUs; None without a workload."""
    workload = order_workload(order=order)
    if workload is None:
        return None
    return formulas.sizing(sizing_inputs(workload=workload, order=order))


def _fmt(value: float | None, unit: str = "", digits: int = 1) -> str:
    """A figure with `digits` decimals and grouped thousands in the active language's format ("6,400 W",
    German "6.400 W"). Rounded first: Django's number_format cuts a float's extra decimals off."""
    if value is None:
        return "—"
    number = formats.number_format(round(value, digits), digits, use_l10n=True, force_grouping=True)
    return f"{number}{unit}"


def _fmt_g(value: float) -> str:
    """A setting such as a target or a factor as Python's `g` format writes it, with the active language's
    decimal separator ("0.9", German "0,9")."""
    return f"{value:g}".replace(".", formats.get_format("DECIMAL_SEPARATOR"))


def approval_checks(*, order: Order) -> list[GateCheck]:
    """Every check of the approval gate, passed or failed, with its numbers.

    1. The latest ROI assessment pays back within the target (setting WERKBANK_PAYBACK_TARGET_MONTHS).
    2. The workload, when one is given, fits the configuration's VRAM per GPU.
    3. The power budget holds: the DC load (TDP sum) within the usable PSU power × headroom, and the wall
       power (DC load / efficiency) within the circuit's continuous limit when a circuit is given.
    """
    checks = [_roi_check(order=order)]
    vram = _vram_check(order=order)
    if vram is not None:
        checks.append(vram)
    return [*checks, *_power_checks(order=order)]


def _roi_check(*, order: Order) -> GateCheck:
    """Check 1: the latest ROI assessment pays back within the target."""
    target = settings.WERKBANK_PAYBACK_TARGET_MONTHS
    assessment = latest_assessment(order=order)
    if assessment is None:
        return GateCheck("roi", False, gettext("No ROI assessment yet: add one before approval."))
    payback = float(assessment.payback_months) if assessment.payback_months is not None else None
    ok = payback is not None and payback <= target
    numbers = {
        "version": assessment.version,
        "payback": _fmt(payback),
        "target": _fmt_g(target),
        "net": formats.number_format(assessment.net_month, use_l10n=True, force_grouping=True),
        "currency": assessment.currency,
        "hours": assessment.hours_per_month,
    }
    summary = (
        gettext(
            "ROI v%(version)s: payback %(payback)s months against a target of %(target)s months "
            "(net %(net)s %(currency)s/month, H = %(hours)s h)."
        )
        if payback is not None
        else gettext(
            "ROI v%(version)s: never pays back (net %(net)s %(currency)s/month ≤ 0); the target is "
            "%(target)s months."
        )
    ) % numbers
    return GateCheck(
        "roi",
        ok,
        summary,
        {
            "version": assessment.version,
            "payback_months": payback,
            "target_months": target,
            "net_month": float(assessment.net_month),
        },
    )


def _vram_check(*, order: Order) -> GateCheck | None:
    """Check 2: the workload fits the VRAM per GPU; None when the order gives no workload."""
    sizing = order_sizing(order=order)
    if sizing is None:
        return None
    if sizing.fits is None:
        return GateCheck("vram", False, gettext("The configuration has no GPU with a known VRAM size."))
    return GateCheck(
        "vram",
        bool(sizing.fits),
        gettext(
            "Workload needs %(per_gpu)s per GPU (%(per_gpu_gib)s; weights %(weights)s, KV cache "
            "%(kv_cache)s, overhead %(overhead)s in total); headroom %(headroom)s per GPU."
        )
        % {
            "per_gpu": _fmt(sizing.per_gpu_gb, " GB"),
            "per_gpu_gib": _fmt(sizing.per_gpu_gib, " GiB"),
            "weights": _fmt(sizing.weights_gb, " GB"),
            "kv_cache": _fmt(sizing.kv_cache_gb, " GB"),
            "overhead": _fmt(sizing.overhead_gb, " GB"),
            "headroom": _fmt(sizing.headroom_gb, " GB"),
        },
        {
            "per_gpu_gb": sizing.per_gpu_gb,
            "total_gb": sizing.total_gb,
            "headroom_gb": sizing.headroom_gb,
        },
    )


def _power_checks(*, order: Order) -> list[GateCheck]:
    """Check 3: the PSU check, and the circuit check when the order gives a circuit."""
    checks: list[GateCheck] = []
    power_in = power_inputs(order=order)
    power = formulas.power_budget(power_in)
    checks.append(
        GateCheck(
            "psu",
            bool(power.psu_ok),
            gettext(
                "PSU load %(load)s DC (TDP sum) against %(usable_with_headroom)s usable with headroom "
                "%(headroom)s (%(usable)s usable of %(installed)s installed); margin %(margin)s "
                "(%(margin_pct)s)."
            )
            % {
                "load": _fmt(power.psu_load_w, " W", 0),
                "usable_with_headroom": _fmt(power.usable_with_headroom_w, " W", 0),
                "headroom": _fmt_g(power_in.headroom),
                "usable": _fmt(power.usable_w, " W", 0),
                "installed": _fmt(power.installed_w, " W", 0),
                "margin": _fmt(power.psu_margin_w, " W", 0),
                "margin_pct": _fmt(power.psu_margin_pct, " %"),
            },
            {
                "psu_load_w": power.psu_load_w,
                "usable_w": power.usable_w,
                "usable_with_headroom_w": power.usable_with_headroom_w,
                "psu_margin_w": power.psu_margin_w,
            },
        )
    )
    if power.circuit_ok is not None:
        source = (
            gettext("measured")
            if power.wall_power_measured
            else gettext("DC load %(load)s / efficiency %(efficiency)s")
            % {"load": _fmt(power.psu_load_w, " W", 0), "efficiency": _fmt_g(power_in.efficiency)}
        )
        checks.append(
            GateCheck(
                "circuit",
                bool(power.circuit_ok),
                gettext(
                    "Wall power %(wall)s (%(source)s) against the circuit's continuous limit %(limit)s "
                    "(80 %% of %(phases)s× %(volts)s V × %(amps)s A); margin %(margin)s (%(margin_pct)s)."
                )
                % {
                    "wall": _fmt(power.wall_power_w, " W", 0),
                    "source": source,
                    "limit": _fmt(power.circuit_continuous_w, " W", 0),
                    "phases": order.circuit_phases,
                    "volts": order.circuit_v,
                    "amps": order.circuit_a,
                    "margin": _fmt(power.circuit_margin_w, " W", 0),
                    "margin_pct": _fmt(power.circuit_margin_pct, " %"),
                },
                {
                    "wall_power_w": power.wall_power_w,
                    "circuit_continuous_w": power.circuit_continuous_w,
                    "circuit_margin_w": power.circuit_margin_w,
                },
            )
        )
    return checks


ROI_OUTPUT_LABELS = [
    ("hours_per_month", gettext_lazy("H, hours per month")),
    ("revenue_month", gettext_lazy("Revenue per month = N × H × U × P × (1 − f)")),
    ("energy_month", gettext_lazy("Energy per month = kW_avg × H × PUE × c")),
    ("net_month", gettext_lazy("Net per month = revenue − energy − colo − other")),
    ("payback_months", gettext_lazy("Payback (months) = capex / net")),
    ("npv", gettext_lazy("NPV over the horizon")),
    ("irr_annual", gettext_lazy("IRR per year")),
    ("breakeven_utilization_target", gettext_lazy("Utilisation for the target payback")),
    ("breakeven_utilization_opex", gettext_lazy("Utilisation at which net = 0")),
    ("buy_vs_rent_breakeven_utilization", gettext_lazy("Buy-vs-rent break-even utilisation")),
]


def order_gate_report(*, order: Order) -> dict[str, Any]:
    """Everything the admin and the PM page show about the gate: checks, ROI, sizing and power with inputs."""
    assessment = latest_assessment(order=order)
    workload = order_workload(order=order)
    power_in = power_inputs(order=order)
    report: dict[str, Any] = {
        "order": order,
        "checks": approval_checks(order=order),
        "assessment": assessment,
        "workload": workload,
        "sizing": order_sizing(order=order) if workload else None,
        "power_inputs": power_in,
        "power": formulas.power_budget(power_in),
    }
    report["failed_checks"] = [check for check in report["checks"] if not check.ok]
    report["approvable"] = not report["failed_checks"]
    if assessment is not None:
        report["roi_inputs"] = [(label, getattr(assessment, key)) for key, label in ROI_INPUT_LABELS]
        report["roi_outputs"] = [(label, getattr(assessment, key)) for key, label in ROI_OUTPUT_LABELS]
    return report


def assessment_result(*, assessment: ROIAssessment) -> formulas.ROIResult:
    """Recompute a saved assessment from its stored inputs (for the cash-flow series, which is not stored)."""
    values = {field: getattr(assessment, field) for field in ROI_STORED_INPUTS}
    converted: dict[str, Any] = {  # the stored Decimals as floats; ROIInputs checks each
        key: (None if value is None else value if isinstance(value, int) else float(value))
        for key, value in values.items()
    }
    return formulas.roi(formulas.ROIInputs(**converted))


# --- Transition checks ---------------------------------------------------------------------------------


def bill_of_materials_missing(*, order: Order) -> list[str]:
    """What the configuration lacks before the order may go to ROI review: a GPU line and a chassis line."""
    categories = {line.part.category for line in configuration_lines(order=order)}
    lacking = (
        (PartCategory.GPU, gettext("a GPU line on configuration %(configuration)s")),
        (PartCategory.CHASSIS, gettext("a chassis line on configuration %(configuration)s")),
    )
    return [
        sentence % {"configuration": order.configuration.name}
        for category, sentence in lacking
        if category not in categories
    ]


def purchasing_data_missing(*, lines: Iterable[Any]) -> list[str]:
    """Configuration lines whose part cannot be ordered yet: no preferred supplier, or no list price."""
    lines = list(lines)
    return [
        gettext("%(mpn)s: no preferred supplier") % {"mpn": line.part.mpn}
        for line in lines
        if line.part.preferred_supplier_id is None
    ] + [
        gettext("%(mpn)s: no list price") % {"mpn": line.part.mpn}
        for line in lines
        if line.part.list_price is None
    ]


@dataclass(frozen=True)
class TransitionCheck:
    """One transition the order's status allows, and what still blocks it.

    `overridable`: a PM may go ahead anyway with a written reason (the approval gate). `needs_reason`: the
    transition itself asks for a written reason (reject, cancel).
    """

    action: str
    target: str
    ready: bool
    missing: list[str]
    overridable: bool = False
    needs_reason: bool = False


def _own_missing(*, order: Order, target: str) -> tuple[list[str], bool]:
    """The orders app's own preconditions of a target, and whether a PM may override them."""
    if target == OrderStatus.ROI_REVIEW:
        missing = bill_of_materials_missing(order=order)
        if not missing:
            return [], False
        lacks = functools.reduce(
            lambda first, second: gettext("%(first)s and %(second)s") % {"first": first, "second": second},
            missing,
        )
        return [gettext("The bill of materials lacks %(missing)s.") % {"missing": lacks}], False
    if target == OrderStatus.APPROVED:
        return [check.summary for check in approval_checks(order=order) if not check.ok], True
    if target == OrderStatus.PROCUREMENT:
        lines = configuration_lines(order=order)
        return [
            gettext("Part %(entry)s.") % {"entry": entry} for entry in purchasing_data_missing(lines=lines)
        ], False
    return [], False


def transition_checks(*, order: Order) -> list[TransitionCheck]:
    """For each transition the order's status allows, what is still missing: the orders app's own
    preconditions, then every check the apps above registered in `orders.gates`. The transition services
    refuse with the same sentences."""
    return transition_checks_many(orders=[order], prefetch=False)[order.pk]


def transition_checks_many(
    *, orders: Sequence[Order], prefetch: bool = True
) -> dict[int, list[TransitionCheck]]:
    """`transition_checks` of many orders, `{order id: checks}`, in a fixed number of queries however many
    orders there are: the orders' configurations, lines, parts, ROI versions and workloads are read once
    for all (`prefetch`), and every gate answers in bulk (`orders.gates.missing_for_many`)."""
    orders = list(orders)
    if prefetch and orders:
        prefetch_related_objects(orders, "configuration__lines__part", "roi_assessments", "workload")
    actions = {
        order.pk: [(action, target) for action, target in TRANSITION_ACTIONS.items() if target in allowed]
        for order in orders
        for allowed in [TRANSITIONS[order.status]]
    }
    targets = sorted({target for pairs in actions.values() for _, target in pairs})
    gate_missing = {
        target: gates.missing_for_many(
            orders=[order for order in orders if any(to == target for _, to in actions[order.pk])],
            target=target,
        )
        for target in targets
    }
    checks: dict[int, list[TransitionCheck]] = {}
    for order in orders:
        checks[order.pk] = []
        for action, target in actions[order.pk]:
            own, overridable = _own_missing(order=order, target=target)
            missing = own + gate_missing[target][order.pk]
            checks[order.pk].append(
                TransitionCheck(
                    action=action,
                    target=target,
                    ready=not missing,
                    missing=missing,
                    overridable=overridable and bool(own),
                    needs_reason=action in REASON_REQUIRED,
                )
            )
    return checks


def order_events(*, order: Order, audiences: frozenset[Audience]) -> QuerySet[AuditEvent]:
    """The order's audit timeline as `audiences` may receive it: PMs every event; anyone else the
    customer-facing ones (`werkbank.audiences.CUSTOMER_ORDER_VERBS`: the order opened, its status changes).
    The serializer then leaves out what the events' readers may not receive (notes, non-status details)."""
    events = AuditEvent.objects.for_object(order).select_related("actor")
    if Audience.PM not in audiences:
        events = events.filter(verb__in=CUSTOMER_ORDER_VERBS)
    return events
