"""GET /api/v1/warranty/report/ and /api/v1/warranty/spares-ending/: PMs only (anyone else gets an empty
list), 400 naming the filter the report does not know, a fixed number of queries whatever the page holds."""

from __future__ import annotations

from datetime import timedelta

import pytest
from dateutil.relativedelta import relativedelta
from django.utils import timezone

from tests.tenants_rig import api_client
from tests.warranty.report_rig import records_ending, stock, supplier

pytestmark = pytest.mark.django_db

REPORT = "/api/v1/warranty/report/"
SPARES = "/api/v1/warranty/spares-ending/"


@pytest.fixture
def report(tenants):
    records = records_ending(
        tenants.customer_a, {"A-5": 5, "A-40": 40, "A-ENDED": -3, "A-REPLACED": 2}, replaced=("A-REPLACED",)
    )
    records.update(records_ending(tenants.customer_b, {"B-20": 20}))
    today = timezone.localdate()
    stock(
        supplier("EuroGPU Distribution GmbH", 36),
        {
            "SPARE-10": today + timedelta(days=10) - relativedelta(months=36),
            "SPARE-ENDED": today - timedelta(days=2) - relativedelta(months=36),
            "SPARE-FRESH": today,
        },
    )
    return records


def _serials(response):
    assert response.status_code == 200, response.content
    return [row["serial"] for row in response.json()["results"]]


def test_a_pm_lists_a_bucket_across_customers(tenants, report):
    client = api_client(tenants.pm)
    body = client.get(REPORT, {"bucket": "30"}).json()
    assert body["count"] == 2 and [row["serial"] for row in body["results"]] == ["A-5", "B-20"]
    row = body["results"][0]
    record = report["A-5"]
    assert row == {
        "id": record.pk,
        "kind": "server",
        "serial": "A-5",
        "description": "Server A-5",
        "customer": tenants.customer_a.pk,
        "customer_name": tenants.customer_a.name,
        "server": record.server_id,
        "server_hostname": record.server.hostname,
        "order": record.order_id,
        "order_reference": record.order.reference,
        "start_date": record.start_date.isoformat(),
        "term_months": 36,
        "end_date": record.end_date.isoformat(),
        "days_left": 5,
    }
    assert _serials(client.get(REPORT)) == ["A-5", "B-20", "A-40"]  # default: within 90 days
    assert _serials(client.get(REPORT, {"bucket": "expired"})) == ["A-ENDED"]
    assert client.get(REPORT, {"bucket": "expired"}).json()["results"][0]["days_left"] == -3
    assert _serials(client.get(REPORT, {"customer": tenants.customer_b.pk})) == ["B-20"]
    assert _serials(client.get(REPORT, {"kind": "component"})) == []
    assert _serials(client.get(REPORT, {"limit": 1, "offset": 1})) == ["B-20"]


def test_anyone_but_a_pm_gets_an_empty_list(client, tenants, report):
    for user in (tenants.user_a, tenants.user_b, tenants.user_p, tenants.outsider):
        for url in (REPORT, SPARES):
            response = api_client(user).get(url)
            assert response.status_code == 200 and response.json()["count"] == 0, (url, user.username)
            assert response.json()["results"] == []
    for url in (REPORT, SPARES):
        assert client.get(url).status_code in {401, 403}


def test_a_filter_the_report_does_not_know_is_a_400_naming_it(tenants, report):
    client = api_client(tenants.pm)
    response = client.get(REPORT, {"bucket": "45"})
    assert response.status_code == 400
    assert list(response.json()) == ["bucket"] and "expired, 30, 60, 90, 180" in response.json()["bucket"][0]
    assert list(client.get(REPORT, {"kind": "gpu"}).json()) == ["kind"]
    assert list(client.get(REPORT, {"customer": tenants.partner_p.pk}).json()) == ["customer"]
    # For anyone: the answer says nothing about the rows.
    assert api_client(tenants.user_a).get(REPORT, {"bucket": "soon"}).status_code == 400


def _fresh_pm(tenants):
    """A client of the PM read afresh, as on every real request: the PM check is not cached from before."""
    return api_client(type(tenants.pm).objects.get(pk=tenants.pm.pk))


def test_the_report_runs_the_same_queries_for_one_row_as_for_many(tenants, report, django_assert_num_queries):
    # The PM check, the count, the page (along the records' (end date, id) index).
    client = _fresh_pm(tenants)
    with django_assert_num_queries(3):
        assert len(_serials(client.get(REPORT, {"bucket": "60"}))) == 3
    records_ending(tenants.customer_b, {f"B-MORE-{n}": n for n in range(1, 9)})
    client = _fresh_pm(tenants)
    with django_assert_num_queries(3):
        assert len(_serials(client.get(REPORT, {"bucket": "60"}))) == 11
    # A customer filter reads the customer first.
    client = _fresh_pm(tenants)
    with django_assert_num_queries(4):
        assert len(_serials(client.get(REPORT, {"customer": tenants.customer_b.pk}))) == 9


def test_a_pm_lists_the_spares_near_their_supplier_warranty_end(tenants, report, django_assert_num_queries):
    # The PM check, the suppliers' terms, the components with their part and lot.
    client = _fresh_pm(tenants)
    with django_assert_num_queries(3):
        body = client.get(SPARES).json()
    assert body["count"] == 2
    ended, soon = body["results"]
    assert (ended["serial"], ended["ended"], ended["days_left"]) == ("SPARE-ENDED", True, -2)
    assert (soon["serial"], soon["ended"], soon["days_left"]) == ("SPARE-10", False, 10)
    assert set(soon) == {
        "component",
        "serial",
        "part",
        "mpn",
        "part_name",
        "supplier",
        "supplier_name",
        "lot",
        "lot_code",
        "received_at",
        "supplier_warranty_months",
        "supplier_warranty_ends",
        "days_left",
        "ended",
    }
    assert (soon["supplier_name"], soon["lot_code"], soon["supplier_warranty_months"]) == (
        "EuroGPU Distribution GmbH",
        "L-1",
        36,
    )
    stock(supplier("Kurzfrist Teile GmbH", 12), {"B-SPARE": timezone.localdate() - relativedelta(months=12)})
    client = _fresh_pm(tenants)
    with django_assert_num_queries(3):
        assert client.get(SPARES).json()["count"] == 3
