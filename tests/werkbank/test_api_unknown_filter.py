"""A list refuses a query parameter it does not take, naming it (issue #24; werkbank/api/filters.py).

django-filter ignored one: `?stauts=draft` answered every order as if filtered."""

from __future__ import annotations

import pytest
from drf_spectacular.generators import SchemaGenerator

from tests import factories
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db

UNKNOWN = "Unknown filter parameter"


def test_a_misspelt_filter_is_a_400_naming_it(tenants):
    factories.OrderFactory(customer=tenants.customer_a)
    response = api_client(tenants.pm).get("/api/v1/orders/", {"stauts": "draft"})
    assert response.status_code == 400
    body = response.json()
    assert list(body) == ["stauts"]
    [message] = body["stauts"]
    assert message.startswith(UNKNOWN)
    assert "`status`" in message and "`limit`" in message and "`ordering`" in message


def test_each_unknown_parameter_is_named(tenants):
    response = api_client(tenants.user_a).get("/api/v1/orders/", {"page": "2", "search": "x", "q": "x"})
    assert response.status_code == 400
    assert set(response.json()) == {"page", "search"}


def test_filters_ordering_paging_and_format_are_taken(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a)
    client = api_client(tenants.pm)
    params = {"status": order.status, "q": "", "ordering": "-created_at", "limit": 5, "offset": 0}
    response = client.get("/api/v1/orders/", {**params, "format": "json"})
    assert response.status_code == 200, response.content
    assert [row["id"] for row in response.json()["results"]] == [order.id]
    # A keyset list takes `cursor` as well.
    assert client.get("/api/v1/inventory/components/", {"cursor": "", "limit": 5}).status_code == 200


def test_a_detail_keeps_its_query_parameters(tenants):
    order = factories.OrderFactory(customer=tenants.customer_a)
    assert api_client(tenants.pm).get(f"/api/v1/orders/{order.pk}/", {"anything": "1"}).status_code == 200


def test_every_list_takes_every_parameter_the_schema_documents(tenants):
    """The schema and the refusal agree: a documented parameter is never unknown (empty values, which
    the filters ignore; a value a filter refuses would be a different 400)."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    client = api_client(tenants.pm)
    lists = [
        (path, operation)
        for path, operations in schema["paths"].items()
        if "{" not in path
        for method, operation in operations.items()
        if method == "get" and operation["operationId"].endswith("_list")
    ]
    assert lists
    refused = []
    for path, operation in lists:
        documented = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        response = client.get(path, dict.fromkeys(documented, ""))
        messages = [str(m) for value in response.json().values() if isinstance(value, list) for m in value]
        if response.status_code == 400 and any(m.startswith(UNKNOWN) for m in messages):
            refused.append(f"{path}: {response.json()}")
    assert not refused, "\n".join(refused)
