"""Spares in stock whose supplier warranty (receipt + the supplier's months) ends within 90 days, or has
ended: inventory.selectors.spares_supplier_warranty_ending."""

from __future__ import annotations

from datetime import date

import pytest

from inventory.models import Component
from inventory.selectors import _last_receipt_day, spares_supplier_warranty_ending, supplier_warranty_end
from tests.warranty.report_rig import stock, supplier

pytestmark = pytest.mark.django_db

TODAY = date(2026, 6, 15)  # + 90 days: 13 September 2026


def test_in_stock_spares_ending_within_90_days_or_ended_soonest_first(django_assert_num_queries):
    long_term, short_term = supplier("EuroGPU Distribution GmbH", 36), supplier("Kurzfrist Teile GmbH", 12)
    stock(
        long_term,
        {
            "A-EXACTLY-90": date(2023, 9, 13),  # ends 13 Sep 2026: the 90th day, in
            "A-DAY-91": date(2023, 9, 14),  # ends 14 Sep 2026: out
            "A-ENDED": date(2023, 6, 1),  # ended 1 Jun 2026: in, flagged ended
        },
    )
    stock(
        short_term,
        {
            "B-SOON": date(2025, 7, 1),  # 12 months: ends 1 Jul 2026, in
            "B-LATER": date(2025, 10, 1),  # ends 1 Oct 2026: out
            "B-ALLOCATED": date(2025, 7, 1),  # would be in, but is not in stock
        },
        lot_code="L-2",
    )
    Component.objects.filter(serial="B-ALLOCATED").update(status="allocated")

    with django_assert_num_queries(2):  # the suppliers' terms, then the components with their part and lot
        spares = spares_supplier_warranty_ending(within_days=90, today=TODAY)
        rows = [
            (
                spare.component.serial,
                spare.ends,
                spare.days_left,
                spare.ended,
                spare.component.lot.supplier.name,
            )
            for spare in spares
        ]
    assert rows == [
        ("A-ENDED", date(2026, 6, 1), -14, True, "EuroGPU Distribution GmbH"),
        ("B-SOON", date(2026, 7, 1), 16, False, "Kurzfrist Teile GmbH"),
        ("A-EXACTLY-90", date(2026, 9, 13), 90, False, "EuroGPU Distribution GmbH"),
    ]


def test_the_window_is_the_callers(django_assert_num_queries):
    stock(supplier("EuroGPU Distribution GmbH", 36), {"A-1": date(2023, 7, 1), "A-2": date(2023, 8, 1)})
    assert [
        spare.component.serial for spare in spares_supplier_warranty_ending(within_days=20, today=TODAY)
    ] == ["A-1"]
    assert len(spares_supplier_warranty_ending(within_days=60, today=TODAY)) == 2


def test_month_ends_are_clamped_as_relativedelta_clamps_them():
    # 29, 30 and 31 January + 1 month all end on 28 February 2026: all three end "by 28 February".
    assert supplier_warranty_end(date(2026, 1, 31), 1) == date(2026, 2, 28)
    assert _last_receipt_day(date(2026, 2, 28), 1) == date(2026, 1, 31)
    assert _last_receipt_day(date(2026, 3, 31), 1) == date(2026, 2, 28)
    assert _last_receipt_day(date(2026, 6, 15), 36) == date(2023, 6, 15)

    stock(supplier("Monatsware GmbH", 1), {"M-31-JAN": date(2026, 1, 31), "M-1-FEB": date(2026, 2, 1)})
    found = spares_supplier_warranty_ending(within_days=8, today=date(2026, 2, 20))  # to 28 February
    assert [(spare.component.serial, spare.ends) for spare in found] == [("M-31-JAN", date(2026, 2, 28))]


def test_nothing_in_stock_nothing_listed(django_assert_num_queries):
    with django_assert_num_queries(1):  # no supplier: no component query
        assert spares_supplier_warranty_ending(today=TODAY) == []
