"""The burn-in rows of the scale dataset: for each server past burn-in one run (pass, or fail for those in
rework) with its stages, a result per GPU linked to the installed GPU, and telemetry samples at 10 s (the
sample budget spread over the runs)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from builds.choices import ServerStatus
from burnin.choices import RunResult, StageStatus
from burnin.models import BurnInRun, BurnInStage, GpuResult, TelemetrySample

from .base import GPUS_PER_SERVER, SAMPLE_INTERVAL, Seeding, spread

#: Servers that have been through a burn-in run, and its verdict.
RUN_RESULT: dict[str, str] = {
    ServerStatus.BURN_IN_PASSED: RunResult.PASS,
    ServerStatus.BURN_IN_FAILED: RunResult.FAIL,
    ServerStatus.DEPLOYED: RunResult.PASS,
    ServerStatus.HANDED_OVER: RunResult.PASS,
}
STAGES = ["inventory", "telemetry", "bench", "burn", "finalize"]

RUN_NAMES = [
    "id",
    "server",
    "report_id",
    "probe_version",
    "schema_version",
    "started_at",
    "ended_at",
    "result",
    "rules_version",
    "report",
    "uploaded_by",
    "created_at",
]
RESULT_NAMES = [
    "id",
    "run",
    "index",
    "serial",
    "uuid",
    "name",
    "pci_bus_id",
    "numa_node",
    "component",
    "expected_gen",
    "expected_width",
    "load_gen",
    "load_width",
    "h2d_gbps",
    "d2h_gbps",
    "vram_gbps",
    "peak_temp_c",
    "min_margin_c",
    "mean_power_w",
    "power_limit_w",
    "matmuls",
    "mismatches",
    "nans",
]
SAMPLE_NAMES = [
    "id",
    "run",
    "gpu_index",
    "at",
    "temp_c",
    "margin_c",
    "power_w",
    "sm_mhz",
    "util_pct",
    "clock_event_mask",
    "pcie_gen",
    "pcie_width",
]


@dataclass(frozen=True)
class PlannedRun:
    """A burn-in run the build writer decided on: its id, server, start, verdict and the GPUs it tested."""

    id: int
    server_id: int
    started: datetime
    result: str
    gpus: list[int]


def _gpu_result(seeding: Seeding, run_id: int, index: int, component_id: int) -> tuple[Any, ...]:
    rng = seeding.rng
    return (
        seeding.ids.take(GpuResult),
        run_id,
        index,
        f"SCG{component_id:08d}",
        "",
        "RTX PRO 6000",
        f"0000:{index + 1:02x}:00.0",
        0 if index < 4 else 1,
        component_id,
        5,
        16,
        5,
        16,
        27.4 + rng.random() * 0.4,
        26.9 + rng.random() * 0.4,
        1790.0 + rng.random() * 10,
        78.0 + rng.random() * 6,
        5.0 + rng.random() * 4,
        595.0,
        600.0,
        1_000_000,
        0,
        0,
    )


def write_runs(seeding: Seeding, runs: list[PlannedRun]) -> None:
    """The runs with their stages, GPU results and telemetry samples."""
    run_rows, stage_rows, result_rows = [], [], []
    per_run = spread(seeding.size.samples, len(runs))
    for run, samples in zip(runs, per_run, strict=True):
        per_gpu = max(1, -(-samples // GPUS_PER_SERVER))
        ended = run.started + SAMPLE_INTERVAL * per_gpu
        run_rows.append(
            (
                run.id,
                run.server_id,
                f"scale-{run.id:08d}",
                "1.0.0",
                "1",
                run.started,
                ended,
                run.result,
                "scale-1",
                "",
                None,
                ended,
            )
        )
        for position, name in enumerate(STAGES):
            stage_rows.append(
                (
                    seeding.ids.take(BurnInStage),
                    run.id,
                    position,
                    name,
                    StageStatus.OK,
                    "",
                    run.started,
                    ended,
                )
            )
        for index, component_id in enumerate(run.gpus):
            result_rows.append(_gpu_result(seeding, run.id, index, component_id))
    writer = seeding.writer
    writer.write(BurnInRun, RUN_NAMES, run_rows)
    writer.write(
        BurnInStage,
        ["id", "run", "position", "name", "status", "reason", "started_at", "ended_at"],
        stage_rows,
    )
    writer.write(GpuResult, RESULT_NAMES, result_rows)
    writer.write(TelemetrySample, SAMPLE_NAMES, _samples(seeding, runs, per_run))
    seeding.log(
        f"{len(run_rows)} burn-in runs with {writer.counts.get(TelemetrySample, 0)} telemetry samples written"
    )


def _samples(seeding: Seeding, runs: list[PlannedRun], per_run: list[int]) -> Iterator[tuple[Any, ...]]:
    """Each run's share of the samples, spread over its GPUs, 10 s apart; a generator of its own (seeded
    next to the main one), so that millions of rows never sit in memory."""
    ids = seeding.ids
    sample_id = ids.next[TelemetrySample]
    noise = random.Random(seeding.size.seed + 1)
    for run, total in zip(runs, per_run, strict=True):
        for gpu_index, count in enumerate(spread(total, GPUS_PER_SERVER)):
            at = run.started
            for _ in range(count):
                jitter = noise.random()
                yield (
                    sample_id,
                    run.id,
                    gpu_index,
                    at,
                    70.0 + 10 * jitter,
                    10.0 - 4 * jitter,
                    590.0 + 10 * jitter,
                    2400.0 + 50 * jitter,
                    99.0 + jitter,
                    4,
                    5,
                    16,
                )
                sample_id += 1
                at += SAMPLE_INTERVAL
    ids.next[TelemetrySample] = sample_id
