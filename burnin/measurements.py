"""burnin's reader of the `builds.measurements` registry: each server's GPU bandwidths from its latest
accepted run, for the apps beside burnin (deployment's host minimums) that may not import it."""

from __future__ import annotations

from collections.abc import Sequence

from builds.measurements import GpuBandwidth, register_gpu_bandwidth_reader
from burnin.hardware import is_stale, last_gpu_changes
from burnin.models import BurnInRun, GpuResult


def accepted_gpu_bandwidths(server_ids: Sequence[int]) -> dict[int, GpuBandwidth]:
    """The host-to-device bandwidth of every GPU in each server's latest accepted run (`accepted_at`: the
    run the gate passed, or a post-repair run that passed), marked stale when a GPU was installed or
    removed after that run was uploaded. Three queries, however many servers."""
    latest: dict[int, BurnInRun] = {}
    runs = (
        BurnInRun.objects.filter(server_id__in=list(server_ids), accepted_at__isnull=False)
        .order_by("server_id", "-accepted_at", "-id")
        .only("id", "server_id", "started_at", "created_at", "accepted_at")
    )
    for run in runs:
        latest.setdefault(run.server_id, run)
    figures: dict[int, list[float | None]] = {run.pk: [] for run in latest.values()}
    rows = (
        GpuResult.objects.filter(run_id__in=list(figures))
        .order_by("run_id", "index")
        .values_list("run_id", "h2d_gbps")
    )
    for run_id, h2d_gbps in rows:
        figures[run_id].append(h2d_gbps)
    changes = last_gpu_changes(list(latest))
    found: dict[int, GpuBandwidth] = {}
    for server_id, run in latest.items():
        change = changes.get(server_id)
        found[server_id] = GpuBandwidth(
            h2d_gbps=tuple(figures[run.pk]),
            measured_at=run.started_at,
            stale_since=change.at if change is not None and is_stale(run, change) else None,
        )
    return found


def register_measurements() -> None:
    register_gpu_bandwidth_reader(accepted_gpu_bandwidths)
