"""The ROI assessment's add form: inputs labelled with their units, and a live preview of the result that the
page's script asks the admin for as the PM types (issue #14, item 5)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from orders.models import ROIAssessment
from orders.services import roi_preview
from tests import factories
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

PREVIEW = "/admin/orders/roiassessment/preview/"

#: tests/orders/test_admin.py's inputs: 8 GPUs at 1.00 per GPU-hour, 60 % rented, net 2,297.59 a month.
INPUTS = {
    "currency": "USD", "capex": "100000", "gpu_count": "8", "price_per_gpu_hour": "1.00",
    "utilization": "0.6", "platform_fee": "0", "power_active_kw": "6.3", "power_idle_kw": "1.2",
    "energy_price_kwh": "0.15", "pue": "1.3", "colo_month": "600", "other_opex_month": "0",
    "horizon_months": "36", "discount_rate_annual": "0.10", "residual_value": "0",
    "rent_price_per_gpu_hour": "", "note": "",
}  # fmt: skip


@pytest.fixture
def pm_browser(client, tenants):
    assert client.login(username="pm", password=factories.PASSWORD)
    return client


def test_the_url_is_the_admins():
    assert reverse("admin:orders_roiassessment_preview") == PREVIEW


def test_the_preview_is_the_services_result_and_saves_nothing(pm_browser, tenants):
    response = pm_browser.post(PREVIEW, INPUTS)
    assert response.status_code == 200
    data = response.json()
    expected = roi_preview(
        **{key: value for key, value in INPUTS.items() if key not in {"currency", "note"} and value}
    )
    assert data["values"]["net_month"] == pytest.approx(expected.net_month)
    assert data["values"]["net_month"] == pytest.approx(2297.59, abs=0.01)
    assert data["values"]["payback_months"] == pytest.approx(expected.payback_months)
    assert data["values"]["npv"] == pytest.approx(expected.npv)
    assert data["pays_back"] is True
    rows = {row["key"]: row for row in data["rows"]}
    assert rows["net_month"]["text"] == "2,297.59 USD"
    assert rows["hours_per_month"]["text"] == "730 h"
    assert rows["payback_months"]["text"] == f"{expected.payback_months:,.1f} months"
    assert rows["breakeven_utilization_opex"]["text"].endswith(" %")
    assert "Payback" in rows["payback_months"]["label"]
    assert not ROIAssessment.objects.exists()
    assert not AuditEvent.objects.filter(verb="order.roi_assess").exists()


def test_a_server_that_never_pays_back_says_never(pm_browser, tenants):
    response = pm_browser.post(PREVIEW, {**INPUTS, "price_per_gpu_hour": "0.01"})
    assert response.status_code == 200
    data = response.json()
    assert data["pays_back"] is False
    assert data["values"]["payback_months"] is None
    assert {row["key"]: row["text"] for row in data["rows"]}["payback_months"] == "never"


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("utilization", "75", "within"),  # a percentage where a fraction belongs: out of bounds
        ("gpu_count", "eight", "whole number"),
        ("pue", "0.8", "within"),
        ("capex", "", "required"),
    ],
)
def test_a_bad_input_is_a_400_naming_the_field(pm_browser, tenants, field, value, words):
    response = pm_browser.post(PREVIEW, {**INPUTS, field: value})
    assert response.status_code == 400
    data = response.json()
    assert data["field"] == field
    assert words in data["message"].lower()
    assert data["label"] == str(ROIAssessment._meta.get_field(field).verbose_name)
    # An empty input is "still needed" on the page, not an error: the code tells the two apart.
    assert (data["code"] == "required") == (words == "required")


def test_idle_above_full_load_is_refused_by_the_formulas_naming_the_field(pm_browser, tenants):
    response = pm_browser.post(PREVIEW, {**INPUTS, "power_idle_kw": "7"})
    assert response.status_code == 400
    assert response.json()["field"] == "power_idle_kw"


def test_only_pms_get_a_preview(client, tenants):
    assert client.post(PREVIEW, INPUTS).status_code == 302  # anonymous: to the login
    client.force_login(tenants.user_a)
    assert client.post(PREVIEW, INPUTS).status_code == 302  # a customer member is not staff
    client.force_login(factories.UserFactory(is_staff=True))
    response = client.post(PREVIEW, INPUTS)
    assert response.status_code == 403  # staff, but no PM
    assert "project managers" in response.json()["error"]


def test_a_get_is_refused(pm_browser, tenants):
    assert pm_browser.get(PREVIEW).status_code == 405


def test_the_add_form_shows_units_help_the_preview_box_and_its_script(pm_browser, tenants):
    html = pm_browser.get("/admin/orders/roiassessment/add/").content.decode()
    assert "Utilisation (0–1)" in html
    assert "Share of hours rented, 0–1" in html
    assert "Power usage effectiveness: facility power / IT power, ≥ 1" in html
    assert "Power at full load (kW)" in html
    assert f'id="roi-preview" data-url="{PREVIEW}"' in html
    assert "orders/admin/roi_preview.js" in html


def test_the_api_schema_carries_the_help_texts(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    properties = schema["components"]["schemas"]["ROIInputRequest"]["properties"]
    assert "Share of hours rented, 0–1" in properties["utilization"]["description"]
