"""Demo data of the field checks: the handed-over fleet server's two weekly field runs.

The Vastfleet fleet's first server (8× RTX 5090 on a Gen5 platform, handed over by warranty/demo.py) runs
`python -m probe field-check --duration 15m` from the weekly systemd timer, and the customer's operations
team's member posts each report with the portal token, as an upload: through `report_ingest`.

- The first run, ten days before the demo was loaded: healthy, every figure within about 1 % of the burn-in
  (TFLOPS, VRAM bandwidth, H2D and power; the peak temperature within 1 °C).
- The second, a week later (three days before the demo was loaded): GPU 3 has fallen back to x8. Seed 003's
  example is a Gen4 card at 13.9 against 27.7 GB/s; this server's burn-in measured 53.6 GB/s at Gen5 x16, so
  here the link at x8 halves that: 26.8 GB/s host to device, load width 8. The drift against the burn-in
  fails on GPU 3, and warranty's receiver of `drift_failed` opens a draft claim from it.

Both reports are the fleet's burn-in report of burnin/demo.py (seed 003's report reshaped to eight RTX 5090)
reshaped once more, as the probe's field mode writes them: schema 1.1.0 with purpose `field_check`, a
15-minute time box (bench, then a short all-GPU burn), telemetry every 10 s, the BMC SEL since the last run
(nothing new), and a start of their own (a report's id is the SHA-256 of its bytes, so each is new).

The demo dates these runs by the time it is loaded: the hand-over, its audit event and the warranty's start
date are "now" too (warranty/demo.py hands over at load time), so the field runs sit before the recorded
hand-over by days, as a demo's history must when everything else happens on loading.
"""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta
from typing import Any, cast

from django.utils import timezone

from builds.choices import ServerStatus
from builds.models import Server
from burnin.analysis.common import iso
from burnin.choices import ReportPurpose
from burnin.demo import RTX_5090, SEED_003_REPORT, _columns, _fleet_report
from burnin.models import BurnInRun
from burnin.services.ingest import report_ingest
from werkbank.types import Actor

# The fleet's burn-in figures (burnin/demo.py), typed.
_TFLOPS = cast(list[float], RTX_5090["tflops"])
_PEAK_C = cast(list[int], RTX_5090["peak_c"])
_TLIMIT_C = cast(int, RTX_5090["tlimit_c"])
_VRAM_GBPS = cast(float, RTX_5090["vram_gbps"])

#: The probe's schema with `purpose` (probe/schema/report-v1.schema.json).
FIELD_SCHEMA_VERSION = "1.1.0"
#: `--duration 15m`: the whole run's time box.
TIME_BOX_S = 15 * 60
INTERVAL_S = 10.0
#: Days before loading: the last run a few days ago, the one before it a week earlier (the weekly timer).
DAYS_AGO = (10, 3)
#: The GPU whose link falls back in the second run, and its width then.
DEGRADED_GPU = 3
DEGRADED_WIDTH = 8

# The stages of the field check within its 15 minutes, in seconds from the start (inventory, telemetry
# throughout, the bench card by card, the short all-GPU burn, finalize).
_STAGES = {
    "inventory": (0, 20),
    "telemetry": (20, 890),
    "bench": (30, 330),
    "burn": (330, 870),
    "finalize": (890, 900),
}

# Per GPU, how the healthy field run differs from the burn-in: within ±1 %, as a machine that is fine does
# from week to week (the run's own noise, not a trend).
_TFLOPS_FACTOR = (0.996, 1.003, 0.998, 1.001, 0.995, 1.002, 0.999, 0.997)
_PEAK_DELTA_C = (1, 0, 1, -1, 1, 0, 0, 1)


def seed_field_runs(*, server: Server, actor: Actor, now: datetime | None = None) -> list[BurnInRun]:
    """Ingest the server's two field runs (the healthy one, then the one with GPU 3 at x8) as `actor`, the
    customer's member, posts them; nothing when the server is not handed over or has field runs already.
    Returns the runs stored."""
    if server.status != ServerStatus.HANDED_OVER:
        return []
    if BurnInRun.objects.filter(server=server, purpose=ReportPurpose.FIELD_CHECK).exists():
        return []
    burn_in = _fleet_report(json.loads(SEED_003_REPORT.read_text()), server)
    today = (now or timezone.now()).replace(hour=3, minute=0, second=0, microsecond=0)
    stored = []
    for number, days_ago in enumerate(DAYS_AGO):
        report = field_report(burn_in, started_at=today - timedelta(days=days_ago), degraded=number == 1)
        run, _created = report_ingest(server=server, actor=actor, raw=json.dumps(report).encode())
        stored.append(run)
    return stored


def field_report(burn_in: dict[str, Any], *, started_at: datetime, degraded: bool) -> dict[str, Any]:
    """The fleet's burn-in report as a 15-minute field check started at `started_at`; with `degraded`, GPU 3
    trained at x8 (half the burn-in's H2D)."""
    report = copy.deepcopy(burn_in)
    report["schema_version"] = FIELD_SCHEMA_VERSION
    report["purpose"] = ReportPurpose.FIELD_CHECK.value
    burn_s = _STAGES["burn"][1] - _STAGES["burn"][0]
    probe = report["probe"]
    probe.update(
        argv=["field-check", "--duration", "15m", "--out", "/var/lib/werkbank-probe/field-check.json"],
        started_at=iso(started_at),
        ended_at=iso(started_at + timedelta(seconds=TIME_BOX_S)),
        checkpoint=False,
        errors=[],
    )
    report["params"].update(
        duration_s=float(burn_s),
        interval_s=INTERVAL_S,
        time_box_s=float(TIME_BOX_S),
        burn_floor_s=300.0,
        state_dir="/var/lib/werkbank-probe",
    )
    report["outcome"] = {"status": "ok", "exit_code": 0, "reasons": []}
    for stage in report["stages"]:
        start, end = _STAGES[stage["name"]]
        stage.update(
            status="ok",
            reason=None,
            started_at=iso(started_at + timedelta(seconds=start)),
            ended_at=iso(started_at + timedelta(seconds=end)),
        )
    _sel_since_last_run(report, started_at)
    series = {}
    for gpu in report["gpus"]:
        index = gpu["index"]
        gpu["bench"]["fp16_tflops"] = round(_TFLOPS[index] * _TFLOPS_FACTOR[index], 1)
        gpu["bench"]["vram_gbps"] = round(_VRAM_GBPS * (0.997 + 0.001 * (index % 4)), 1)
        gpu["burn"].update(duration_s=float(burn_s), matmuls_checked=1_020 + 7 * index)
        peak = _PEAK_C[index] + _PEAK_DELTA_C[index]
        gpu["thermal"].update(peak_gpu_c=peak, min_tlimit_c=_TLIMIT_C - peak)
        width = DEGRADED_WIDTH if degraded and index == DEGRADED_GPU else 16
        _link(gpu, width)
        series[str(index)] = _rows(report, peak=peak, width=width)
        gpu["telemetry_samples"] = len(series[str(index)])
    telemetry = report["telemetry"]
    telemetry.update(
        interval_s=INTERVAL_S,
        t0=iso(started_at + timedelta(seconds=_STAGES["telemetry"][0])),
        gpu_series=series,
        samples=len(series["0"]),
        samples_failed=0,
        errors=[],
    )
    return report


def _link(gpu: dict[str, Any], width: int) -> None:
    """The card's link trained at `width` lanes (idle and under load, as sysfs and nvidia-smi show it), and
    its host-to-device and device-to-host copies at the share of the lanes it kept; at x16, a few tenths of
    a percent below the burn-in (a copy's run-to-run spread)."""
    pcie = gpu["pcie"]
    share = width / 16 if width != 16 else 0.996 + 0.001 * (gpu["index"] % 4)
    for key in ("idle", "load"):
        pcie[key]["width"] = width
    for key in ("gpu", "upstream", "gpu_end", "upstream_end"):
        pcie["sysfs"][key]["current_link_width"] = width
    for snapshot in gpu.get("snapshots", {}).values():
        if isinstance(snapshot, dict) and isinstance(snapshot.get("pcie"), dict):
            snapshot["pcie"]["current_width"] = width
    bench = gpu["bench"]
    h2d = bench["h2d_gbps"]
    for key in ("default", "local", "remote", "under_load", "concurrent"):
        if h2d.get(key) is not None:
            h2d[key] = round(h2d[key] * share, 1)
    bench["d2h_gbps"] = round(bench["d2h_gbps"] * share, 1)


def _rows(report: dict[str, Any], *, peak: int, width: int) -> list[list[Any]]:
    """One GPU's telemetry over the time box, every 10 s: idle while the other cards are benched, loaded
    through its own bench and the burn, warming to its peak."""
    column = _columns(report)
    start, end = _STAGES["telemetry"]
    burn_start = _STAGES["burn"][0]
    rows = []
    for step in range(int((end - start) / INTERVAL_S)):
        offset = step * INTERVAL_S
        moment = start + offset
        loaded = burn_start <= moment < _STAGES["burn"][1]
        if loaded:
            warm = min(1.0, (moment - burn_start) / 180)
            temp = round(peak - 12 * (1 - warm) - (step % 3 if warm == 1.0 else 0))
        else:
            temp = peak - 40
        row: list[Any] = [None] * len(column)
        row[column["t_offset_s"]] = offset
        row[column["temp_c"]] = temp
        row[column["tlimit_c"]] = _TLIMIT_C - temp
        row[column["power_w"]] = RTX_5090["power_w"] if loaded else 32.0
        row[column["sm_mhz"]] = 2407 if loaded else 180
        row[column["util_pct"]] = 100 if loaded else 0
        row[column["pcie_gen"]] = 5 if loaded else 1
        row[column["pcie_width"]] = width
        row[column["clocks_event_mask"]] = 4 if loaded else 1  # sw power cap at full load; idle otherwise
        row[column["pstate"]] = 0 if loaded else 8
        row[column["mem_used_mib"]] = 30_512 if loaded else 0
        rows.append(row)
    return rows


def _sel_since_last_run(report: dict[str, Any], started_at: datetime) -> None:
    """The BMC SEL since the last run: the state file names the last event seen, nothing new came after."""
    memory = report["host_memory"]
    memory["sel_events"] = []
    memory["sel_window"] = {
        "state_file": "/var/lib/werkbank-probe/sel-state.json",
        "first_run": False,
        "since_id": "0x4a",
        "since_ts_utc": iso(started_at - timedelta(days=7)),
        "since_found": True,
        "left_out": 10,
        "saved": True,
    }
    bmc = report["host"]["bmc"]
    bmc["sel_entries"] = 10
