"""Creating and listing orders and configurations through the API."""

from __future__ import annotations

import re

import pytest

from orders.models import Order, ServerConfiguration
from tests import factories
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def configuration():
    return factories.ConfigurationFactory()


def test_pm_creates_orders_with_sequential_references(tenants, configuration):
    client = api_client(tenants.pm)
    body = {
        "customer": tenants.customer_a.pk,
        "configuration": configuration.pk,
        "server_count": 8,
        "warranty_months": 60,
    }
    first = client.post("/api/v1/orders/", body, format="json")
    second = client.post("/api/v1/orders/", body, format="json")
    assert first.status_code == 201, first.json()
    refs = [first.json()["reference"], second.json()["reference"]]
    assert all(re.fullmatch(r"WB-\d{4}-\d{4}", ref) for ref in refs)
    assert int(refs[1][-4:]) == int(refs[0][-4:]) + 1
    assert first.json()["status"] == "draft"
    order = Order.objects.get(reference=refs[0])
    assert AuditEvent.objects.for_object(order).get().verb == "order.create"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"server_count": 0}, "server_count"),
        ({"warranty_months": 48}, "warranty_months"),
        ({"customer": None}, "customer"),
        ({"configuration": 999999}, "configuration"),
    ],
)
def test_bad_order_input_is_a_400_naming_the_field(tenants, configuration, change, field):
    body = {"customer": tenants.customer_a.pk, "configuration": configuration.pk, "server_count": 2, **change}
    response = api_client(tenants.pm).post("/api/v1/orders/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not Order.objects.exists()
    assert not AuditEvent.objects.exists()


def test_a_partner_cannot_be_the_customer(tenants, configuration):
    body = {"customer": tenants.partner_p.pk, "configuration": configuration.pk, "server_count": 1}
    response = api_client(tenants.pm).post("/api/v1/orders/", body, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "customer": [f"{tenants.partner_p.name} is an assembly partner, not a customer."]
    }
    assert not Order.objects.exists()


def test_pm_creates_a_configuration_with_its_bill_of_materials(tenants):
    gpu, chassis = factories.PartFactory(), factories.ChassisFactory()
    body = {
        "name": "8x RTX 5090 6U",
        "psu_count": 5,
        "psu_rating_w": 1600,
        "psu_redundant": 1,
        "lines": [{"part": gpu.pk, "quantity": 8}, {"part": chassis.pk, "quantity": 1}],
    }
    response = api_client(tenants.pm).post("/api/v1/configurations/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["usable_psu_w"] == 6400
    assert sorted(line["quantity"] for line in response.json()["lines"]) == [1, 8]


def test_a_configuration_without_psu_redundant_is_n_plus_1(tenants):
    """Issue 16, defect 5: the optional field left out gave a 500 (TypeError); the model's default holds."""
    gpu = factories.PartFactory()
    body = {"name": "N+1", "psu_count": 4, "psu_rating_w": 2000, "lines": [{"part": gpu.pk, "quantity": 4}]}
    response = api_client(tenants.pm).post("/api/v1/configurations/", body, format="json")
    assert response.status_code == 201, response.content
    assert (response.json()["psu_redundant"], response.json()["usable_psu_w"]) == (1, 6000)
    assert ServerConfiguration.objects.get().psu_redundant == 1
    # One PSU left out of N+1 cannot hold: a 400 naming the field, as with psu_redundant given.
    single = {**body, "name": "Single", "psu_count": 1}
    refused = api_client(tenants.pm).post("/api/v1/configurations/", single, format="json")
    assert refused.status_code == 400 and "psu_redundant" in refused.json()


@pytest.mark.parametrize(
    ("change", "field"),
    [({"psu_redundant": 5}, "psu_redundant"), ({"psu_count": 0}, "psu_count"), ({"lines": []}, "lines")],
)
def test_bad_configuration_input_is_a_400(tenants, change, field):
    gpu = factories.PartFactory()
    body = {
        "name": "X",
        "psu_count": 5,
        "psu_rating_w": 1600,
        "psu_redundant": 1,
        "lines": [{"part": gpu.pk, "quantity": 8}],
    }
    response = api_client(tenants.pm).post("/api/v1/configurations/", {**body, **change}, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not ServerConfiguration.objects.exists()


def test_configuration_is_frozen_once_an_order_is_past_draft(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a, status="approved")
    response = api_client(tenants.pm).patch(
        f"/api/v1/configurations/{order.configuration_id}/", {"psu_count": 6}, format="json"
    )
    assert response.status_code == 409
    assert order.reference in response.json()["detail"]


def test_order_list_has_a_constant_query_count(tenants, django_assert_num_queries):
    from django.contrib.auth import get_user_model

    def fresh_pm_client():
        # A fresh user object per request, as in production: the PM check is not cached across requests.
        return api_client(get_user_model().objects.get(pk=tenants.pm.pk))

    factories.OrderFactory.create_batch(3, customer=tenants.customer_a)
    client = fresh_pm_client()
    with django_assert_num_queries(4):  # the PM check, the count, the page, the PO links
        client.get("/api/v1/orders/?limit=10")
    factories.OrderFactory.create_batch(20, customer=tenants.customer_b)
    client = fresh_pm_client()
    with django_assert_num_queries(4):
        response = client.get("/api/v1/orders/?limit=100")
    assert response.json()["count"] == 23
    assert len(response.json()["results"]) == 23


def test_customer_sees_own_order_timeline(tenants, django_capture_on_commit_callbacks):
    order = factories.OrderFactory(customer=tenants.customer_a)
    api_client(tenants.pm).post(f"/api/v1/orders/{order.pk}/submit/", {"note": "ready"}, format="json")
    response = api_client(tenants.user_a).get(f"/api/v1/orders/{order.pk}/events/")
    assert response.status_code == 200
    # The status change, without the PM's note or login (werkbank/audiences.py).
    assert [(event["verb"], event["after"]) for event in response.json()] == [
        ("order.submit", {"status": "roi_review"})
    ]
    assert "actor" not in response.json()[0] and "note" not in response.json()[0]
    pm_view = api_client(tenants.pm).get(f"/api/v1/orders/{order.pk}/events/").json()
    assert [(event["verb"], event["actor"], event["note"]) for event in pm_view] == [
        ("order.submit", "pm", "ready")
    ]


@pytest.mark.parametrize("offset", ["+21:18", "-16:00"])
def test_a_creation_filter_with_an_offset_no_clock_has_is_a_400(tenants, offset):
    """Found by the API fuzzer: PostgreSQL refused the offset with an error, which answered 500."""
    response = api_client(tenants.pm).get(
        "/api/v1/orders/", {"created_after": f"2026-03-26T08:05:10{offset}"}
    )
    assert response.status_code == 400, response.content
    assert "created_after" in response.json()


def test_a_creation_filter_within_fourteen_hours_of_utc_filters(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a)
    response = api_client(tenants.pm).get("/api/v1/orders/", {"created_after": "2000-01-01T00:00:00+14:00"})
    assert [row["id"] for row in response.json()["results"]] == [order.pk]
