"""Orders: opening a draft order and editing its terms while it is a draft."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from orders.choices import (
    EDITABLE,
    OrderStatus,
    WarrantyTerm,
)
from orders.models import (
    Order,
    ServerConfiguration,
)
from werkbank.audit import audit, audit_value, user_or_none
from werkbank.choices import OrganizationKind
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import Organization
from werkbank.services import next_reference
from werkbank.types import Actor

#: The shortest burn-in any customer is promised: all GPUs under full load for 72 h (seed 001).
MIN_BURNIN_HOURS = 72


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


def _check_burnin_hours(burnin_hours: int) -> None:
    if burnin_hours < MIN_BURNIN_HOURS:
        raise InvalidInput(
            "burnin_hours",
            f"must be at least {MIN_BURNIN_HOURS}: every customer is promised 72 h of burn-in.",
        )


@transaction.atomic
def order_create(
    *,
    actor: Actor,
    customer: Organization,
    configuration: ServerConfiguration,
    server_count: int,
    warranty_months: int = WarrantyTerm.THREE_YEARS,
    notes: str = "",
    circuit_v: int | None = None,
    circuit_a: int | None = None,
    circuit_phases: int = 1,
    burnin_hours: int = MIN_BURNIN_HOURS,
) -> Order:
    """Open a draft order with the next reference of the year, WB-YYYY-NNNN. `burnin_hours` is the burn-in
    promised to the customer: at least 72 h (seed 001), more where the customer asks for it."""
    _check_customer(customer)
    _check_terms(server_count=server_count, warranty_months=warranty_months)
    _check_burnin_hours(burnin_hours)
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
        burnin_hours=burnin_hours,
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
def order_update(*, order: Order, actor: Actor, **fields: Any) -> Order:
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
        "burnin_hours",
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
    if "burnin_hours" in fields:
        _check_burnin_hours(fields["burnin_hours"])
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
    before = {key: audit_value(getattr(locked, key)) for key in fields}
    for key, value in fields.items():
        setattr(locked, key, value)
    if fields:
        locked.save(update_fields=[*fields, "updated_at"])
    audit(
        actor=actor,
        verb="order.update",
        obj=locked,
        before=before,
        after={key: audit_value(value) for key, value in fields.items()},
    )
    return locked
