"""The burn-in analysis alone on a 72 h × 8 GPU report sampled every 10 s (207,360 samples): ≤ 0.5 s
(issue 10).

The report is seed 003's test report (tests/fixtures/burnin) stretched to 72 h and eight cards: its burn
samples repeated, with every rule's inputs present. JSON parsing is not part of the figure (the ingest
parses once, for validation and storage too).
"""

from __future__ import annotations

import copy
import json
import statistics
import time
from pathlib import Path

from bench.report import record
from burnin.analysis import analyze

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "burnin" / "seed003-report.json"
HOURS, GPUS, INTERVAL_S = 72, 8, 10


def report_72h() -> dict:
    report = json.loads(FIXTURE.read_text(encoding="utf-8"))
    telemetry = report["telemetry"]
    template = telemetry["gpu_series"]["1"]
    burn = template[20:]  # the loaded samples
    n = HOURS * 3600 // INTERVAL_S
    telemetry["interval_s"] = INTERVAL_S
    telemetry["gpu_series"] = {
        str(g): [[i * INTERVAL_S, *burn[(i + g) % len(burn)][1:]] for i in range(n)] for g in range(GPUS)
    }
    while len(report["gpus"]) < GPUS:
        extra = copy.deepcopy(report["gpus"][len(report["gpus"]) % 6])
        extra["index"] = len(report["gpus"])
        report["gpus"].append(extra)
    return report


def run() -> None:
    report = report_72h()
    samples = sum(len(rows) for rows in report["telemetry"]["gpu_series"].values())
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        findings = analyze(report)
        timings.append(time.perf_counter() - start)
    record(
        f"burn-in analysis, {HOURS} h × {GPUS} GPUs (median)",
        statistics.median(timings) * 1000,
        "ms",
        target=500,
    )
    print(
        f"burn-in analysis, {HOURS} h x {GPUS} GPUs ({samples:,} samples): median "
        f"{statistics.median(timings) * 1000:6.1f} ms, best {min(timings) * 1000:6.1f} ms, "
        f"{len(findings)} findings  (target: <= 500 ms)"
    )
