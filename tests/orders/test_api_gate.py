"""The approval gate through the API: ROI versions, workload sizing, power budget, override."""

from __future__ import annotations

from decimal import Decimal

import pytest

from orders.choices import OrderStatus
from orders.models import Order, ROIAssessment, Workload
from tests import factories
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

# The worked example of docs/reference/sizing-and-roi.md §4: payback 43.5 months, fails a 36-month gate.
WORKED = {
    "capex": "100000",
    "gpu_count": 8,
    "price_per_gpu_hour": "1.00",
    "utilization": "0.6",
    "platform_fee": "0",
    "power_active_kw": "6.3",
    "power_idle_kw": "1.2",
    "energy_price_kwh": "0.15",
    "pue": "1.3",
    "colo_month": "600",
    "horizon_months": 36,
    "discount_rate_annual": "0.10",
    "currency": "USD",
}
PAYING = {**WORKED, "capex": "50000"}  # the same server at half the price pays back in 21.8 months


@pytest.fixture
def order(tenants):
    return factories.OrderFactory(customer=tenants.customer_a, status=OrderStatus.ROI_REVIEW)


def _assess(client, order, body):
    return client.post(f"/api/v1/orders/{order.pk}/roi-assessments/", body, format="json")


def test_assessments_are_versioned_and_store_their_outputs(pm_client, order):
    first = _assess(pm_client, order, WORKED)
    second = _assess(pm_client, order, PAYING)
    assert (first.status_code, second.status_code) == (201, 201), first.json()
    assert [first.json()["version"], second.json()["version"]] == [1, 2]
    saved = ROIAssessment.objects.get(order=order, version=1)
    assert saved.hours_per_month == 730
    assert saved.revenue_month == Decimal("3504.00")
    assert saved.net_month == Decimal("2297.59")
    assert abs(saved.payback_months - Decimal("43.52")) <= Decimal("0.01")
    listed = pm_client.get(f"/api/v1/orders/{order.pk}/roi-assessments/").json()
    assert [row["version"] for row in listed] == [2, 1]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"capex": "-5"}, "capex"),
        ({"capex": "0"}, "capex"),
        ({"gpu_count": 0}, "gpu_count"),
        ({"horizon_months": 0}, "horizon_months"),
        ({"utilization": "1.5"}, "utilization"),
        ({"utilization": "-0.1"}, "utilization"),
        ({"power_idle_kw": "9"}, "power_idle_kw"),
        ({"pue": "0.9"}, "pue"),
    ],
)
def test_bad_roi_input_is_a_400_naming_the_field_and_saves_nothing(pm_client, order, change, field):
    response = _assess(pm_client, order, {**WORKED, **change})
    assert response.status_code == 400
    assert field in response.json()
    assert not ROIAssessment.objects.exists()
    assert not AuditEvent.objects.exists()


def test_preview_computes_without_saving(pm_client, order):
    response = pm_client.post(
        "/api/v1/roi-assessments/preview/", {**WORKED, "horizon_months": 60}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["hours_per_month"] == 730
    assert round(body["npv"]) == pytest.approx(9224, abs=30)
    assert body["irr_annual"] == pytest.approx(0.143, abs=0.001)
    assert len(body["cashflows"]) == 61
    assert not ROIAssessment.objects.exists()


def test_preview_reports_never_paying_back_as_null(pm_client):
    response = pm_client.post(
        "/api/v1/roi-assessments/preview/", {**WORKED, "utilization": "0.05"}, format="json"
    )
    assert response.status_code == 200
    assert (response.json()["payback_months"], response.json()["pays_back"]) == (None, False)


def _approve(client, order, **body):
    return client.post(f"/api/v1/orders/{order.pk}/approve/", body, format="json")


def test_approval_without_assessment_is_refused(pm_client, order):
    response = _approve(pm_client, order)
    assert response.status_code == 409
    assert response.json()["code"] == "approval_gate"
    assert response.json()["missing"] == ["No ROI assessment yet: add one before approval."]
    order.refresh_from_db()
    assert order.status == OrderStatus.ROI_REVIEW
    assert not AuditEvent.objects.for_object(order).exists()


def test_latest_assessment_counts(pm_client, order):
    _assess(pm_client, order, PAYING)
    _assess(pm_client, order, WORKED)  # v2 fails: 43.5 months
    refused = _approve(pm_client, order)
    assert refused.status_code == 409
    assert "ROI v2: payback 43.5 months against a target of 36 months" in refused.json()["detail"]
    events_before = AuditEvent.objects.count()

    _assess(pm_client, order, PAYING)  # v3 pays back
    assert AuditEvent.objects.count() == events_before + 1
    assert _approve(pm_client, order).status_code == 200
    order.refresh_from_db()
    assert order.status == OrderStatus.APPROVED


def test_every_failed_check_is_listed_with_its_numbers(pm_client, tenants):
    gpu = factories.PartFactory(vram_gb=96, tdp_w=600)
    configuration = factories.ConfigurationFactory(
        psu_count=4, psu_rating_w=1600, psu_redundant=1, lines=[(gpu, 8), (factories.ChassisFactory(), 1)]
    )
    order = factories.OrderFactory(
        customer=tenants.customer_a,
        configuration=configuration,
        status=OrderStatus.ROI_REVIEW,
        circuit_v=230,
        circuit_a=16,
    )
    _assess(pm_client, order, WORKED)
    workload = {
        "preset": "llama-3.1-70b",
        "weights_dtype": "int8",
        "kv_dtype": "fp16",
        "context_tokens": 16384,
        "concurrency": 8,
        "tensor_parallel_gpus": 1,
        "overhead_fraction": "0.12",
    }
    assert pm_client.put(f"/api/v1/orders/{order.pk}/workload/", workload, format="json").status_code == 200

    response = _approve(pm_client, order)
    assert response.status_code == 409
    missing = response.json()["missing"]
    assert len(missing) == 4
    assert missing[0].startswith("ROI v1: payback 43.5 months")
    assert "needs 127.1 GB per GPU" in missing[1]  # seed 001: 70B INT8, 16k, 8 requests ≈ 125 GB > 96 GB
    # 8 × 600 W = 4800 W DC against 3 × 1600 × 0.9 = 4320 W; 4800 / 0.94 = 5106 W at the wall against 2944 W.
    assert missing[2] == (
        "PSU load 4,800 W DC (TDP sum) against 4,320 W usable with headroom 0.9 "
        "(4,800 W usable of 6,400 W installed); margin -480 W (-11.1 %)."
    )
    assert missing[3] == (
        "Wall power 5,106 W (DC load 4,800 W / efficiency 0.94) against the circuit's continuous limit "
        "2,944 W (80 % of 1× 230 V × 16 A); margin -2,162 W (-73.5 %)."
    )
    order.refresh_from_db()
    assert order.status == OrderStatus.ROI_REVIEW

    checks = pm_client.get(f"/api/v1/orders/{order.pk}/approval-checks/").json()
    assert checks["approvable"] is False
    assert [check["name"] for check in checks["checks"]] == ["roi", "vram", "psu", "circuit"]


def _gpu_server(*, gpu_tdp_w: int, gpus: int, psu_count: int, extra: list | None = None):
    gpu = factories.PartFactory(vram_gb=32, tdp_w=gpu_tdp_w)
    return factories.ConfigurationFactory(
        psu_count=psu_count,
        psu_rating_w=1600,
        psu_redundant=1,
        lines=[(gpu, gpus), (factories.ChassisFactory(), 1), *(extra or [])],
    )


def test_seed_000_fleet_passes_the_psu_check_on_its_dc_load(pm_client, tenants):
    # Seed 000: 8× RTX 5090 (575 W), 2× EPYC 9754 (360 W), 12 DIMMs (10 W), 2 NVMe (9 W): 5458 W of TDP on
    # 5× 1600 W N+1. 5458 ≤ 5760 W; the old check, 5458 / 0.94 = 5806 W, refused it by 46 W.
    cpu = factories.PartFactory(category="cpu", tdp_w=360)
    dimm = factories.PartFactory(category="memory", tdp_w=10)
    nvme = factories.PartFactory(category="storage", tdp_w=9)
    configuration = _gpu_server(gpu_tdp_w=575, gpus=8, psu_count=5, extra=[(cpu, 2), (dimm, 12), (nvme, 2)])
    order = factories.OrderFactory(
        customer=tenants.customer_a, configuration=configuration, status=OrderStatus.ROI_REVIEW
    )
    _assess(pm_client, order, PAYING)

    checks = pm_client.get(f"/api/v1/orders/{order.pk}/approval-checks/").json()
    assert checks["approvable"] is True
    psu = next(check for check in checks["checks"] if check["name"] == "psu")
    assert psu["numbers"] == {
        "psu_load_w": 5458.0,
        "usable_w": 6400.0,
        "usable_with_headroom_w": 5760.0,
        "psu_margin_w": 302.0,
    }
    assert "margin 302 W (5.2 %)" in psu["summary"]
    assert _approve(pm_client, order).status_code == 200
    order.refresh_from_db()
    assert (order.status, order.approval_override_reason) == (OrderStatus.APPROVED, "")


def test_dc_load_within_the_psus_but_wall_power_over_the_circuit_is_refused(pm_client, tenants):
    # 4 × 700 W = 2800 W DC against 3 × 1600 W N+1 × 0.9 = 2880 W: the PSUs hold it (80 W margin). At the
    # wall it is 2800 / 0.94 = 2978.72 W, over the 16 A / 230 V circuit's 0.8 × 230 × 16 = 2944 W.
    order = factories.OrderFactory(
        customer=tenants.customer_a,
        configuration=_gpu_server(gpu_tdp_w=700, gpus=4, psu_count=3),
        status=OrderStatus.ROI_REVIEW,
        circuit_v=230,
        circuit_a=16,
    )
    _assess(pm_client, order, PAYING)

    response = _approve(pm_client, order)
    assert response.status_code == 409
    assert response.json()["missing"] == [
        "Wall power 2,979 W (DC load 2,800 W / efficiency 0.94) against the circuit's continuous limit "
        "2,944 W (80 % of 1× 230 V × 16 A); margin -35 W (-1.2 %)."
    ]
    checks = {
        check["name"]: check
        for check in pm_client.get(f"/api/v1/orders/{order.pk}/approval-checks/").json()["checks"]
    }
    assert checks["psu"]["ok"] is True and checks["psu"]["numbers"]["psu_margin_w"] == 80
    assert checks["circuit"]["numbers"]["wall_power_w"] == pytest.approx(2978.72, abs=0.01)
    assert checks["circuit"]["numbers"]["circuit_margin_w"] == pytest.approx(-34.72, abs=0.01)
    order.refresh_from_db()
    assert order.status == OrderStatus.ROI_REVIEW


def test_override_needs_a_reason_and_is_audited_and_shown(pm_client, order):
    _assess(pm_client, order, WORKED)
    assert _approve(pm_client, order, override_reason="   ").status_code == 409

    response = _approve(
        pm_client, order, note="go", override_reason="Strategic customer; payback 43.5 accepted"
    )
    assert response.status_code == 200
    assert response.json()["approval_override_reason"] == "Strategic customer; payback 43.5 accepted"
    override = AuditEvent.objects.get(verb="order.approve_override")
    assert override.actor.username == "pm"
    assert override.before["failed_checks"][0].startswith("ROI v1: payback 43.5 months")
    assert AuditEvent.objects.filter(verb="order.approve").count() == 1


def test_an_override_is_not_recorded_when_every_check_passes(pm_client, order):
    _assess(pm_client, order, PAYING)
    assert _approve(pm_client, order, override_reason="not needed").status_code == 200
    order.refresh_from_db()
    assert order.approval_override_reason == ""
    assert not AuditEvent.objects.filter(verb="order.approve_override").exists()


def test_workload_from_an_explicit_architecture(pm_client, order):
    body = {
        "params_b": "8.03",
        "layers": 32,
        "kv_heads": 8,
        "head_dim": 128,
        "weights_dtype": "bf16",
        "kv_dtype": "fp16",
        "context_tokens": 8192,
        "concurrency": 4,
    }
    response = pm_client.put(f"/api/v1/orders/{order.pk}/workload/", body, format="json")
    assert response.status_code == 200, response.json()
    sizing = response.json()["sizing"]
    assert sizing["kv_bytes_per_token"] == 131072
    assert sizing["fits"] is True  # 32 GB per GPU in the factory's configuration


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"preset": "gpt-5", "context_tokens": 1024}, "preset"),
        ({"params_b": "8", "layers": 32, "head_dim": 128, "context_tokens": 1024}, "kv_heads"),
        ({"layers": 32, "kv_heads": 8, "head_dim": 128, "context_tokens": 1024}, "params_b"),
        ({"preset": "llama-3.1-8b", "context_tokens": 0}, "context_tokens"),
        ({"preset": "llama-3.1-8b", "context_tokens": 1024, "weights_dtype": "int3"}, "weights_dtype"),
    ],
)
def test_bad_workload_is_a_400_naming_the_field(pm_client, order, body, field):
    response = pm_client.put(f"/api/v1/orders/{order.pk}/workload/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not Workload.objects.exists()


def test_customer_reads_own_gate_but_cannot_change_it(tenants, order):
    client = api_client(tenants.user_a)
    assert client.get(f"/api/v1/orders/{order.pk}/approval-checks/").status_code == 200
    assert _assess(client, order, WORKED).status_code == 403
    assert client.put(f"/api/v1/orders/{order.pk}/workload/", {}, format="json").status_code == 403
    assert _approve(client, order, override_reason="me").status_code == 403
    assert Order.objects.get(pk=order.pk).status == OrderStatus.ROI_REVIEW


def test_the_roi_inputs_are_one_list(pm_client, order):
    """The API accepts, stores and returns exactly the inputs the model's one list names."""
    from orders.api.serializers import ROIAssessmentSerializer, ROIInputSerializer
    from orders.models import ROI_INPUT_FIELDS, ROI_STORED_INPUTS

    assert set(ROIInputSerializer().fields) - {"currency", "note"} == set(ROI_INPUT_FIELDS)
    assert set(ROI_STORED_INPUTS) <= set(ROIAssessmentSerializer().fields)
    assert set(ROI_STORED_INPUTS) - set(ROI_INPUT_FIELDS) == {"target_payback_months"}
