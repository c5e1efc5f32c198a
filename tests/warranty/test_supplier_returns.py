"""Supplier returns (issue #29): a failed component back to its supplier, open → shipped → closed, from a
claim or from the bench; the replacement serial booked into stock; the claim and the return independent."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from inventory.choices import ComponentStatus
from inventory.models import BatchLot, Component, PurchaseOrderLine, StockMovement
from inventory.services import component_move, component_receive_replacement
from tests.builds.bench_rig import GPU_L2, GPUS_L1
from tests.warranty.handover_rig import SPARE_GPU, recommission
from warranty.choices import ClaimStatus, FailureCause, FailureStage, SupplierReturnStatus
from warranty.models import Attribution, SupplierReturn, WarrantyClaim, WarrantyRecord
from warranty.services import (
    claim_approve,
    claim_close,
    claim_open,
    claim_ship_replacement,
    supplier_return_close,
    supplier_return_open,
    supplier_return_ship,
)
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def approved_claim(world, serial=GPUS_L1[0]) -> WarrantyClaim:
    record = WarrantyRecord.objects.get(server=world.server, serial=serial)
    claim = claim_open(record=record, actor=world.t.user_a, description="drops off the bus")
    return claim_approve(claim=claim, actor=world.t.pm)


def swapped_claim(world) -> WarrantyClaim:
    """A claim on GPU L1-1 whose replacement (the spare) went in: the old card is failed, in our hands."""
    claim = approved_claim(world)
    return claim_ship_replacement(claim=claim, actor=world.t.pm, component=world.component(SPARE_GPU))


def failed_on_the_bench(world, serial=GPU_L2) -> Component:
    """A GPU in stock found faulty (a burn-in fail or the bench): failed, never with a customer."""
    (component,) = component_move(
        components=[world.component(serial)], actor=world.t.pm, to_status=ComponentStatus.FAILED,
        reason="Burn-in: x8 link on every connector",
    )  # fmt: skip
    return component


def _verbs(obj) -> list[str]:
    return list(AuditEvent.objects.for_object(obj).order_by("pk").values_list("verb", flat=True))


def test_a_return_from_a_claim_brings_a_replacement_into_the_same_lot(handed):
    claim = swapped_claim(handed)
    old = handed.component(GPUS_L1[0])
    assert old.status == ComponentStatus.FAILED
    line = PurchaseOrderLine.objects.get(pk=old.po_line_id)

    opened = supplier_return_open(component=old, actor=handed.t.pm, reason="No PCIe link", claim=claim)
    assert opened.number.startswith(f"SR-{timezone.now().year}-") and len(opened.number) == 12
    assert opened.status == SupplierReturnStatus.OPEN and opened.supplier == old.lot.supplier
    claim.refresh_from_db()
    assert claim.supplier_return == opened and opened.claim == claim  # both ways

    shipped = supplier_return_ship(supplier_return=opened, actor=handed.t.pm, supplier_rma_number="MSI-77")
    old.refresh_from_db()
    assert shipped.status == SupplierReturnStatus.SHIPPED and shipped.shipped_at is not None
    assert old.status == ComponentStatus.RMA and old.holder is None and opened.number in old.location
    assert StockMovement.objects.filter(component=old, to_status=ComponentStatus.RMA).exists()

    # The customer's claim closes on its own while the card is at the supplier.
    recommission(handed.server, handed.component(SPARE_GPU))
    assert claim_close(claim=claim, actor=handed.t.pm).status == ClaimStatus.CLOSED
    shipped.refresh_from_db()
    assert shipped.status == SupplierReturnStatus.SHIPPED

    closed = supplier_return_close(
        supplier_return=shipped, actor=handed.t.pm, outcome="replacement", replacement_serial=" gpu-l1-9 "
    )
    new = closed.replacement
    assert closed.status == SupplierReturnStatus.CLOSED and closed.closed_at is not None
    assert new.serial == "gpu-l1-9" and new.status == ComponentStatus.IN_STOCK
    assert new.lot == old.lot and new.po_line == old.po_line and new.part == old.part
    assert new.holder is None and new.location == "Warehouse"
    assert new.replaces_return == closed
    line.refresh_from_db()
    assert line.quantity_received == PurchaseOrderLine.objects.get(pk=line.pk).quantity_received == 4
    old.refresh_from_db()
    assert old.status == ComponentStatus.SCRAPPED and "Kept by" in old.location
    movement = StockMovement.objects.get(component=new)
    assert movement.to_status == ComponentStatus.IN_STOCK and closed.number in movement.reason
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.CLOSED  # untouched by the return
    assert _verbs(closed) == ["supplier_return.open", "supplier_return.ship", "supplier_return.close"]
    assert _verbs(new) == ["component.receive_replacement"]


def test_the_return_closes_before_the_claim_and_leaves_it_alone(handed):
    claim = swapped_claim(handed)
    opened = supplier_return_open(
        component=handed.component(GPUS_L1[0]), actor=handed.t.pm, reason="dead", claim=claim
    )
    supplier_return_ship(supplier_return=opened, actor=handed.t.pm, supplier_rma_number="R-1")
    closed = supplier_return_close(
        supplier_return=opened, actor=handed.t.pm, outcome="credit", credit_amount=Decimal("1899.00")
    )
    assert closed.credit_amount == Decimal("1899.00") and closed.replacement is None
    claim.refresh_from_db()
    assert claim.status == ClaimStatus.REPLACEMENT_SHIPPED


def test_a_replacement_in_a_new_lot_on_the_same_purchase_order(handed):
    component = failed_on_the_bench(handed)
    opened = supplier_return_open(component=component, actor=handed.t.pm, reason="x8 link")
    assert opened.claim is None
    supplier_return_ship(supplier_return=opened, actor=handed.t.pm, supplier_rma_number="R-2")
    with pytest.raises(InvalidInput) as refused:
        supplier_return_close(
            supplier_return=opened, actor=handed.t.pm, outcome="replacement",
            replacement_serial="GPU-L9-1", lot_code="L9",
        )  # fmt: skip
    assert refused.value.field == "date_code"
    closed = supplier_return_close(
        supplier_return=opened, actor=handed.t.pm, outcome="replacement",
        replacement_serial="GPU-L9-1", lot_code="L9", date_code="2610",
    )  # fmt: skip
    lot = closed.replacement.lot
    assert lot.lot_code == "L9" and lot != component.lot and lot.date_code == "2610"
    assert lot.purchase_order_id == component.lot.purchase_order_id
    assert lot.country_of_origin == component.lot.country_of_origin and lot.supplier == opened.supplier
    assert BatchLot.objects.filter(purchase_order=lot.purchase_order, lot_code="L9").count() == 1


def test_a_known_serial_is_refused_as_receiving_refuses_it(handed):
    component = failed_on_the_bench(handed)
    opened = supplier_return_open(component=component, actor=handed.t.pm, reason="x8 link")
    supplier_return_ship(supplier_return=opened, actor=handed.t.pm, supplier_rma_number="R-3")
    with pytest.raises(InvalidInput) as refused:
        supplier_return_close(
            supplier_return=opened, actor=handed.t.pm, outcome="replacement", replacement_serial="gpu-l1-3"
        )
    assert refused.value.field == "replacement_serial"
    assert "is already known as GPU-L1-3 (lot L1)" in refused.value.field_message
    with pytest.raises(InvalidInput) as bad:
        component_receive_replacement(original=component, serial="GPU 1", actor=handed.t.pm, reason="x")
    assert bad.value.field == "serial"
    opened.refresh_from_db()
    assert opened.status == SupplierReturnStatus.SHIPPED  # nothing half-written


def test_opening_needs_a_failed_component_and_the_claims_own_card(handed):
    claim = approved_claim(handed)
    installed = handed.component(GPUS_L1[0])
    with pytest.raises(RuleViolation) as refused:
        supplier_return_open(component=installed, actor=handed.t.pm, reason="dead", claim=claim)
    assert refused.value.code == "not_returnable"
    assert any("failed (it is installed)" in line for line in refused.value.missing)
    assert any("is approved" in line for line in refused.value.missing)

    claim = claim_ship_replacement(claim=claim, actor=handed.t.pm, component=handed.component(SPARE_GPU))
    other = failed_on_the_bench(handed)
    with pytest.raises(RuleViolation) as mismatch:
        supplier_return_open(component=other, actor=handed.t.pm, reason="dead", claim=claim)
    assert mismatch.value.missing == [f"claim {claim.number} is on {GPUS_L1[0]}, not on {GPU_L2}"]
    with pytest.raises(RuleViolation) as customer:
        supplier_return_open(component=other, actor=handed.t.user_a, reason="dead")
    assert customer.value.code == "pm_only"
    with pytest.raises(InvalidInput) as no_reason:
        supplier_return_open(component=other, actor=handed.t.pm, reason="  ")
    assert no_reason.value.field == "reason"
    assert not SupplierReturn.objects.exists()


def test_an_attribution_must_blame_the_component(handed):
    claim = swapped_claim(handed)
    component = handed.component(GPUS_L1[0])
    attribution, _ = Attribution.objects.update_or_create(
        claim=claim,
        defaults={
            "server": handed.server, "stage": FailureStage.CLAIM, "occurred_at": timezone.now(),
            "proposed_cause": FailureCause.CONNECTOR, "proposed_reason": "x8 on one slot",
            "cause": FailureCause.HOST, "component": component,
        },
    )  # fmt: skip
    with pytest.raises(RuleViolation) as refused:
        supplier_return_open(
            component=component, actor=handed.t.pm, reason="dead", claim=claim, attribution=attribution
        )
    assert "blames the host" in refused.value.missing[0]
    Attribution.objects.filter(pk=attribution.pk).update(cause=FailureCause.COMPONENT)
    attribution.refresh_from_db()
    opened = supplier_return_open(
        component=component, actor=handed.t.pm, reason="dead", claim=claim, attribution=attribution
    )
    assert opened.attribution == attribution


def test_one_return_in_progress_per_component(handed):
    component = failed_on_the_bench(handed)
    first = supplier_return_open(component=component, actor=handed.t.pm, reason="x8 link")
    with pytest.raises(RuleViolation) as again:
        supplier_return_open(component=component, actor=handed.t.pm, reason="again")
    assert again.value.code == "supplier_return_open" and first.number in again.value.message
    supplier_return_ship(supplier_return=first, actor=handed.t.pm, supplier_rma_number="R-4")
    with pytest.raises(RuleViolation):
        supplier_return_open(component=component, actor=handed.t.pm, reason="again")
    # The database backs it, whatever a caller skips.
    with pytest.raises(IntegrityError), transaction.atomic():
        SupplierReturn.objects.create(
            number="SR-2000-0001", component=component, supplier=first.supplier, reason="twice"
        )
    assert SupplierReturn.objects.filter(component=component).count() == 1


def test_transitions_and_their_inputs(handed):
    component = failed_on_the_bench(handed)
    opened = supplier_return_open(component=component, actor=handed.t.pm, reason="x8 link")
    with pytest.raises(RuleViolation) as early:
        supplier_return_close(supplier_return=opened, actor=handed.t.pm, outcome="refused", note="no")
    assert early.value.code == "invalid_transition"
    with pytest.raises(InvalidInput) as no_rma:
        supplier_return_ship(supplier_return=opened, actor=handed.t.pm, supplier_rma_number=" ")
    assert no_rma.value.field == "supplier_rma_number"
    with pytest.raises(InvalidInput) as future:
        supplier_return_ship(
            supplier_return=opened, actor=handed.t.pm, supplier_rma_number="R",
            shipped_at=timezone.now() + timedelta(days=2),
        )  # fmt: skip
    assert future.value.field == "shipped_at"
    shipped_at = timezone.now() - timedelta(days=10)
    supplier_return_ship(
        supplier_return=opened, actor=handed.t.pm, supplier_rma_number="R-5", shipped_at=shipped_at
    )
    with pytest.raises(RuleViolation):
        supplier_return_ship(supplier_return=opened, actor=handed.t.pm, supplier_rma_number="R-6")
    for kwargs, field in (
        ({"outcome": "gift"}, "outcome"),
        ({"outcome": "credit"}, "credit_amount"),
        ({"outcome": "credit", "credit_amount": Decimal("0")}, "credit_amount"),
        ({"outcome": "refused", "credit_amount": Decimal("5")}, "credit_amount"),
        ({"outcome": "refused"}, "note"),
        ({"outcome": "replacement"}, "replacement_serial"),
        (
            {"outcome": "credit", "credit_amount": Decimal("5"), "replacement_serial": "X-1"},
            "replacement_serial",
        ),
        ({"outcome": "refused", "note": "x", "received_at": shipped_at - timedelta(days=1)}, "received_at"),
    ):
        with pytest.raises(InvalidInput) as refused:
            supplier_return_close(supplier_return=opened, actor=handed.t.pm, **kwargs)
        assert refused.value.field == field, kwargs
    closed = supplier_return_close(
        supplier_return=opened, actor=handed.t.pm, outcome="refused", note="Physical damage, not covered"
    )
    component.refresh_from_db()
    assert closed.outcome == "refused" and closed.outcome_note == "Physical damage, not covered"
    # It came back, still faulty: never offered to a build again.
    assert component.status == ComponentStatus.SCRAPPED and component.location.startswith("Warehouse")
    assert "refused" in component.movements.order_by("-pk").first().reason
    event = AuditEvent.objects.for_object(closed).get(verb="supplier_return.close")
    assert event.before == {"status": "shipped"} and event.after["outcome"] == "refused"


def test_the_admin_ships_and_closes_a_return_and_the_claim_links_it(client, handed):
    from tests import factories

    assert client.login(username="pm", password=factories.PASSWORD)
    claim = swapped_claim(handed)
    opened = supplier_return_open(
        component=handed.component(GPUS_L1[0]), actor=handed.t.pm, reason="dead", claim=claim
    )
    url = f"/admin/warranty/supplierreturn/{opened.pk}/change/"
    page = client.get(url).content.decode()
    assert 'value="ship"' in page and 'value="close"' not in page
    assert client.post(url, {"step": "ship", "rma_number": "ADM-1"}).status_code == 302
    opened.refresh_from_db()
    assert opened.status == SupplierReturnStatus.SHIPPED and opened.supplier_rma_number == "ADM-1"
    refused = client.post(url, {"step": "close", "answer": "credit"})  # no amount: a message, nothing written
    assert refused.status_code == 302
    opened.refresh_from_db()
    assert opened.status == SupplierReturnStatus.SHIPPED
    closed = client.post(url, {"step": "close", "answer": "replacement", "replacement_serial": "GPU-ADM-1"})
    assert closed.status_code == 302
    opened.refresh_from_db()
    assert opened.status == SupplierReturnStatus.CLOSED and opened.replacement.serial == "GPU-ADM-1"
    assert {"supplier_return.ship", "supplier_return.close"} <= set(_verbs(opened))
    assert client.get("/admin/warranty/supplierreturn/?status=closed&outcome=replacement").status_code == 200
    claim_page = client.get(f"/admin/warranty/warrantyclaim/{claim.pk}/change/").content.decode()
    assert opened.number in claim_page and f"/admin/warranty/supplierreturn/{opened.pk}/change/" in claim_page
