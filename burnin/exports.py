"""What an order's export carries of the burn-in (see werkbank/exports.py): the runs of the order's servers
with their raw reports (the files), stages, GPU results, findings and BMC events; not the telemetry."""

from __future__ import annotations

from werkbank import exports


def register_exports() -> None:
    from burnin.models import (
        BmcEvent,
        BurnInRun,
        BurnInStage,
        Finding,
        GpuResult,
        TelemetryRollup,
        TelemetrySample,
    )

    exports.carry(BurnInRun, found=lambda record: BurnInRun.objects.filter(server__order=record.order))
    for model in (BurnInStage, GpuResult, Finding, BmcEvent):
        exports.carry(
            model, found=lambda record, model=model: model.objects.filter(run__in=record.pks(BurnInRun))
        )
    exports.leave_out(
        TelemetrySample,
        reason="burnin.TelemetrySample rows (the raw telemetry, millions of rows; the runs' verdicts, "
        "stages, GPU results and findings are kept, and each run's raw report travels with it)",
    )
    exports.leave_out(
        TelemetryRollup,
        reason="burnin.TelemetryRollup rows (the telemetry's charts, computed from the samples that are left "
        "out)",
    )
