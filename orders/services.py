"""Order services: configurations, orders, and one function per status transition.

Every service is atomic, re-reads the row it changes under a lock, checks the transition map and its
preconditions, and writes an audit event in the same transaction.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import Max
from django.template.loader import render_to_string
from django.utils import translation

from inventory.choices import PartCategory
from inventory.models import Part
from inventory.services import po_create
from orders import formulas
from orders.choices import EDITABLE, STATUS_LABELS_DE, TRANSITIONS, OrderStatus, WarrantyTerm
from orders.models import (
    ConfigurationLine,
    Order,
    OrderPurchaseOrder,
    ROIAssessment,
    ServerConfiguration,
    StatusNotice,
    Workload,
)
from orders.signals import order_transitioned
from werkbank.audit import audit, user_or_none
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent, Organization
from werkbank.services import next_reference
from werkbank.tasks import enqueue_on_commit
from werkbank.transitions import require_transition

# --- Configurations ----------------------------------------------------------------------------------


def _check_psu_layout(*, psu_count: int, psu_rating_w: int, psu_redundant: int) -> None:
    if psu_count < 1:
        raise InvalidInput("psu_count", "must be at least 1.")
    if psu_rating_w < 1:
        raise InvalidInput("psu_rating_w", "must be a positive number of watts.")
    if not 0 <= psu_redundant < psu_count:
        raise InvalidInput(
            "psu_redundant", f"must be at least 0 and fewer than the {psu_count} installed PSUs."
        )


def _replace_lines(
    configuration: ServerConfiguration, lines: Iterable[tuple[Part, int]]
) -> list[dict[str, Any]]:
    seen: set[int] = set()
    rows = []
    for part, quantity in lines:
        if part.pk in seen:
            raise InvalidInput(
                "lines", f"part {part.mpn} is listed twice; give it once with its total quantity."
            )
        if quantity < 1:
            raise InvalidInput("lines", f"quantity of {part.mpn} must be at least 1.")
        seen.add(part.pk)
        rows.append(ConfigurationLine(configuration=configuration, part=part, quantity=quantity))
    if not rows:
        raise InvalidInput("lines", "a configuration needs at least one bill-of-materials line.")
    configuration.lines.all().delete()
    ConfigurationLine.objects.bulk_create(rows)
    return [{"part": row.part.mpn, "quantity": row.quantity} for row in rows]


@transaction.atomic
def configuration_create(
    *,
    actor: Any,
    name: str,
    psu_count: int,
    psu_rating_w: int,
    psu_redundant: int,
    lines: Iterable[tuple[Part, int]],
    description: str = "",
) -> ServerConfiguration:
    """Create a configuration with its bill of materials."""
    _check_psu_layout(psu_count=psu_count, psu_rating_w=psu_rating_w, psu_redundant=psu_redundant)
    if ServerConfiguration.objects.filter(name=name).exists():
        raise InvalidInput("name", f"a configuration named {name!r} already exists.")
    configuration = ServerConfiguration.objects.create(
        name=name,
        description=description,
        psu_count=psu_count,
        psu_rating_w=psu_rating_w,
        psu_redundant=psu_redundant,
    )
    bom = _replace_lines(configuration, lines)
    audit(
        actor=actor,
        verb="configuration.create",
        obj=configuration,
        after={"psu": f"{psu_count}x{psu_rating_w}W N+{psu_redundant}", "lines": bom},
    )
    return configuration


@transaction.atomic
def configuration_update(
    *,
    configuration: ServerConfiguration,
    actor: Any,
    lines: Iterable[tuple[Part, int]] | None = None,
    **fields: Any,
) -> ServerConfiguration:
    """Change a configuration. Once an order past draft uses it, it is frozen: copy it instead."""
    locked = ServerConfiguration.objects.select_for_update().get(pk=configuration.pk)
    committed = list(
        locked.orders.exclude(status__in=[OrderStatus.DRAFT, OrderStatus.CANCELLED]).values_list(
            "reference", flat=True
        )
    )
    if committed:
        raise RuleViolation(
            f"Configuration {locked.name} is used by orders past draft ({', '.join(committed)}); "
            "copy it into a new configuration instead of changing it.",
            code="configuration_frozen",
        )
    allowed = {"name", "description", "psu_count", "psu_rating_w", "psu_redundant"}
    unknown = set(fields) - allowed
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "cannot be changed here.")
    before = {key: getattr(locked, key) for key in fields}
    for key, value in fields.items():
        setattr(locked, key, value)
    _check_psu_layout(
        psu_count=locked.psu_count, psu_rating_w=locked.psu_rating_w, psu_redundant=locked.psu_redundant
    )
    if (
        "name" in fields
        and ServerConfiguration.objects.exclude(pk=locked.pk).filter(name=locked.name).exists()
    ):
        raise InvalidInput("name", f"a configuration named {locked.name!r} already exists.")
    after: dict[str, Any] = dict(fields)
    if fields:
        locked.save(update_fields=list(fields))
    if lines is not None:
        before["lines"] = [{"part": line.part.mpn, "quantity": line.quantity} for line in locked.lines.all()]
        after["lines"] = _replace_lines(locked, lines)
    audit(actor=actor, verb="configuration.update", obj=locked, before=before, after=after)
    return locked


# --- Orders ------------------------------------------------------------------------------------------


def _check_customer(customer: Organization) -> None:
    if customer.kind != OrganizationKind.CUSTOMER:
        raise InvalidInput("customer", f"{customer.name} is an assembly partner, not a customer.")


def _check_circuit(*, circuit_v: int | None, circuit_a: int | None, circuit_phases: int) -> None:
    if (circuit_v is None) != (circuit_a is None):
        raise InvalidInput(
            "circuit_a" if circuit_a is None else "circuit_v",
            "give the circuit's voltage and breaker current together.",
        )
    if circuit_phases not in (1, 3):
        raise InvalidInput("circuit_phases", "must be 1 or 3.")


def _check_terms(*, server_count: int, warranty_months: int) -> None:
    if server_count < 1:
        raise InvalidInput("server_count", "must be at least 1.")
    if warranty_months not in WarrantyTerm.values:
        raise InvalidInput("warranty_months", "must be 36 or 60.")


@transaction.atomic
def order_create(
    *,
    actor: Any,
    customer: Organization,
    configuration: ServerConfiguration,
    server_count: int,
    warranty_months: int = WarrantyTerm.THREE_YEARS,
    notes: str = "",
    circuit_v: int | None = None,
    circuit_a: int | None = None,
    circuit_phases: int = 1,
) -> Order:
    """Open a draft order with the next reference of the year, WB-YYYY-NNNN."""
    _check_customer(customer)
    _check_terms(server_count=server_count, warranty_months=warranty_months)
    _check_circuit(circuit_v=circuit_v, circuit_a=circuit_a, circuit_phases=circuit_phases)
    order = Order.objects.create(
        circuit_v=circuit_v,
        circuit_a=circuit_a,
        circuit_phases=circuit_phases,
        reference=next_reference("WB"),
        customer=customer,
        configuration=configuration,
        server_count=server_count,
        warranty_months=warranty_months,
        notes=notes,
        created_by=user_or_none(actor),
    )
    audit(
        actor=actor,
        verb="order.create",
        obj=order,
        after={
            "status": order.status,
            "customer": customer.name,
            "configuration": configuration.name,
            "server_count": server_count,
            "warranty_months": warranty_months,
        },
    )
    return order


@transaction.atomic
def order_update(*, order: Order, actor: Any, **fields: Any) -> Order:
    """Change an order's terms while it is a draft (its circuit also in ROI review, its spares until
    procurement). The status changes only through transitions."""
    locked = Order.objects.select_for_update().get(pk=order.pk)
    circuit = {"circuit_v", "circuit_a", "circuit_phases"}
    allowed = {
        "customer",
        "configuration",
        "server_count",
        "warranty_months",
        "spare_percent",
        "notes",
        *circuit,
    }
    unknown = set(fields) - allowed
    if unknown:
        raise InvalidInput(
            sorted(unknown)[0], "cannot be changed here; status changes go through its actions."
        )
    # The circuit feeds the approval gate and the spares feed procurement: each may change until it is used.
    editable = set(EDITABLE)
    if set(fields) <= circuit | {"notes"}:
        editable |= {OrderStatus.ROI_REVIEW}
    elif set(fields) <= {"spare_percent", "notes"}:
        editable |= {OrderStatus.ROI_REVIEW, OrderStatus.APPROVED}
    terms = set(fields) - {"notes"}
    if terms and locked.status not in editable:
        raise RuleViolation(
            f"Order {locked.reference} is {locked.get_status_display().lower()}; "
            f"{', '.join(sorted(terms))} can no longer change.",
            code="order_not_editable",
        )
    if "spare_percent" in fields and not 0 <= fields["spare_percent"] <= 100:
        raise InvalidInput("spare_percent", "must be between 0 and 100.")
    if "customer" in fields:
        _check_customer(fields["customer"])
    _check_circuit(
        circuit_v=fields.get("circuit_v", locked.circuit_v),
        circuit_a=fields.get("circuit_a", locked.circuit_a),
        circuit_phases=fields.get("circuit_phases", locked.circuit_phases),
    )
    _check_terms(
        server_count=fields.get("server_count", locked.server_count),
        warranty_months=fields.get("warranty_months", locked.warranty_months),
    )
    before = {key: _audit_value(getattr(locked, key)) for key in fields}
    for key, value in fields.items():
        setattr(locked, key, value)
    if fields:
        locked.save(update_fields=[*fields, "updated_at"])
    audit(
        actor=actor,
        verb="order.update",
        obj=locked,
        before=before,
        after={key: _audit_value(value) for key, value in fields.items()},
    )
    return locked


def _audit_value(value: Any) -> Any:
    return str(value) if hasattr(value, "pk") else value


# --- Transitions -------------------------------------------------------------------------------------


def _transition(
    *,
    order: Order,
    actor: Any,
    target: str,
    verb: str,
    note: str = "",
    check: Callable[[Order], None] | None = None,
    details: dict[str, Any] | None = None,
) -> Order:
    locked = Order.objects.select_for_update().select_related("configuration").get(pk=order.pk)
    require_transition(
        transitions=TRANSITIONS,
        choices=OrderStatus,
        current=locked.status,
        target=target,
        subject=f"Order {locked.reference}",
        verb=verb,
    )
    if check is not None:
        check(locked)
    before = locked.status
    locked.status = target
    locked.save(update_fields=["status", "updated_at"])
    event = audit(
        actor=actor,
        verb=f"order.{verb}",
        obj=locked,
        before={"status": before},
        after={"status": target, **(details or {})},
        note=note,
    )
    order_transitioned.send(sender=Order, order=locked, actor=actor, before=before, after=target)
    _notify_on_commit(event)
    return locked


def _notify_on_commit(event: AuditEvent) -> None:
    from orders.tasks import order_status_notify_task

    enqueue_on_commit(order_status_notify_task, event_id=event.pk)


def _require_reason(reason: str, *, field: str = "reason") -> str:
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput(field, "a written reason is required.")
    return reason


def _check_bill_of_materials(order: Order) -> None:
    categories = set(order.configuration.lines.values_list("part__category", flat=True))
    missing = [
        f"a {label} line on configuration {order.configuration.name}"
        for category, label in ((PartCategory.GPU, "GPU"), (PartCategory.CHASSIS, "chassis"))
        if category not in categories
    ]
    if missing:
        raise RuleViolation(
            f"Order {order.reference} cannot go to ROI review: "
            f"the bill of materials lacks {' and '.join(missing)}.",
            missing=missing,
            code="incomplete_configuration",
        )


@transaction.atomic
def order_submit(*, order: Order, actor: Any, note: str = "") -> Order:
    """draft → roi_review: the configuration must name its GPUs and its chassis."""
    return _transition(
        order=order,
        actor=actor,
        target=OrderStatus.ROI_REVIEW,
        verb="submit",
        note=note,
        check=_check_bill_of_materials,
    )


def _approval_gate(order: Order) -> list[str]:
    from orders.selectors import approval_checks

    return [check.summary for check in approval_checks(order=order) if not check.ok]


@transaction.atomic
def order_approve(*, order: Order, actor: Any, note: str = "", override_reason: str = "") -> Order:
    """roi_review → approved, through the gate: the latest ROI pays back within the target, the workload
    fits the VRAM, and the power budget holds. A PM may override failed checks with a written reason,
    which is audited with the checks it overrode and shown on the order."""
    override_reason = (override_reason or "").strip()
    overridden: list[str] = []

    def gate(locked: Order) -> None:
        failed = _approval_gate(locked)
        if failed and not override_reason:
            raise RuleViolation(
                f"Order {locked.reference} cannot be approved: {len(failed)} check(s) failed. "
                + " ".join(failed)
                + " Fix them, or override with a written reason.",
                missing=failed,
                code="approval_gate",
            )
        overridden.extend(failed)

    approved = _transition(
        order=order, actor=actor, target=OrderStatus.APPROVED, verb="approve", note=note, check=gate
    )
    if overridden:
        approved.approval_override_reason = override_reason
        approved.save(update_fields=["approval_override_reason", "updated_at"])
        audit(
            actor=actor,
            verb="order.approve_override",
            obj=approved,
            before={"failed_checks": overridden},
            after={"override_reason": override_reason},
            note=override_reason,
        )
    return approved


@transaction.atomic
def order_reject(*, order: Order, actor: Any, reason: str) -> Order:
    """roi_review → rejected, with the reason recorded."""
    reason = _require_reason(reason)
    return _transition(order=order, actor=actor, target=OrderStatus.REJECTED, verb="reject", note=reason)


def procurement_plan(order: Order) -> dict[Any, list[tuple[Part, int, Decimal]]]:
    """The POs an order needs: configuration × servers, plus the order's spare percentage (rounded up per
    part), grouped by each part's preferred supplier. Refuses, listing them, parts with no preferred supplier
    or no list price."""
    lines = list(order.configuration.lines.select_related("part__preferred_supplier"))
    missing = [
        f"{line.part.mpn}: no preferred supplier" for line in lines if line.part.preferred_supplier_id is None
    ] + [f"{line.part.mpn}: no list price" for line in lines if line.part.list_price is None]
    if missing:
        raise RuleViolation(
            f"Order {order.reference} cannot be procured: {len(missing)} part(s) lack purchasing data. "
            + "; ".join(missing)
            + ".",
            missing=missing,
            code="purchasing_data_missing",
        )
    plan: dict[Any, list[tuple[Part, int, Decimal]]] = {}
    for line in lines:
        base = line.quantity * order.server_count
        # Integer arithmetic: ceil(base × (1 + spare/100)) without float rounding surprises.
        quantity = base + -(-base * order.spare_percent // 100)
        plan.setdefault(line.part.preferred_supplier, []).append((line.part, quantity, line.part.list_price))
    return plan


@transaction.atomic
def order_procure(
    *, order: Order, actor: Any, note: str = "", deliver_to: Organization | None = None
) -> Order:
    """approved → procurement: draft one purchase order per preferred supplier and link them to the order.

    The POs stay drafts for the PM to check and send; a non-EU supplier needs an override when it is sent.
    """
    created: list[str] = []

    def build(locked: Order) -> None:
        # Runs under the order's lock, before the status changes; its POs commit with the transition.
        for supplier, rows in procurement_plan(locked).items():
            po = po_create(
                actor=actor,
                supplier=supplier,
                lines=rows,
                deliver_to=deliver_to,
                notes=f"For order {locked.reference} ({locked.server_count} × {locked.configuration.name})",
            )
            OrderPurchaseOrder.objects.create(order=locked, purchase_order=po)
            created.append(po.number)

    return _transition(
        order=order,
        actor=actor,
        target=OrderStatus.PROCUREMENT,
        verb="procure",
        note=note,
        check=build,
        details={"purchase_orders": created},
    )


@transaction.atomic
def order_start_assembly(*, order: Order, actor: Any, note: str = "") -> Order:
    """procurement → assembly."""
    return _transition(
        order=order, actor=actor, target=OrderStatus.ASSEMBLY, verb="start_assembly", note=note
    )


@transaction.atomic
def order_start_burn_in(*, order: Order, actor: Any, note: str = "") -> Order:
    """assembly → burn_in."""
    return _transition(order=order, actor=actor, target=OrderStatus.BURN_IN, verb="start_burn_in", note=note)


@transaction.atomic
def order_start_deployment(*, order: Order, actor: Any, note: str = "") -> Order:
    """burn_in → deployment."""
    return _transition(
        order=order, actor=actor, target=OrderStatus.DEPLOYMENT, verb="start_deployment", note=note
    )


@transaction.atomic
def order_hand_over(*, order: Order, actor: Any, note: str = "") -> Order:
    """deployment → handed_over."""
    return _transition(order=order, actor=actor, target=OrderStatus.HANDED_OVER, verb="hand_over", note=note)


@transaction.atomic
def order_close(*, order: Order, actor: Any, note: str = "") -> Order:
    """handed_over → closed."""
    return _transition(order=order, actor=actor, target=OrderStatus.CLOSED, verb="close", note=note)


@transaction.atomic
def order_cancel(*, order: Order, actor: Any, reason: str) -> Order:
    """draft, roi_review, approved or procurement → cancelled, with the reason recorded."""
    reason = _require_reason(reason)
    return _transition(order=order, actor=actor, target=OrderStatus.CANCELLED, verb="cancel", note=reason)


#: The transition services by action name, for the API, the admin and the tests.
TRANSITION_SERVICES: dict[str, Callable[..., Order]] = {
    "submit": order_submit,
    "approve": order_approve,
    "reject": order_reject,
    "procure": order_procure,
    "start_assembly": order_start_assembly,
    "start_burn_in": order_start_burn_in,
    "start_deployment": order_start_deployment,
    "hand_over": order_hand_over,
    "close": order_close,
    "cancel": order_cancel,
}
#: Transitions that need a written reason instead of an optional note.
REASON_REQUIRED = frozenset({"reject", "cancel"})


# --- Notifications -----------------------------------------------------------------------------------


@transaction.atomic
def order_status_notice_send(*, event_id: int) -> StatusNotice | None:
    """E-mail the customer's members about one status transition, once.

    The notice row is unique per audit event and is written before the mail goes out, in the same
    transaction: a second delivery of the same task finds it and sends nothing. If sending fails, the row
    rolls back and the task's retry sends it.
    """
    event = AuditEvent.objects.select_related("actor").get(pk=event_id)
    order = Order.objects.select_related("customer").get(pk=int(event.object_id))
    recipients = sorted(
        {
            email
            for email in order.customer.memberships.filter(user__is_active=True).values_list(
                "user__email", flat=True
            )
            if email
        }
    )
    notice, created = StatusNotice.objects.get_or_create(
        event=event, defaults={"order": order, "recipients": recipients}
    )
    if not created:
        return None
    if recipients:
        language = order.customer.language or "en"
        labels = STATUS_LABELS_DE if language == "de" else {s.value: s.label for s in OrderStatus}
        context = {
            "order": order,
            "before": labels.get(event.before.get("status", ""), ""),
            "after": labels[event.after["status"]],
            "note": event.note,
            "when": event.created_at,
        }
        with translation.override(language):
            subject = render_to_string(f"emails/order_status_subject.{language}.txt", context).strip()
            body = render_to_string(f"emails/order_status.{language}.txt", context)
        send_mail(subject, body, None, recipients)
    return notice


# --- ROI assessments and workloads -------------------------------------------------------------------

ROI_INPUT_FIELDS = (
    "capex",
    "gpu_count",
    "price_per_gpu_hour",
    "utilization",
    "platform_fee",
    "power_active_kw",
    "power_idle_kw",
    "energy_price_kwh",
    "pue",
    "colo_month",
    "other_opex_month",
    "horizon_months",
    "discount_rate_annual",
    "residual_value",
    "rent_price_per_gpu_hour",
)


def roi_inputs(**values: Any) -> formulas.ROIInputs:
    """Build the pure module's inputs; a bad value is an InvalidInput naming its field."""
    unknown = set(values) - set(ROI_INPUT_FIELDS) - {"target_payback_months"}
    if unknown:
        raise InvalidInput(sorted(unknown)[0], "is not an ROI input.")
    values.setdefault("target_payback_months", settings.WERKBANK_PAYBACK_TARGET_MONTHS)
    converted = {
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


def _decimal(value: float | None, places: str) -> Decimal | None:
    if value is None or math.isinf(value) or math.isnan(value):
        return None
    return Decimal(str(value)).quantize(Decimal(places), rounding=ROUND_HALF_UP)


@transaction.atomic
def roi_assess(
    *, order: Order, actor: Any, currency: str = "EUR", note: str = "", **values: Any
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
        target_payback_months=_decimal(inputs.target_payback_months, "0.1"),
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


WORKLOAD_FIELDS = (
    "preset",
    "params_b",
    "layers",
    "kv_heads",
    "head_dim",
    "mla_latent_dim",
    "weights_dtype",
    "kv_dtype",
    "context_tokens",
    "concurrency",
    "tensor_parallel_gpus",
    "overhead_fraction",
)
ARCHITECTURE_FIELDS = ("params_b", "layers", "kv_heads", "head_dim")


@transaction.atomic
def workload_set(*, order: Order, actor: Any, **values: Any) -> Workload:
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
    before = {key: _audit_value(getattr(workload, key)) for key in WORKLOAD_FIELDS} if workload else {}
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
        after={key: _audit_value(getattr(workload, key)) for key in WORKLOAD_FIELDS},
    )
    return workload
