"""The served OpenAPI schema says what the API really answers: the error codes of every operation, and
null where a field can be null (both found by the API fuzzer, tests/fuzz)."""

from __future__ import annotations

import pytest

from deployment.services import site_create
from inventory.models import LabelBatch
from tests import factories
from tests.tenants_rig import api_client
from warranty.models import HandoverPack

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


def test_every_operation_that_takes_a_body_documents_the_413(schema):
    """Found by the fuzzer (issue #26): a 1 MB multipart body to `POST /label-batches/` answered an
    undocumented 413 (werkbank/api/parsers.py)."""
    taking = [
        (method, path)
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if "requestBody" in operation
    ]
    assert len(taking) > 50
    for method, path in taking:
        assert "413" in schema["paths"][path][method]["responses"], f"{method.upper()} {path}"


@pytest.mark.parametrize(
    ("url", "component", "field"),
    [
        ("/api/v1/burnin/runs/", "Run", "uploaded_by"),
        ("/api/v1/burnin/findings/", "Finding", "waived_by"),
        ("/api/v1/roi-assessments/", "ROIAssessment", "created_by"),
        ("/api/v1/sites/", "Site", "customer_name"),
        ("/api/v1/builds/servers/", "Server", "partner_name"),
        ("/api/v1/inventory/label-batches/", "LabelBatch", "pdf_url"),
        ("/api/v1/handover/packs/", "HandoverPack", "pdf_url"),
        ("/api/v1/handover/packs/", "HandoverPack", "zip_url"),
    ],
)
def test_a_field_the_api_answers_null_is_nullable_in_the_schema(tenants, schema, url, component, field):
    """A run uploaded by nobody (seeded), an unwaived finding, an assessment by a deleted user, a site
    without a customer, a server no partner builds yet, and the file URLs of a label batch or a pack that
    is not ready answer null; the schema must allow it."""
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
    LabelBatch.objects.create(title="Labels of 1 component", count=1, requested_by=tenants.pm)
    HandoverPack.objects.create(server=server, revision=1, language="en")  # queued: no files yet
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
