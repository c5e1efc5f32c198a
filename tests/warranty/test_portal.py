"""The portal's warranty pages: lookup, a record with lineage and claims, filing a claim."""

from __future__ import annotations

from datetime import date

import pytest

from tests import factories
from tests.builds.bench_rig import GPUS_L1
from tests.tenants_rig import api_client
from warranty.models import WarrantyClaim, WarrantyRecord

pytestmark = pytest.mark.django_db


def login(client, user):
    assert client.login(username=user.username, password=factories.PASSWORD)
    return client


def test_the_customer_sees_its_records_and_looks_one_up(client, handed):
    page = login(client, handed.t.user_a).get("/portal/warranty/")
    assert page.status_code == 200
    body = page.content.decode()
    assert all(serial in body for serial in GPUS_L1[:2]) and handed.server.asset_tag in body
    found = client.get("/portal/warranty/", {"serial": GPUS_L1[0].lower()}).content.decode()
    assert GPUS_L1[0] in found and GPUS_L1[1] not in found


@pytest.mark.parametrize("who", ["user_b", "user_p"])  # another customer; the partner that built it
def test_another_tenants_serial_is_not_found(client, handed, who):
    login(client, getattr(handed.t, who))
    found = client.get("/portal/warranty/", {"serial": GPUS_L1[0]})
    if who == "user_b":
        assert f"Serial {GPUS_L1[0]} was not found" in found.content.decode()
    else:  # the portal is the customers' alone: a partner finds no page at all
        assert found.status_code == 404 and "was not found" not in found.content.decode()
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    assert client.get(f"/portal/warranty/records/{record.pk}/").status_code == 404
    assert client.post(f"/portal/warranty/records/{record.pk}/", {"description": "x"}).status_code == 404
    assert not WarrantyClaim.objects.exists()


def test_the_record_list_costs_a_fixed_number_of_queries(client, handed, django_assert_max_num_queries):
    login(client, handed.t.user_a)
    with django_assert_max_num_queries(10):
        response = client.get("/portal/warranty/")
    assert len(response.context["records"]) == 6


def test_anonymous_is_sent_to_log_in(client, handed):
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    for url in ("/portal/warranty/", f"/portal/warranty/records/{record.pk}/"):
        response = client.get(url)
        assert response.status_code == 302 and "/login" in response["Location"]


def test_filing_a_claim_and_seeing_its_status(client, handed):
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    login(client, handed.t.user_a)
    url = f"/portal/warranty/records/{record.pk}/"
    assert client.post(url, {"description": ""}).status_code == 400
    response = client.post(url, {"description": "The fan rattles at full load"})
    assert response.status_code == 302
    claim = WarrantyClaim.objects.get(record=record)
    page = client.get(url).content.decode()
    assert claim.number in page and "The fan rattles at full load" in page and 'data-status="open"' in page
    assert "File a claim" not in page  # one claim in progress at a time: no form until it is decided
    refused = client.post(url, {"description": "again"})
    assert refused.status_code == 409 and claim.number in refused.content.decode()


def test_the_pages_speak_german(client, handed):
    login(client, handed.t.user_a)
    client.cookies["django_language"] = "de"
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    body = client.get("/portal/warranty/").content.decode()
    assert "Seriennummer nachschlagen" in body
    detail = client.get(f"/portal/warranty/records/{record.pk}/").content.decode()
    assert "Garantiefall melden" in detail and "Austauschkette" in detail


def test_a_refused_claim_is_explained_in_the_customers_language(client, handed):
    """claim_open's refusals are translated where they are raised: the German portal shows them in German
    on the claim form (a second claim; an expired record)."""
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    login(client, handed.t.user_a)
    client.cookies["django_language"] = "de"
    url = f"/portal/warranty/records/{record.pk}/"
    assert client.post(url, {"description": "Der Lüfter rattert"}).status_code == 302
    number = WarrantyClaim.objects.get(record=record).number
    again = client.post(url, {"description": "noch einmal"})
    assert again.status_code == 409
    assert (
        f"Für {GPUS_L1[0]} kann kein Garantiefall gemeldet werden. "
        f"Für {GPUS_L1[0]} ist bereits der Garantiefall {number} in Bearbeitung."
    ) in again.content.decode()
    expired = WarrantyRecord.objects.get(serial=GPUS_L1[1])
    WarrantyRecord.objects.filter(pk=expired.pk).update(
        start_date=date(2020, 1, 1), end_date=date(2023, 1, 1)
    )
    refused = client.post(f"/portal/warranty/records/{expired.pk}/", {"description": "kaputt"})
    assert refused.status_code == 409
    assert f"Die Garantie für {GPUS_L1[1]} ist am 2023-01-01 abgelaufen." in refused.content.decode()


def test_the_api_explains_a_refused_claim_in_english_whatever_the_language_cookie(handed):
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    api = api_client(handed.t.user_a)
    api.cookies["django_language"] = "de"
    body = {"record": record.pk, "description": "Xid 79"}
    number = api.post("/api/v1/warranty/claims/", body, format="json").json()["number"]
    again = api.post("/api/v1/warranty/claims/", body, format="json")
    assert again.status_code == 409
    assert again.json()["detail"] == (
        f"No claim can be opened on {GPUS_L1[0]}. {GPUS_L1[0]} already has claim {number} in progress."
    )


def test_the_record_page_costs_the_same_queries_whatever_its_claims(client, handed):
    """The record's lineage comes with it and the claims' replacements with them: no query per claim
    (the session, the user, the customer membership, the record, its claims, and once it has claims, their
    logs and photos in one query)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    login(client, handed.t.user_a)
    url = f"/portal/warranty/records/{record.pk}/"
    client.get(url)  # the session and the user are warm
    with CaptureQueriesContext(connection) as none:
        assert client.get(url).status_code == 200
    for n in range(5):
        WarrantyClaim.objects.create(
            number=f"RMA-2020-{n:05d}",
            record=record,
            customer=record.customer,
            status="rejected",
            description="noise",
            decision_note="Within specification.",
        )
    with CaptureQueriesContext(connection) as five:
        response = client.get(url)
    assert len(response.context["claims"]) == 5 and (len(none), len(five)) == (5, 6)


def test_the_record_list_pages_and_its_pager_keeps_the_lookup(client, handed, monkeypatch):
    from portal.views.warranty import WarrantyListView

    monkeypatch.setattr(WarrantyListView, "paginate_by", 4)
    login(client, handed.t.user_a)
    first = client.get("/portal/warranty/")
    assert first.context["pager"] == {"number": 1, "num_pages": 2, "previous": None, "next": 2}
    assert 'href="?page=2"' in first.content.decode()
    second = client.get("/portal/warranty/", {"page": 2})
    assert len(second.context["records"]) == 2 and 'href="?page=1"' in second.content.decode()
    found = client.get("/portal/warranty/", {"serial": f" {GPUS_L1[0]} "})
    assert [record["serial"] for record in found.context["records"]] == [GPUS_L1[0]]
    assert found.context["pager"]["num_pages"] == 1 and 'class="pager"' not in found.content.decode()
