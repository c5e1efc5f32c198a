"""Receiving is no oracle across tenants (issue #16, defect 3).

A partner receiving on its own PO line learns nothing about what another tenant received: not that a
serial is in another tenant's lot, not another receipt's date code or origin, and it can neither add to
another tenant's lot nor see another tenant's components counted in its own. A lot is per supplier
receipt (inventory.models.BatchLot).
"""

from __future__ import annotations

import pytest

from inventory.models import BatchLot, Component
from tests import factories
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db

RECEIVE = "/api/v1/inventory/purchase-order-lines/{}/receive/"


@pytest.fixture
def goods(tenants):
    """One part from one supplier, ordered twice: for partner P's workshop and for partner Q's. P has
    received lot L-SECRET (date code 2526, from TW) with serials P-1 and P-2."""
    part, supplier = factories.PartFactory(), factories.SupplierFactory()
    line_p = factories.make_po(deliver_to=tenants.partner_p, part=part, supplier=supplier).lines.get()
    line_q = factories.make_po(deliver_to=tenants.partner_q, part=part, supplier=supplier).lines.get()
    body = {"lot": "L-SECRET", "date_code": "2526", "origin": "TW", "serials": "P-1\nP-2"}
    assert api_client(tenants.user_p).post(RECEIVE.format(line_p.pk), body).status_code == 201
    return line_p, line_q


def _receive_as_q(tenants, line, **body):
    return api_client(tenants.user_q).post(
        RECEIVE.format(line.pk), {"lot": "L-Q", "date_code": "2601", "origin": "DE", **body}
    )


def test_a_serial_held_by_another_partner_is_refused_without_naming_its_lot(tenants, goods):
    line_p, line_q = goods
    # The same serial in the PMs' own warehouse: Q may not see that one either.
    warehouse = factories.make_po(part=line_p.part, supplier=line_p.purchase_order.supplier).lines.get()
    pm_body = {"lot": "L-WAREHOUSE", "date_code": "2526", "origin": "TW", "serials": "W-1"}
    assert api_client(tenants.pm).post(RECEIVE.format(warehouse.pk), pm_body).status_code == 201

    response = _receive_as_q(tenants, line_q, serials="Q-1\nP-1\nW-1")

    assert response.status_code == 400
    text = response.content.decode()
    for secret in ("L-SECRET", "L-WAREHOUSE", "2526", "TW", "already known", tenants.partner_p.name):
        assert secret not in text, (secret, text)
    rows = response.json()["rows"]
    assert [(row["row"], row["column"]) for row in rows] == [(2, "serial"), (3, "serial")]
    # One refusal for every serial Q may not see, whoever holds it.
    assert rows[0]["message"].replace("P-1", "X") == rows[1]["message"].replace("W-1", "X")
    assert not Component.objects.filter(po_line=line_q).exists()


def test_the_own_lot_is_still_named_to_whoever_may_see_it(tenants, goods):
    line_p, _line_q = goods
    response = api_client(tenants.user_p).post(
        RECEIVE.format(line_p.pk), {"lot": "L-2", "date_code": "2526", "origin": "TW", "serials": "P-1"}
    )
    assert response.status_code == 400
    assert response.json()["rows"][0]["message"] == "P-1 is already known (lot L-SECRET)."


def test_a_lot_code_taken_by_another_tenant_reveals_nothing_of_its_receipt(tenants, goods):
    _line_p, line_q = goods
    # Q's delivery carries the same manufacturer lot code, with another date code and origin.
    response = _receive_as_q(tenants, line_q, lot="L-SECRET", serials="Q-1")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["lot_created"] is True
    assert (body["lot"]["lot_code"], body["lot"]["date_code"], body["lot"]["country_of_origin"]) == (
        "L-SECRET",
        "2601",
        "DE",
    )
    # P's lot is as P recorded it.
    p_lot = BatchLot.objects.get(components__serial="P-1")
    assert (p_lot.date_code, p_lot.country_of_origin) == ("2526", "TW")


def test_a_partner_cannot_add_to_another_tenants_lot_nor_count_its_components(tenants, goods):
    _line_p, line_q = goods
    p_lot = BatchLot.objects.get(components__serial="P-1")

    response = _receive_as_q(tenants, line_q, lot="L-SECRET", date_code="2526", origin="TW", serials="Q-1")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["lot_created"] is True
    assert body["lot"]["id"] != p_lot.pk
    assert body["lot"]["component_count"] == 1
    assert set(Component.objects.filter(lot=p_lot).values_list("serial", flat=True)) == {"P-1", "P-2"}
    # Each partner lists its own lot, counting its own components only.
    listed_q = api_client(tenants.user_q).get("/api/v1/inventory/lots/").json()["results"]
    assert [(lot["id"], lot["component_count"]) for lot in listed_q] == [(body["lot"]["id"], 1)]
    listed_p = api_client(tenants.user_p).get("/api/v1/inventory/lots/").json()["results"]
    assert [(lot["id"], lot["component_count"]) for lot in listed_p] == [(p_lot.pk, 2)]
    detail = api_client(tenants.user_q).get(f"/api/v1/inventory/lots/{p_lot.pk}/")
    assert detail.status_code == 404


def test_the_lot_list_counts_in_a_fixed_number_of_queries(tenants, goods, django_assert_max_num_queries):
    line_p, _line_q = goods
    for index in range(3):
        body = {"lot": f"L-{index}", "date_code": "2526", "origin": "TW", "serials": f"PX-{index}"}
        assert api_client(tenants.user_p).post(RECEIVE.format(line_p.pk), body).status_code == 201
    client = api_client(tenants.user_p)
    with django_assert_max_num_queries(4):
        response = client.get("/api/v1/inventory/lots/")
    assert sorted(lot["component_count"] for lot in response.json()["results"]) == [1, 1, 1, 2]


def test_a_foreign_serial_is_refused_without_the_letter_case_it_is_recorded_in(tenants, goods):
    _line_p, line_q = goods
    response = _receive_as_q(tenants, line_q, serials="p-2")
    assert response.status_code == 400
    (row,) = response.json()["rows"]
    assert row["message"].startswith("p-2 cannot be received") and "P-2" not in response.content.decode()


def test_a_serial_booked_elsewhere_during_the_receipt_gets_the_same_refusal(tenants, goods, monkeypatch):
    """Issue 26, finding 10: the check and the insert are two statements; a serial that another tenant's
    receipt books between them was a 409 naming the constraint, unlike one on record before (a 400)."""
    _line_p, line_q = goods
    before = _receive_as_q(tenants, line_q, serials="Q-1\nP-1")
    assert before.status_code == 400

    from inventory.services import receiving

    check = receiving._refuse_serials_on_record
    calls: list[int] = []

    def not_yet_on_record(**kwargs):
        # The first check runs before P's receipt commits: it sees no P-1 (as in the race).
        calls.append(1)
        if len(calls) > 1:
            check(**kwargs)

    monkeypatch.setattr(receiving, "_refuse_serials_on_record", not_yet_on_record)
    during = _receive_as_q(tenants, line_q, serials="Q-1\nP-1")

    assert len(calls) == 2
    assert (during.status_code, during.json()) == (before.status_code, before.json())
    assert not Component.objects.filter(po_line=line_q).exists()
