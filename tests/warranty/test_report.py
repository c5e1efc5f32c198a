"""The PM's warranty report (warranty.selectors.warranty_report and its counts): records of every customer by
how soon they end, at the buckets' boundaries, without replaced records."""

from __future__ import annotations

from datetime import date

import pytest
from django.utils import timezone

from tests.warranty.report_rig import component_record, records_ending, stock, supplier
from warranty.selectors import (
    report_bucket,
    report_customer,
    report_kind,
    warranty_report,
    warranty_report_counts,
)
from werkbank.errors import InvalidInput

pytestmark = pytest.mark.django_db

ENDS = {
    "ENDS-TODAY": 0,  # in force to the end of today: within 30 days, not expired
    "ENDS-30": 30,  # 30 days exactly: within 30
    "ENDS-31": 31,  # within 60, not 30
    "ENDS-180": 180,
    "ENDS-181": 181,  # in no bucket
    "ENDED-YESTERDAY": -1,  # expired
    "ENDED-10": -10,
    "REPLACED": 10,  # replaced: in no bucket
}


@pytest.fixture
def records(tenants):
    return records_ending(tenants.customer_a, ENDS, replaced=("REPLACED",))


def _serials(bucket, **filters):
    return [record.serial for record in warranty_report(bucket=bucket, **filters)]


def test_buckets_at_their_boundaries(records):
    assert _serials("30") == ["ENDS-TODAY", "ENDS-30"]
    assert _serials("60") == ["ENDS-TODAY", "ENDS-30", "ENDS-31"]
    assert _serials("90") == ["ENDS-TODAY", "ENDS-30", "ENDS-31"]
    assert _serials("180") == ["ENDS-TODAY", "ENDS-30", "ENDS-31", "ENDS-180"]
    # Expired: ended yesterday or before, the most recently ended first.
    assert _serials("expired") == ["ENDED-YESTERDAY", "ENDED-10"]


def test_counts_per_bucket_in_one_query(records, django_assert_num_queries):
    with django_assert_num_queries(1):
        counts = warranty_report_counts()
    assert counts == {"expired": 2, "30": 2, "60": 3, "90": 3, "180": 4}


def test_a_replaced_record_is_in_no_bucket(records):
    for bucket in ("expired", "30", "60", "90", "180"):
        assert "REPLACED" not in _serials(bucket)


def test_the_report_spans_customers_and_filters_by_customer_and_kind(tenants, records):
    records_ending(tenants.customer_b, {"B-ENDS-5": 5})
    order = records["ENDS-30"].order
    (gpu,) = stock(supplier("EuroGPU Distribution GmbH", 36), {"GPU-ENDS-7": date(2026, 1, 5)})
    component_record(order, gpu, ends_in=7)

    assert _serials("30") == ["ENDS-TODAY", "B-ENDS-5", "GPU-ENDS-7", "ENDS-30"]
    assert _serials("30", customer=tenants.customer_b) == ["B-ENDS-5"]
    assert _serials("30", kind="component") == ["GPU-ENDS-7"]
    assert _serials("30", customer=tenants.customer_b, kind="component") == []
    assert warranty_report_counts(customer=tenants.customer_a)["30"] == 3
    assert warranty_report_counts(kind="server")["30"] == 3


def test_today_is_the_callers(records):
    tomorrow = timezone.localdate().toordinal() + 1
    assert _serials("expired", today=date.fromordinal(tomorrow))[0] == "ENDS-TODAY"


def test_filters_that_the_report_does_not_know_name_their_field(tenants):
    assert report_bucket("") == "90" and report_bucket(" 30 ") == "30"
    with pytest.raises(InvalidInput) as error:
        report_bucket("45")
    assert error.value.field == "bucket" and "expired, 30, 60, 90, 180" in error.value.field_message
    with pytest.raises(InvalidInput) as error:
        report_kind("gpu")
    assert error.value.field == "kind"
    assert report_kind("") is None and report_kind("server") == "server"
    assert report_customer(str(tenants.customer_a.pk)) == tenants.customer_a
    for value in ("x", "999999", str(tenants.partner_p.pk)):  # not a number, no such, not a customer
        with pytest.raises(InvalidInput) as error:
            report_customer(value)
        assert error.value.field == "customer"
