"""Order status transitions: one audited function per arrow of the lifecycle, behind the order gates."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import transaction
from django.utils import translation

from inventory.gates import po_quality_warnings
from inventory.models import Part, Supplier
from inventory.services import po_create
from orders import gates
from orders.choices import (
    TRANSITIONS,
    OrderStatus,
)
from orders.models import (
    Order,
    OrderPurchaseOrder,
)
from orders.selectors import bill_of_materials_missing, purchasing_data_missing
from orders.signals import order_transitioned
from werkbank.audit import audit
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent, Organization
from werkbank.tasks import enqueue_on_commit
from werkbank.transitions import record_transition, require_transition
from werkbank.types import Actor


def _transition(
    *,
    order: Order,
    actor: Actor,
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
    gate_missing = gates.missing_for(order=locked, target=target)
    if gate_missing:
        raise RuleViolation(
            f"Order {locked.reference} cannot {verb.replace('_', ' ')} yet. " + " ".join(gate_missing),
            missing=gate_missing,
            code="order_gate",
        )
    if check is not None:
        check(locked)
    before, event = record_transition(
        obj=locked,
        target=target,
        actor=actor,
        verb=f"order.{verb}",
        note=note,
        details=details,
        update_fields=("status", "updated_at"),
    )
    order_transitioned.send(sender=Order, order=locked, actor=actor, before=before, after=target)
    _notify_on_commit(event)
    return locked


def _notify_on_commit(event: AuditEvent) -> None:
    enqueue_on_commit("orders.tasks.order_status_notify_task", event_id=event.pk)


def _require_reason(reason: str, *, field: str = "reason") -> str:
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput(field, "a written reason is required.")
    return reason


def _check_bill_of_materials(order: Order) -> None:
    missing = bill_of_materials_missing(order=order)
    if missing:
        raise RuleViolation(
            f"Order {order.reference} cannot go to ROI review: "
            f"the bill of materials lacks {' and '.join(missing)}.",
            missing=missing,
            code="incomplete_configuration",
        )


@transaction.atomic
def order_submit(*, order: Order, actor: Actor, note: str = "") -> Order:
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
def order_approve(*, order: Order, actor: Actor, note: str = "", override_reason: str = "") -> Order:
    """roi_review → approved, through the gate: the latest ROI pays back within the target, the workload
    fits the VRAM, and the power budget holds. A PM may override failed checks with a written reason,
    which is audited with the checks it overrode and shown on the order. The checks' sentences speak the
    active language (the PM's page may be German); the audit row keeps them in English, as every stored
    text is."""
    override_reason = (override_reason or "").strip()
    overridden: list[str] = []

    def gate(locked: Order) -> None:
        _four_eyes(locked, actor)
        failed = _approval_gate(locked)
        if failed and not override_reason:
            raise RuleViolation(
                f"Order {locked.reference} cannot be approved: {len(failed)} check(s) failed. "
                + " ".join(failed)
                + " Fix them, or override with a written reason.",
                missing=failed,
                code="approval_gate",
            )
        if failed:
            with translation.override("en"):
                overridden.extend(_approval_gate(locked))

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


def _four_eyes(order: Order, actor: Actor) -> None:
    """With WERKBANK_APPROVAL_FOUR_EYES on, the PM who last submitted the order to ROI review does not
    approve it: the refusal names who may (the other active project managers)."""
    if not settings.WERKBANK_APPROVAL_FOUR_EYES:
        return
    submitted = (
        AuditEvent.objects.filter(
            content_type=ContentType.objects.get_for_model(Order),
            object_id=str(order.pk),
            verb="order.submit",
        )
        .order_by("-created_at", "-pk")
        .values_list("actor_id", flat=True)
        .first()
    )
    actor_id = getattr(actor, "pk", None)
    if submitted is None or submitted != actor_id:
        return
    others = list(
        get_user_model()
        .objects.filter(is_active=True, is_staff=True, groups__name=settings.WERKBANK_PM_GROUP)
        .exclude(pk=actor_id)
        .order_by("username")
        .values_list("username", flat=True)[:5]
    )
    who = ", ".join(others) if others else "none yet: add a second project manager"
    raise RuleViolation(
        f"Order {order.reference} was submitted to ROI review by {actor.get_username()}; "  # type: ignore[union-attr]
        f"another project manager must approve it (four eyes). Who may: {who}.",
        missing=[f"an approval by a project manager other than {actor.get_username()}"],  # type: ignore[union-attr]
        code="four_eyes",
    )


@transaction.atomic
def order_reject(*, order: Order, actor: Actor, reason: str) -> Order:
    """roi_review → rejected, with the reason recorded."""
    reason = _require_reason(reason)
    return _transition(order=order, actor=actor, target=OrderStatus.REJECTED, verb="reject", note=reason)


def procurement_plan(order: Order) -> dict[Supplier, list[tuple[Part, int, Decimal]]]:
    """The POs an order needs: configuration × servers, plus the order's spare percentage (rounded up per
    part), grouped by each part's preferred supplier. Refuses, listing them, parts with no preferred supplier
    or no list price."""
    lines = list(order.configuration.lines.select_related("part__preferred_supplier"))
    missing = purchasing_data_missing(lines=lines)
    if missing:
        raise RuleViolation(
            f"Order {order.reference} cannot be procured: {len(missing)} part(s) lack purchasing data. "
            + "; ".join(missing)
            + ".",
            missing=missing,
            code="purchasing_data_missing",
        )
    plan: dict[Supplier, list[tuple[Part, int, Decimal]]] = {}
    for line in lines:
        supplier, price = line.part.preferred_supplier, line.part.list_price
        assert supplier is not None and price is not None  # purchasing_data_missing refused the order
        base = line.quantity * order.server_count
        # Integer arithmetic: ceil(base × (1 + spare/100)) without float rounding surprises.
        quantity = base + -(-base * order.spare_percent // 100)
        plan.setdefault(supplier, []).append((line.part, quantity, price))
    return plan


@transaction.atomic
def order_procure(
    *, order: Order, actor: Actor, note: str = "", deliver_to: Organization | None = None
) -> Order:
    """approved → procurement: draft one purchase order per preferred supplier and link them to the order.

    The POs stay drafts for the PM to check and send; a non-EU supplier needs an override when it is sent,
    and so does a PO the quality checks flag (issue #29): their sentences, by PO number, go into the audit
    row (in English), and the PO shows them.
    """
    created: list[str] = []
    # Only a flagged PO adds the key, so the row of a procurement without flags is as it was.
    details: dict[str, Any] = {"purchase_orders": created}

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
            with translation.override("en"):
                warnings = po_quality_warnings(po)
            if warnings:
                details.setdefault("quality_warnings", {})[po.number] = warnings

    return _transition(
        order=order,
        actor=actor,
        target=OrderStatus.PROCUREMENT,
        verb="procure",
        note=note,
        check=build,
        details=details,
    )


@transaction.atomic
def order_start_assembly(*, order: Order, actor: Actor, note: str = "") -> Order:
    """procurement → assembly."""
    return _transition(
        order=order, actor=actor, target=OrderStatus.ASSEMBLY, verb="start_assembly", note=note
    )


@transaction.atomic
def order_start_burn_in(*, order: Order, actor: Actor, note: str = "") -> Order:
    """assembly → burn_in."""
    return _transition(order=order, actor=actor, target=OrderStatus.BURN_IN, verb="start_burn_in", note=note)


@transaction.atomic
def order_start_deployment(*, order: Order, actor: Actor, note: str = "") -> Order:
    """burn_in → deployment."""
    return _transition(
        order=order, actor=actor, target=OrderStatus.DEPLOYMENT, verb="start_deployment", note=note
    )


@transaction.atomic
def order_hand_over(*, order: Order, actor: Actor, note: str = "") -> Order:
    """deployment → handed_over."""
    return _transition(order=order, actor=actor, target=OrderStatus.HANDED_OVER, verb="hand_over", note=note)


@transaction.atomic
def order_close(*, order: Order, actor: Actor, note: str = "") -> Order:
    """handed_over → closed."""
    return _transition(order=order, actor=actor, target=OrderStatus.CLOSED, verb="close", note=note)


@transaction.atomic
def order_cancel(*, order: Order, actor: Actor, reason: str) -> Order:
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
