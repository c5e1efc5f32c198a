"""The served OpenAPI schema says what the API really answers: the error codes of every operation, and
null where a field can be null (both found by the API fuzzer, tests/fuzz)."""

from __future__ import annotations

import pytest

from deployment.services import site_create
from tests import factories
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(client):
    response = client.get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    return response.json()


def test_every_operation_documents_its_error_answers(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            expected = {"400", "401", "403", "404", "429"} | ({"409"} if method != "get" else set())
            assert expected <= set(operation["responses"]), f"{method.upper()} {path}"
    error = schema["paths"]["/api/v1/orders/{id}/approve/"]["post"]["responses"]["409"]
    assert error["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    assert {"detail", "code", "missing"} <= set(schema["components"]["schemas"]["Error"]["properties"])


@pytest.mark.parametrize(
    ("url", "component", "field"),
    [
        ("/api/v1/burnin/runs/", "Run", "uploaded_by"),
        ("/api/v1/burnin/findings/", "Finding", "waived_by"),
        ("/api/v1/roi-assessments/", "ROIAssessment", "created_by"),
        ("/api/v1/sites/", "Site", "customer_name"),
    ],
)
def test_a_field_the_api_answers_null_is_nullable_in_the_schema(tenants, schema, url, component, field):
    """A run uploaded by nobody (seeded), an unwaived finding, an assessment by a deleted user and a site
    without a customer answer null; the schema must allow it."""
    order = factories.OrderFactory(customer=tenants.customer_a, server_count=1)
    [server] = factories.make_servers(order, status="burn_in_failed")
    factories.make_burnin_run(server, findings=[{"code": "GPU_TEMP_HIGH", "severity": "warn"}])
    factories.ROIAssessmentFactory(order=order)
    site_create(
        actor=tenants.pm,
        name="Sofia Colo 1",
        kind="colocation",
        operator="Telepoint",
        customer=None,
        address="Business Park Sofia",
        country="BG",
    )
    rows = api_client(tenants.pm).get(url).json()["results"]
    assert rows and all(row[field] is None for row in rows)
    assert schema["components"]["schemas"][component]["properties"][field].get("nullable") is True


def test_an_api_path_that_names_nothing_answers_a_json_404(tenants, client):
    """Found by the fuzzer: /api/v1/orders/<not a number>/ answered Django's HTML 404 page."""
    response = api_client(tenants.pm).get("/api/v1/orders/%F2%80%AA%9C/")
    assert (response.status_code, response["Content-Type"]) == (404, "application/json")
    assert response.json() == {"detail": "Not found."}
    page = client.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")
