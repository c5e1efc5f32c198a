"""A server's baseline: what each of its GPUs measured when the server was last certified.

A field check or post-repair run is compared with it GPU by GPU (`burnin.analysis.drift`). The baseline of a
GPU is its result in the earliest accepted run that measured it (`BurnInRun.accepted_at`): the burn-in run
the gate passed for the GPUs that were there from the start, the post-repair run that passed for a GPU that
came in under warranty. Only GPUs the server holds now have one: a GPU that was swapped out under warranty
is no longer the server's, and the newest accepted run measured every GPU installed when it was accepted.
"""

from __future__ import annotations

from builds.models import Installation, Server
from burnin.hardware import gpu_key
from burnin.models import GpuResult
from inventory.choices import PartCategory


def baselines(server: Server) -> dict[str, GpuResult]:
    """Each current GPU's baseline result (with its run), by `gpu_key`; empty before any run was accepted.
    Two queries."""
    rows = list(
        GpuResult.objects.filter(run__server=server, run__accepted_at__isnull=False)
        .select_related("run")
        .defer("run__report")
        .order_by("run__accepted_at", "run_id", "index")
    )
    if not rows:
        return {}
    newest = rows[-1].run_id
    current = {gpu_key(row.serial, row.uuid) for row in rows if row.run_id == newest}
    installed = set(
        Installation.objects.active()
        .filter(server=server, component__part__category=PartCategory.GPU)
        .values_list("component_id", flat=True)
    )
    found: dict[str, GpuResult] = {}
    for row in rows:
        key = gpu_key(row.serial, row.uuid)
        if (
            key in current
            and key not in found
            and (row.component_id is None or row.component_id in installed)
        ):
            found[key] = row
    return found
