"""The PM's warranty report page (/pm/warranty/) and its CSV: PMs only, bucket tabs with counts, filters,
pages, the spares near the end of their supplier warranty, open claims and supplier returns; in German too."""

from __future__ import annotations

import csv
import io
from datetime import timedelta
from typing import Any

import pytest
from dateutil.relativedelta import relativedelta
from django.conf import settings
from django.test import Client
from django.utils import timezone

from tests.warranty.report_rig import records_ending, stock, supplier
from warranty.models import SupplierReturn, WarrantyClaim

pytestmark = pytest.mark.django_db

URL = "/pm/warranty/"
CSV_URL = "/pm/warranty/records.csv"


def _client(user: Any, *, language: str = "en") -> Client:
    client = Client()
    client.force_login(user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    return client


@pytest.fixture
def report(tenants):
    """Customer A's records ending in 5, 40 and 100 days, one ended yesterday, one replaced; customer B's
    ending in 20 days; an open claim and an open supplier return; a spare whose supplier warranty ends in
    10 days."""
    records = records_ending(
        tenants.customer_a,
        {"A-5": 5, "A-40": 40, "A-100": 100, "A-ENDED": -1, "A-REPLACED": 3},
        replaced=("A-REPLACED",),
    )
    records.update(records_ending(tenants.customer_b, {"=B-20": 20}))  # a serial a spreadsheet would run
    WarrantyClaim.objects.create(
        number="RMA-2026-00001", record=records["A-40"], customer=tenants.customer_a, description="Fan noise"
    )
    today = timezone.localdate()
    (spare,) = stock(
        supplier("EuroGPU Distribution GmbH", 36),
        {"SPARE-10": today + timedelta(days=10) - relativedelta(months=36)},
    )
    SupplierReturn.objects.create(
        number="SR-2026-0001",
        component=spare,
        supplier=spare.lot.supplier,
        reason="No link",
        created_by=tenants.pm,
    )
    return records


def test_only_pms_open_the_report_and_its_csv(client, tenants, report):
    for url in (URL, CSV_URL):
        assert client.get(url).status_code == 302  # anonymous: the login page
        for user in (tenants.user_a, tenants.user_p, tenants.outsider):
            assert _client(user).get(url).status_code == 404, (url, user.username)
        assert _client(tenants.pm).get(url).status_code == 200


def test_the_pm_sees_tabs_with_counts_the_records_spares_and_open_work(tenants, report):
    response = _client(tenants.pm).get(URL)  # default: within 90 days
    html = response.content.decode()
    assert 'data-bucket="90" aria-current="page"' in html
    for bucket, count in (("expired", 1), ("30", 2), ("60", 3), ("90", 3), ("180", 4)):
        tab = html.split(f'data-bucket="{bucket}"', 1)[1].split("</a>", 1)[0]
        assert f'<span class="count">({count})</span>' in tab, bucket
    rows = [record.serial for record in response.context["records"]]
    assert rows == ["A-5", "=B-20", "A-40"]  # soonest end first; replaced and ended left out
    a5 = report["A-5"]
    assert f'href="/pm/orders/{a5.order_id}/"' in html and a5.server.hostname in html
    assert (a5.end_date.strftime("%Y-%m-%d")) in html
    # The spares near their supplier warranty's end, and the open work with links to the admin lists.
    spares = html.split('id="spares"', 1)[1].split("</section>", 1)[0]
    assert "SPARE-10" in spares and "EuroGPU Distribution GmbH" in spares and "L-1" in spares
    assert "10 days left" in spares
    work = html.split('id="open-work"', 1)[1]
    assert 'href="/admin/warranty/warrantyclaim/"' in work and "1 open warranty claim" in work
    assert 'href="/admin/warranty/supplierreturn/"' in work and "1 open supplier return" in work
    # The menu leads here.
    assert f'href="{URL}"' in html.split("</nav>", 1)[0]


def test_filters_narrow_the_list_and_the_tabs(tenants, report):
    client = _client(tenants.pm)
    response = client.get(URL, {"bucket": "expired", "customer": tenants.customer_a.pk, "kind": "server"})
    assert [record.serial for record in response.context["records"]] == ["A-ENDED"]
    assert "ended 1 day ago" in response.content.decode()
    response = client.get(URL, {"bucket": "30", "customer": tenants.customer_b.pk})
    assert [record.serial for record in response.context["records"]] == ["=B-20"]
    assert response.context["counts"] == {"expired": 0, "30": 1, "60": 1, "90": 1, "180": 1}
    # A tab keeps the other filters.
    assert f'href="?bucket=60&amp;customer={tenants.customer_b.pk}"' in response.content.decode()
    assert client.get(URL, {"bucket": "30", "kind": "component"}).context["records"] == []


def test_a_filter_the_report_does_not_know_is_a_400_page_naming_it(tenants, report):
    response = _client(tenants.pm).get(URL, {"bucket": "45"})
    assert response.status_code == 400
    assert "The filter “bucket” has a value the report does not know." in response.content.decode()
    assert _client(tenants.pm).get(URL, {"customer": tenants.partner_p.pk}).status_code == 400
    assert _client(tenants.pm).get(CSV_URL, {"kind": "gpu"}).status_code == 400


def test_pages_follow_the_end_date(tenants, report, monkeypatch):
    monkeypatch.setattr("pm.views.warranty.PAGE_SIZE", 2)
    client = _client(tenants.pm)
    first = client.get(URL, {"bucket": "180"})
    assert [record.serial for record in first.context["records"]] == ["A-5", "=B-20"]
    assert 'href="?bucket=180&amp;page=2"' in first.content.decode()
    second = client.get(URL, {"bucket": "180", "page": "2"})
    assert [record.serial for record in second.context["records"]] == ["A-40", "A-100"]
    assert "Page 2 of 2" in second.content.decode()
    assert [
        record.serial for record in client.get(URL, {"bucket": "180", "page": "99"}).context["records"]
    ] == [
        "A-40",
        "A-100",
    ]


def test_the_csv_holds_every_row_of_the_filters(tenants, report):
    response = _client(tenants.pm).get(CSV_URL, {"bucket": "90"})
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    today = timezone.localdate()
    assert f'filename="warranty-90-{today.isoformat()}.csv"' in response["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == [
        "serial",
        "kind",
        "description",
        "customer",
        "server",
        "order",
        "start_date",
        "term_months",
        "end_date",
        "days_left",
    ]
    a5 = report["A-5"]
    assert rows[1] == [
        "A-5",
        "server",
        "Server A-5",
        tenants.customer_a.name,
        a5.server.hostname,
        a5.order.reference,
        a5.start_date.isoformat(),
        "36",
        (today + timedelta(days=5)).isoformat(),
        "5",
    ]
    # A cell a spreadsheet would take for a formula is quoted (OWASP CSV injection).
    assert [row[0] for row in rows[1:]] == ["A-5", "'=B-20", "A-40"]
    narrowed = _client(tenants.pm).get(CSV_URL, {"bucket": "expired", "customer": tenants.customer_a.pk})
    lines = b"".join(narrowed.streaming_content).decode().splitlines()
    assert len(lines) == 2 and lines[1].startswith("A-ENDED,server,")


def test_the_page_in_german(tenants, report):
    response = _client(tenants.pm, language="de").get(URL, {"bucket": "expired"})
    assert response.status_code == 200 and response["Content-Language"] == "de"
    html = response.content.decode()
    assert "<h1>Garantiebericht</h1>" in html
    assert "In höchstens 30 Tagen" in html and "Abgelaufene Garantien" in html
    assert "vor 1 Tag abgelaufen" in html
    assert "Ersatzteile kurz vor dem Ende ihrer Lieferantengarantie" in html and "noch 10 Tage" in html
    assert "1 offener Garantiefall" in html and "1 offene Lieferantenrücksendung" in html
    assert "Als CSV exportieren" in html
    assert "Warranty report" not in html and "Spares near the end" not in html
