"""Servers in service with a health history, written directly as the ingest leaves the rows: a burn-in run
accepted as the baseline, weekly field checks, drift findings with the drift module's codes and params.

Shared by tests/burnin/test_pages_health.py and tests/pm/test_pipeline_health.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from burnin.models import BurnInRun, Finding, GpuResult
from tests import factories

BURNIN_AT = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
#: The healthy figures of every GPU at burn-in (an RTX PRO 6000 on Gen5 x16 would show more; seed 003's
#: 7U machine at Gen4 x16 shows 27.7 GB/s).
HEALTHY = {"h2d_gbps": 27.7, "tflops": 209.5, "peak_temp_c": 78.0}
#: Seed 003's fault: a card that trained at x8 moves half the data.
X8_GBPS = 13.9


def serial_of(server: Any, index: int) -> str:
    return f"SN-{server.pk}-{index}"


def in_service(
    tenants: Any,
    *,
    status: str = "handed_over",
    customer: Any = None,
    partner: Any = None,
    reference: str | None = None,
) -> Any:
    """A one-server order of customer A (or `customer`), built by partner P (or `partner`), in `status`."""
    fields: dict[str, Any] = {"customer": customer or tenants.customer_a, "server_count": 1}
    if reference:
        fields["reference"] = reference
    order = factories.OrderFactory(**fields)
    [server] = factories.make_servers(order, status=status)
    server.partner = partner or tenants.partner_p
    server.save(update_fields=["partner"])
    return server


def add_run(
    server: Any,
    *,
    started_at: datetime,
    purpose: str = "field_check",
    result: str = "pass",
    accepted: bool = False,
    gpus: int = 2,
    figures: Mapping[int, Mapping[str, float]] | None = None,
    serials: Mapping[int, str] | None = None,
    baselines: Mapping[int, GpuResult] | None = None,
) -> BurnInRun:
    """A run of `purpose` with `gpus` GPU results, healthy unless `figures` says otherwise by index."""
    run = factories.make_burnin_run_row(
        server,
        started_at=started_at,
        ended_at=started_at + timedelta(minutes=15 if purpose != "burn_in" else 72 * 60),
        result=result,
        purpose=purpose,
        accepted_at=started_at + timedelta(days=1) if accepted else None,
        schema_version="1.1.0",
    )
    GpuResult.objects.bulk_create(
        GpuResult(
            run=run,
            index=index,
            serial=(serials or {}).get(index, serial_of(server, index)),
            uuid=f"GPU-{server.pk:04d}-{index:04d}",
            baseline=(baselines or {}).get(index),
            **{**HEALTHY, **(figures or {}).get(index, {})},
        )
        for index in range(gpus)
    )
    return run


def add_h2d_drift(
    run: BurnInRun, *, index: int = 1, baseline_run: BurnInRun | None = None, **fields: Any
) -> Finding:
    """The drift module's `drift_h2d` fail on GPU `index` of `run` (x8: 13.9 against 27.7 GB/s)."""
    serial = run.gpu_results.get(index=index).serial
    return Finding.objects.create(
        run=run,
        code="drift_h2d",
        severity=fields.pop("severity", "fail"),
        subject=f"GPU {index}",
        gpu_index=index,
        message=f"H2D {X8_GBPS} GB/s, down 49.8 % from 27.7 GB/s at its baseline (serial {serial})",
        params={
            "h2d_gbps": X8_GBPS,
            "down_pct": 49.8,
            "baseline_gbps": 27.7,
            "serial": serial,
            "uuid": "",
            "variant": "link",
            "link": "Gen4 x8",
            "baseline_link": "Gen4 x16",
        },
        evidence={
            "serial": serial,
            "component_id": None,
            "baseline_run": baseline_run.pk if baseline_run else None,
            "baseline": 27.7,
            "value": X8_GBPS,
        },
        rule_version="drift-1",
        **fields,
    )


def weekly_history(server: Any, *, field_runs: int, drift_in: Sequence[int] = (), gpus: int = 2) -> BurnInRun:
    """The burn-in (accepted) and `field_runs` weekly field checks; those numbered in `drift_in` (from 1)
    have GPU 1 at x8 with its drift fail. Returns the burn-in run."""
    burnin = add_run(server, started_at=BURNIN_AT, purpose="burn_in", accepted=True, gpus=gpus)
    base = {result.index: result for result in burnin.gpu_results.all()}
    for week in range(1, field_runs + 1):
        fallen = week in drift_in
        run = add_run(
            server,
            started_at=BURNIN_AT + timedelta(weeks=week + 2),
            result="fail" if fallen else "pass",
            gpus=gpus,
            figures={1: {"h2d_gbps": X8_GBPS}} if fallen else None,
            baselines=base,
        )
        if fallen:
            add_h2d_drift(run, baseline_run=burnin)
    return burnin
