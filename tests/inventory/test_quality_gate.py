"""The quality flags back in procurement (issue #29, "Back into procurement"): a flagged PO is sent only with
an audited override reason, beside the non-EU one; a PM adds lines to a draft and sees the warnings; a
receipt into a flagged lot code says so.

The checks are registered by the apps above (pm.quality) through `inventory.gates`; here test checks stand
in for them, registered for one test and removed after it.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import translation

from inventory import gates
from inventory.choices import PurchaseOrderStatus as PS
from inventory.models import PurchaseOrder, PurchaseOrderLine
from inventory.packing import parse_scanner
from inventory.services import po_line_add, po_line_receive, po_send
from orders.choices import OrderStatus
from orders.models import OrderPurchaseOrder
from tests import factories
from tests.tenants_rig import api_client
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

PO_URL = "/api/v1/inventory/purchase-orders/"
FIGURES = "3 of 8 failed, 95 % interval 13.7–69.4 %"
LOT_FIGURES = "lot L-2291 of this part: 3 of 8 failed, 95 % interval 13.7–69.4 %"


class Flags:
    """The suppliers and lot codes the test checks flag, and how often each check was asked."""

    def __init__(self) -> None:
        self.suppliers: set[int] = set()
        self.lot_codes: set[str] = set()
        self.po_calls = 0
        self.receipt_calls = 0

    def po_check(self, po: PurchaseOrder) -> list[str]:
        self.po_calls += 1
        if po.supplier_id not in self.suppliers:
            return []
        # The sentence speaks the active language, as pm.quality's do.
        word = "Lieferant" if translation.get_language() == "de" else "Supplier"
        return [f"{word} {po.supplier.name}: {FIGURES}."]

    def receipt_check(self, part, supplier, lot_code: str) -> list[str]:
        self.receipt_calls += 1
        return [f"{part.mpn}, {LOT_FIGURES}."] if lot_code in self.lot_codes else []


@pytest.fixture
def flags():
    flags = Flags()
    gates.register_po_check(flags.po_check)
    gates.register_po_check(flags.po_check)  # once only: AppConfig.ready may run twice
    gates.register_receipt_check(flags.receipt_check)
    assert gates._po_checks.count(flags.po_check) == 1
    yield flags
    gates._po_checks.remove(flags.po_check)
    gates._receipt_checks.remove(flags.receipt_check)


def _flagged_po(flags: Flags, *, country: str = "DE", **kwargs) -> PurchaseOrder:
    supplier = factories.SupplierFactory(name="Lotwerk GmbH", country=country)
    flags.suppliers.add(supplier.pk)
    po = factories.make_po(supplier=supplier, send=False, **kwargs)
    AuditEvent.objects.all().delete()
    return po


def _send(user, po, **body):
    return api_client(user).post(f"{PO_URL}{po.pk}/send/", body, format="json")


def _sentence() -> str:
    return f"Supplier Lotwerk GmbH: {FIGURES}."


# --- send: 409 until a reason -------------------------------------------------------------------------


def test_a_flagged_po_is_refused_until_a_quality_override_reason_is_given(tenants, flags):
    po = _flagged_po(flags)
    refused = _send(tenants.pm, po, override_reason="not the rule that applies")
    assert refused.status_code == 409
    body = refused.json()
    assert body["code"] == "quality_flag"
    assert po.number in body["detail"] and FIGURES in body["detail"]
    assert body["missing"] == [f"an override reason for: {_sentence()}"]
    assert _send(tenants.pm, po, quality_override_reason="   ").status_code == 409
    po.refresh_from_db()
    assert po.status == PS.DRAFT and po.quality_override_reason == ""
    assert not AuditEvent.objects.exists()

    sent = _send(tenants.pm, po, quality_override_reason="Only supplier with 8 in stock; extra burn-in")
    assert sent.status_code == 200, sent.json()
    assert sent.json()["status"] == "sent"
    assert sent.json()["quality_override_reason"] == "Only supplier with 8 in stock; extra burn-in"
    assert sent.json()["quality_warnings"] == [_sentence()]
    po.refresh_from_db()
    assert po.quality_override_reason == "Only supplier with 8 in stock; extra burn-in"
    assert po.non_eu_override_reason == ""  # an EU supplier: that reason is not stored
    event = AuditEvent.objects.get(verb="purchase_order.quality_override")
    assert event.after == {
        "warnings": [_sentence()],
        "override_reason": "Only supplier with 8 in stock; extra burn-in",
    }
    assert (event.note, event.actor) == ("Only supplier with 8 in stock; extra burn-in", tenants.pm)
    assert list(AuditEvent.objects.order_by("pk").values_list("verb", flat=True)) == [
        "purchase_order.send",
        "purchase_order.quality_override",
    ]


def test_the_audit_keeps_the_warnings_in_english_when_the_pm_reads_german(tenants, flags):
    po = _flagged_po(flags)
    with translation.override("de"):
        with pytest.raises(RuleViolation) as refused:
            po_send(po=po, actor=tenants.pm)
        assert "Lieferant Lotwerk GmbH" in refused.value.message
        po_send(po=po, actor=tenants.pm, quality_override_reason="Framework contract")
    event = AuditEvent.objects.get(verb="purchase_order.quality_override")
    assert event.after["warnings"] == [_sentence()]


def test_a_po_without_a_flag_ignores_a_quality_reason(tenants, flags):
    po = factories.make_po(send=False)
    sent = _send(tenants.pm, po, quality_override_reason="just in case")
    assert sent.status_code == 200, sent.json()
    assert sent.json()["quality_warnings"] == [] and sent.json()["quality_override_reason"] == ""
    assert not AuditEvent.objects.filter(verb="purchase_order.quality_override").exists()


def test_a_sent_po_is_refused_by_its_status_before_its_flag(tenants, flags):
    po = _flagged_po(flags)
    PurchaseOrder.objects.filter(pk=po.pk).update(status=PS.SENT)
    refused = _send(tenants.pm, po)
    assert refused.status_code == 409 and refused.json()["code"] == "invalid_transition"


# --- both overrides at once ---------------------------------------------------------------------------


def test_non_eu_and_flagged_say_everything_missing_in_one_answer(tenants, flags):
    po = _flagged_po(flags, country="CN")
    both = _send(tenants.pm, po)
    assert both.status_code == 409
    assert both.json()["code"] == "overrides_missing"
    assert "is in CN, outside the EU" in both.json()["detail"] and FIGURES in both.json()["detail"]
    assert both.json()["missing"] == [
        "an override reason for the non-EU supplier country CN",
        f"an override reason for: {_sentence()}",
    ]
    only_quality = _send(tenants.pm, po, quality_override_reason="Framework contract")
    assert only_quality.status_code == 409 and only_quality.json()["code"] == "non_eu_supplier"
    assert only_quality.json()["missing"] == ["an override reason for the non-EU supplier country CN"]
    only_eu = _send(tenants.pm, po, override_reason="Only source of the 7U rails")
    assert only_eu.status_code == 409 and only_eu.json()["code"] == "quality_flag"
    assert not AuditEvent.objects.exists()

    sent = _send(
        tenants.pm,
        po,
        override_reason="Only source of the 7U rails",
        quality_override_reason="Framework contract",
    )
    assert sent.status_code == 200, sent.json()
    po.refresh_from_db()
    assert (po.status, po.non_eu_override_reason, po.quality_override_reason) == (
        PS.SENT,
        "Only source of the 7U rails",
        "Framework contract",
    )
    assert list(AuditEvent.objects.order_by("pk").values_list("verb", flat=True)) == [
        "purchase_order.send",
        "purchase_order.non_eu_override",
        "purchase_order.quality_override",
    ]


# --- the PO's API: the detail shows the warnings, the list does not ask -------------------------------


def test_the_detail_shows_the_warnings_and_the_list_costs_what_it_did(
    tenants, flags, django_assert_num_queries
):
    po = _flagged_po(flags, deliver_to=tenants.partner_p)
    for _ in range(3):
        factories.make_po(send=False)
    detail = api_client(tenants.pm).get(f"{PO_URL}{po.pk}/")
    assert detail.status_code == 200
    assert detail.json()["quality_warnings"] == [_sentence()]
    flags.po_calls = 0
    client = api_client(tenants.pm)
    with django_assert_num_queries(4):  # count, page, lines, their parts
        listed = client.get(PO_URL)
    assert listed.status_code == 200 and len(listed.json()["results"]) == 4
    assert all("quality_warnings" not in row for row in listed.json()["results"])
    assert flags.po_calls == 0


def test_a_partner_gets_no_warnings_and_a_customer_no_po(tenants, flags):
    po = _flagged_po(flags, deliver_to=tenants.partner_p)
    flags.po_calls = 0
    seen = api_client(tenants.user_p).get(f"{PO_URL}{po.pk}/")
    assert seen.status_code == 200
    assert "quality_warnings" not in seen.json() and "quality_override_reason" not in seen.json()
    assert FIGURES not in seen.content.decode() and flags.po_calls == 0
    assert api_client(tenants.user_a).get(f"{PO_URL}{po.pk}/").status_code == 404
    assert api_client(tenants.user_q).get(f"{PO_URL}{po.pk}/").status_code == 404


# --- po_line_add ----------------------------------------------------------------------------------------


def test_po_line_add_adds_an_audited_line_to_a_draft(tenants):
    po = factories.make_po(send=False)
    AuditEvent.objects.all().delete()
    part = factories.PartFactory(mpn="MEM-64G")
    line = po_line_add(po=po, actor=tenants.pm, part=part, quantity=12, unit_price=Decimal("310.00"))
    assert (line.purchase_order, line.part, line.quantity, line.unit_price) == (
        po,
        part,
        12,
        Decimal("310.00"),
    )
    event = AuditEvent.objects.for_object(po).get()
    assert event.verb == "purchase_order.line_add"
    assert event.after == {"line": line.pk, "part": "MEM-64G", "quantity": 12, "unit_price": "310.00"}


@pytest.mark.parametrize(
    ("quantity", "price", "field"),
    [(0, Decimal("1"), "quantity"), (2, Decimal("-0.01"), "unit_price")],
    ids=["quantity", "unit_price"],
)
def test_po_line_add_refuses_a_bad_quantity_or_price(tenants, quantity, price, field):
    po = factories.make_po(send=False)
    with pytest.raises(InvalidInput) as refused:
        po_line_add(
            po=po, actor=tenants.pm, part=factories.PartFactory(), quantity=quantity, unit_price=price
        )
    assert refused.value.field == field
    assert po.lines.count() == 1


def test_po_line_add_refuses_a_part_already_on_the_po_and_a_po_already_sent(tenants):
    po = factories.make_po(send=False)
    part = po.lines.get().part
    with pytest.raises(InvalidInput) as twice:
        po_line_add(po=po, actor=tenants.pm, part=part, quantity=1, unit_price=Decimal("1"))
    assert twice.value.field == "part" and part.mpn in twice.value.message
    sent = factories.make_po()
    with pytest.raises(RuleViolation) as refused:
        po_line_add(po=sent, actor=tenants.pm, part=part, quantity=1, unit_price=Decimal("1"))
    assert refused.value.code == "po_not_draft" and sent.number in refused.value.message
    assert PurchaseOrderLine.objects.filter(purchase_order=sent).count() == 1
    assert not AuditEvent.objects.filter(verb="purchase_order.line_add").exists()


def test_a_pm_adds_a_line_through_the_api_and_sees_the_warnings(tenants, flags):
    po = _flagged_po(flags, deliver_to=tenants.partner_p)
    part = factories.PartFactory()
    url = f"{PO_URL}{po.pk}/lines/"
    body = {"part": part.pk, "quantity": 4, "unit_price": "99.50"}
    added = api_client(tenants.pm).post(url, body, format="json")
    assert added.status_code == 201, added.json()
    assert added.json()["part"] == part.pk and added.json()["quantity"] == 4
    assert added.json()["unit_price"] == "99.50" and added.json()["purchase_order"] == po.pk
    assert added.json()["quality_warnings"] == [_sentence()]
    again = api_client(tenants.pm).post(url, body, format="json")
    assert again.status_code == 400 and "part" in again.json()
    bad = api_client(tenants.pm).post(url, {**body, "part": factories.PartFactory().pk, "quantity": 0})
    assert bad.status_code == 400 and "quantity" in bad.json()
    assert po.lines.count() == 2


def test_only_a_pm_adds_lines_and_only_to_a_po_it_may_see(tenants, flags):
    po = _flagged_po(flags, deliver_to=tenants.partner_p)
    body = {"part": factories.PartFactory().pk, "quantity": 1, "unit_price": "1.00"}
    url = f"{PO_URL}{po.pk}/lines/"
    assert api_client(tenants.user_p).post(url, body, format="json").status_code == 403  # sees it: no write
    assert api_client(tenants.user_q).post(url, body, format="json").status_code == 404
    assert api_client(tenants.user_a).post(url, body, format="json").status_code == 404
    sent = factories.make_po()
    refused = api_client(tenants.pm).post(f"{PO_URL}{sent.pk}/lines/", body, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "po_not_draft"
    assert po.lines.count() == 1


# --- procure --------------------------------------------------------------------------------------------


def test_procure_records_the_drafted_pos_warnings(tenants, flags):
    flagged = factories.SupplierFactory(name="Lotwerk GmbH")
    flags.suppliers.add(flagged.pk)
    clean = factories.SupplierFactory(name="Nordic Memory & Compute AB", country="SE")
    gpu = factories.PartFactory(preferred_supplier=flagged, list_price=Decimal("2400.00"))
    chassis = factories.ChassisFactory(preferred_supplier=clean, list_price=Decimal("2200.00"))
    order = factories.pass_gate(
        factories.OrderFactory(
            customer=tenants.customer_a,
            configuration=factories.ConfigurationFactory(lines=[(gpu, 8), (chassis, 1)]),
            server_count=1,
            status=OrderStatus.APPROVED,
        )
    )
    response = api_client(tenants.pm).post(f"/api/v1/orders/{order.pk}/procure/", {}, format="json")
    assert response.status_code == 200, response.json()
    po = OrderPurchaseOrder.objects.get(order=order, purchase_order__supplier=flagged).purchase_order
    assert po.status == PS.DRAFT
    event = AuditEvent.objects.get(verb="order.procure")
    assert event.after["quality_warnings"] == {po.number: [_sentence()]}
    # The PM sees it on the drafted PO, and sending it needs the override.
    assert api_client(tenants.pm).get(f"{PO_URL}{po.pk}/").json()["quality_warnings"] == [_sentence()]
    assert _send(tenants.pm, po).json()["code"] == "quality_flag"


# --- receiving into a flagged lot code -----------------------------------------------------------------


def _receive(user, line, lot: str, serials: str):
    body = {"lot": lot, "date_code": "2526", "origin": "TW", "serials": serials}
    return api_client(user).post(
        f"/api/v1/inventory/purchase-order-lines/{line.pk}/receive/", body, format="json"
    )


def test_a_receipt_into_a_flagged_lot_code_says_so(tenants, flags):
    flags.lot_codes.add("L-2291")
    line = factories.make_po(deliver_to=tenants.partner_p, quantity=8).lines.get()
    clean = _receive(tenants.pm, line, "L-3000", "Q-1")
    assert clean.status_code == 201, clean.json()
    assert clean.json()["quality_warnings"] == []
    flagged = _receive(tenants.pm, line, "L-2291", "Q-2\nQ-3")
    assert flagged.status_code == 201, flagged.json()
    sentence = f"{line.part.mpn}, {LOT_FIGURES}."
    assert flagged.json()["quality_warnings"] == [sentence]
    events = AuditEvent.objects.filter(verb="purchase_order.receive").order_by("pk")
    assert [event.after.get("quality_warnings") for event in events] == [None, [sentence]]
    assert events.last().note == sentence


def test_a_partners_receipt_carries_no_warnings(tenants, flags):
    flags.lot_codes.add("L-2291")
    line = factories.make_po(deliver_to=tenants.partner_p, quantity=8).lines.get()
    response = _receive(tenants.user_p, line, "L-2291", "Q-9")
    assert response.status_code == 201, response.json()
    assert "quality_warnings" not in response.json()
    assert LOT_FIGURES not in response.content.decode()
    # Still audited for the PMs.
    assert AuditEvent.objects.get(verb="purchase_order.receive").after["quality_warnings"]


def test_the_receipt_returned_by_the_service_carries_the_warnings(tenants, flags):
    flags.lot_codes.add("L-2291")
    line = factories.make_po(quantity=2).lines.get()
    receipt = po_line_receive(
        line=line,
        actor=tenants.pm,
        lot_code="L-2291",
        date_code="2526",
        origin="TW",
        packing=parse_scanner("R-1"),
    )
    assert receipt.quality_warnings == [f"{line.part.mpn}, {LOT_FIGURES}."]
    assert flags.receipt_calls == 1


# --- the admin ------------------------------------------------------------------------------------------


def test_the_admin_shows_the_warnings_and_asks_for_the_reasons_before_sending(client, tenants, flags):
    po = _flagged_po(flags, country="CN")
    client.force_login(tenants.pm)
    page = client.get(f"/admin/inventory/purchaseorder/{po.pk}/change/").content.decode()
    assert "Quality warnings" in page and FIGURES in page
    action = {"action": "send_selected", "_selected_action": [po.pk]}
    asked = client.post("/admin/inventory/purchaseorder/", action)
    assert asked.status_code == 200
    html = asked.content.decode()
    assert FIGURES in html and 'name="quality_override_reason"' in html and 'name="override_reason"' in html
    po.refresh_from_db()
    assert po.status == PS.DRAFT

    refused = client.post("/admin/inventory/purchaseorder/", {**action, "apply": "1"}, follow=True)
    assert "outside the EU" in refused.content.decode() and "flagged for quality" in refused.content.decode()
    po.refresh_from_db()
    assert po.status == PS.DRAFT

    reasons = {"override_reason": "Only source", "quality_override_reason": "Extra burn-in agreed"}
    client.post("/admin/inventory/purchaseorder/", {**action, "apply": "1", **reasons}, follow=True)
    po.refresh_from_db()
    assert (po.status, po.quality_override_reason) == (PS.SENT, "Extra burn-in agreed")
    assert AuditEvent.objects.filter(verb="purchase_order.quality_override", actor=tenants.pm).count() == 1
