"""The API root lists the routes of the core and of every app, assembled by the root URL configuration."""

import pytest

pytestmark = pytest.mark.django_db

ROUTES = [
    "organizations",
    *(f"inventory/{name}" for name in ("parts", "suppliers", "purchase-orders", "purchase-order-lines")),
    *(f"inventory/{name}" for name in ("lots", "components", "stock-movements")),
    "configurations",
    "orders",
    "roi-assessments",
    *(f"builds/{name}" for name in ("servers", "connectors", "installations", "allocations", "steps")),
    *(f"builds/{name}" for name in ("photos", "layouts")),
]


def test_the_api_root_lists_every_apps_routes(pm_client):
    response = pm_client.get("/api/v1/")
    assert response.status_code == 200
    listed = response.json()
    assert set(ROUTES) <= set(listed), sorted(set(ROUTES) - set(listed))
    for route in ROUTES:
        assert listed[route] == f"http://testserver/api/v1/{route}/"
        assert pm_client.get(f"/api/v1/{route}/").status_code == 200, route
