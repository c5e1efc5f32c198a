"""The supplier-return API (issue #29): PMs only; open, ship and close through the services; the claim shows
its return to PMs, never to the customer; the list's query count is flat."""

from __future__ import annotations

import pytest

from inventory.choices import ComponentStatus
from inventory.models import Component
from inventory.services import component_move
from tests.builds.bench_rig import DIMMS, GPU_L2, GPUS_L1
from tests.tenants_rig import api_client
from tests.warranty.handover_rig import SPARE_GPU
from warranty.models import SupplierReturn, WarrantyRecord
from warranty.services import (
    claim_approve,
    claim_open,
    claim_ship_replacement,
    supplier_return_open,
)

pytestmark = pytest.mark.django_db

RETURNS = "/api/v1/warranty/supplier-returns/"


def swapped_claim(world):
    record = WarrantyRecord.objects.get(server=world.server, serial=GPUS_L1[0])
    claim = claim_open(record=record, actor=world.t.user_a, description="drops off the bus")
    claim = claim_approve(claim=claim, actor=world.t.pm)
    return claim_ship_replacement(claim=claim, actor=world.t.pm, component=world.component(SPARE_GPU))


def fail(world, *serials):
    return component_move(
        components=[world.component(serial) for serial in serials],
        actor=world.t.pm,
        to_status=ComponentStatus.FAILED,
        reason="Burn-in fail",
    )


def test_a_return_from_a_claim_through_the_api_and_the_claims_link(handed):
    claim = swapped_claim(handed)
    pm = api_client(handed.t.pm)
    opened = pm.post(RETURNS, {"serial": GPUS_L1[0].lower(), "claim": claim.number, "reason": "No link"})
    assert opened.status_code == 201, opened.json()
    body = opened.json()
    assert body["status"] == "open" and body["claim_number"] == claim.number and body["serial"] == GPUS_L1[0]
    assert body["supplier_warranty_ends"] and body["currency"] == "EUR"
    url = f"{RETURNS}{body['id']}/"

    missing_rma = pm.post(f"{url}ship/", {})
    assert missing_rma.status_code == 400 and "supplier_rma_number" in missing_rma.json()
    shipped = pm.post(f"{url}ship/", {"supplier_rma_number": "MSI-4711"})
    assert shipped.status_code == 200, shipped.json()
    assert shipped.json()["status"] == "shipped" and shipped.json()["supplier_rma_number"] == "MSI-4711"

    known = pm.post(f"{url}close/", {"outcome": "replacement", "replacement_serial": GPUS_L1[1]})
    assert known.status_code == 400 and "already known" in known.json()["replacement_serial"][0]
    closed = pm.post(f"{url}close/", {"outcome": "replacement", "replacement_serial": "GPU-L1-77"})
    assert closed.status_code == 200, closed.json()
    assert closed.json()["outcome"] == "replacement" and closed.json()["replacement_serial"] == "GPU-L1-77"
    assert Component.objects.get(serial="GPU-L1-77").status == ComponentStatus.IN_STOCK
    again = pm.post(f"{url}close/", {"outcome": "refused", "note": "no"})
    assert again.status_code == 409 and again.json()["code"] == "invalid_transition"

    # The claim shows its return to a PM; its customer reads the claim without it.
    link = pm.get(f"/api/v1/warranty/claims/{claim.pk}/").json()["supplier_return"]
    assert link == {"id": body["id"], "number": body["number"], "status": "closed"}
    as_customer = api_client(handed.t.user_a).get(f"/api/v1/warranty/claims/{claim.pk}/")
    assert as_customer.status_code == 200 and "supplier_return" not in as_customer.json()


def test_refusals_through_the_api(handed):
    pm = api_client(handed.t.pm)
    installed = pm.post(RETURNS, {"serial": GPUS_L1[1], "reason": "dead"})
    assert installed.status_code == 409 and installed.json()["code"] == "not_returnable"
    assert pm.post(RETURNS, {"reason": "which?"}).status_code == 400
    assert pm.post(RETURNS, {"serial": "NO-SUCH-1", "reason": "dead"}).status_code == 404
    assert pm.post(RETURNS, {"serial": GPU_L2, "claim": "RMA-1999-00001", "reason": "x"}).status_code == 404
    (component,) = fail(handed, GPU_L2)
    first = pm.post(RETURNS, {"component": component.pk, "reason": "x8"})
    assert first.status_code == 201
    twice = pm.post(RETURNS, {"component": component.pk, "reason": "x8"})
    assert twice.status_code == 409 and twice.json()["code"] == "supplier_return_open"
    credit = pm.post(f"{RETURNS}{first.json()['id']}/close/", {"outcome": "credit"})
    assert credit.status_code == 409  # still open: shipped first
    pm.post(f"{RETURNS}{first.json()['id']}/ship/", {"supplier_rma_number": "R-1"})
    no_amount = pm.post(f"{RETURNS}{first.json()['id']}/close/", {"outcome": "credit"})
    assert no_amount.status_code == 400 and "credit_amount" in no_amount.json()
    ok = pm.post(f"{RETURNS}{first.json()['id']}/close/", {"outcome": "credit", "credit_amount": "1450.00"})
    assert ok.status_code == 200 and ok.json()["credit_amount"] == "1450.00"


def test_members_see_no_returns_and_cannot_open_one(handed):
    (component,) = fail(handed, GPU_L2)
    opened = supplier_return_open(component=component, actor=handed.t.pm, reason="x8")
    for user in (handed.t.user_a, handed.t.user_p, handed.t.user_b, handed.t.outsider):
        client = api_client(user)
        assert client.get(RETURNS).json()["count"] == 0
        assert client.get(f"{RETURNS}{opened.pk}/").status_code == 404
        shipped = client.post(f"{RETURNS}{opened.pk}/ship/", {"supplier_rma_number": "X"})
        assert shipped.status_code == 404
        assert client.post(f"{RETURNS}{opened.pk}/close/", {"outcome": "refused"}).status_code == 404
        assert client.post(RETURNS, {"component": component.pk, "reason": "mine"}).status_code == 403
    assert api_client(None).get(RETURNS).status_code in (401, 403)
    opened.refresh_from_db()
    assert opened.status == "open" and SupplierReturn.objects.count() == 1


def test_filters(handed):
    (gpu,) = fail(handed, GPU_L2)
    first = supplier_return_open(component=gpu, actor=handed.t.pm, reason="x8")
    pm = api_client(handed.t.pm)
    pm.post(f"{RETURNS}{first.pk}/ship/", {"supplier_rma_number": "R-9"})
    claim = swapped_claim(handed)
    second = supplier_return_open(
        component=handed.component(GPUS_L1[0]), actor=handed.t.pm, reason="dead", claim=claim
    )
    assert [row["number"] for row in pm.get(RETURNS, {"status": "shipped"}).json()["results"]] == [
        first.number
    ]
    assert [row["number"] for row in pm.get(RETURNS, {"q": claim.number}).json()["results"]] == [
        second.number
    ]
    supplier = first.supplier_id
    assert pm.get(RETURNS, {"supplier": supplier}).json()["count"] == 2
    assert pm.get(RETURNS, {"outcome": "credit"}).json()["count"] == 0


@pytest.mark.parametrize("count", [1, 3])
def test_the_list_costs_the_same_queries_for_1_or_3_returns(handed, count, django_assert_num_queries):
    serials = [GPU_L2, *DIMMS][:count]
    for component in fail(handed, *serials):
        supplier_return_open(component=component, actor=handed.t.pm, reason="faulty")
    client = api_client(handed.t.pm)
    # The count and the page (component, part, lot, PO, supplier, claim, replacement, creator joined); the
    # PM group check is cached on the user, which opened the returns.
    with django_assert_num_queries(2):
        response = client.get(RETURNS)
    assert response.json()["count"] == count
