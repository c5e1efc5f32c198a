"""`manage.py seed_demo` gives the handed-over fleet server its two weekly field checks
(burnin/demo_field.py), posted by the customer's member: the first healthy, the second with GPU 3 at x8, a
drift `fail` that drafts a warranty claim."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from builds.models import Installation, Server
from burnin.models import BurnInRun
from warranty.models import WarrantyClaim

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(settings, tmp_path) -> Server:
    settings.MEDIA_ROOT = tmp_path
    call_command("seed_demo", quiet=True)
    [server] = Server.objects.filter(status="handed_over")
    return server


def _field_runs(server: Server) -> list[BurnInRun]:
    return list(BurnInRun.objects.filter(server=server, purpose="field_check").order_by("started_at"))


def test_the_handed_over_server_has_a_healthy_field_check_and_a_week_later_gpu_3_at_x8(demo):
    server = demo
    [burn_in] = BurnInRun.objects.filter(server=server, purpose="burn_in", accepted_at__isnull=False)
    healthy, degraded = _field_runs(server)
    assert {run.uploaded_by.username for run in (healthy, degraded)} == {"vastfleet"}
    assert {run.schema_version for run in (healthy, degraded)} == {"1.1.0"}
    assert degraded.started_at - healthy.started_at == timedelta(days=7)
    assert timedelta(days=1) < timezone.now() - degraded.started_at < timedelta(days=7)
    assert all(run.ended_at - run.started_at == timedelta(minutes=15) for run in (healthy, degraded))

    assert healthy.result == "pass"
    assert not healthy.findings.filter(severity="fail").exists()
    assert not healthy.findings.filter(code__startswith="drift_").exists()
    results = list(healthy.gpu_results.select_related("baseline"))
    assert len(results) == 8
    for result in results:
        baseline = result.baseline
        assert baseline is not None and baseline.run_id == burn_in.pk and baseline.uuid == result.uuid
        for name in ("h2d_gbps", "tflops", "vram_gbps", "mean_power_w"):
            assert getattr(result, name) == pytest.approx(getattr(baseline, name), rel=0.01), name
        assert abs(result.peak_temp_c - baseline.peak_temp_c) <= 1
        assert (result.load_gen, result.load_width) == (5, 16)

    assert degraded.result == "fail"
    drifts = degraded.findings.filter(severity="fail", code__startswith="drift_")
    assert {finding.gpu_index for finding in drifts} == {3}
    h2d = drifts.get(code="drift_h2d")
    assert (h2d.evidence["baseline"], h2d.evidence["value"], h2d.evidence["baseline_run"]) == (
        53.6,
        26.8,
        burn_in.pk,
    )
    gpu_3 = degraded.gpu_results.select_related("baseline").get(index=3)
    assert (gpu_3.load_width, gpu_3.h2d_gbps) == (8, 26.8)
    assert (gpu_3.baseline.load_width, gpu_3.baseline.h2d_gbps) == (16, 53.6)
    others = degraded.gpu_results.exclude(index=3)
    assert {result.load_width for result in others} == {16}
    assert all(result.h2d_gbps == pytest.approx(53.6, rel=0.01) for result in others)


def test_the_x8_drift_drafted_one_claim_on_gpu_3s_warranty_record(demo):
    server = demo
    degraded = _field_runs(server)[-1]
    gpu_3 = (
        Installation.objects.active()
        .filter(server=server, component__part__category="gpu")
        .order_by("connector__position")
        .values_list("component_id", flat=True)[3]
    )
    [claim] = WarrantyClaim.objects.filter(status="draft").select_related("record", "finding")
    assert claim.record.server == server and claim.record.component_id == gpu_3
    assert claim.finding.run == degraded and claim.finding.gpu_index == 3
