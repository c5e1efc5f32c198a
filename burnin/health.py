"""A server's health history after the handover: every run on a time line, and per GPU its baseline against
each field check and post-repair run (issue 25: "the probe in the field against the server's own burn-in").

`health_history` reads it in three queries, however many runs the server has (runs, their GPU results,
their open drift findings): a weekly field check makes 52 runs a year, and the page must not grow a query
per run. The baseline of a GPU is matched as `burnin.baselines.baselines` matches it (by `gpu_key`: the
normalised serial, or the UUID of a card without one) and chosen by the same rule, its result in the
earliest accepted run that measured it; here from the rows already read, so that a GPU swapped out under
warranty keeps its history too. `health_panel` turns it into the plain rows and SVG the pages include
(templates/burnin/_health.html): the burn-in page, the bench's server page and the portal's.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from builds.choices import DEPLOYED_OR_LATER, ServerStatus
from builds.models import Server
from builds.panels import Panel, register_panel
from burnin.analysis.drift import DRIFT_PREFIX
from burnin.choices import COMPARED_PURPOSES, ReportPurpose, Severity
from burnin.hardware import gpu_key, has_serial
from burnin.models import BurnInRun, Finding, GpuResult
from werkbank.types import Actor

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise

#: What the history reads of a drift finding: its sentence (`Finding.text`), its GPU and whether it counts.
FINDING_FIELDS = (
    "id",
    "run_id",
    "code",
    "severity",
    "subject",
    "gpu_index",
    "message",
    "params",
    "evidence",
    "waived_at",
)
_SEVERITY_RANK: dict[str, int] = {Severity.INFO: 0, Severity.WARN: 1, Severity.FAIL: 2}

#: The figures the history draws per GPU: the GpuResult field, and the words that mark a drift code as
#: speaking about it (a `fail` drift finding on that GPU draws the field run's point as fallen).
HEALTH_METRICS: dict[str, tuple[str, ...]] = {
    "h2d_gbps": ("h2d", "link", "pcie"),
    "tflops": ("tflops",),
    "peak_temp_c": ("temp", "thermal", "throttl"),
}


@dataclass(frozen=True)
class HealthRun:
    """One run of the server on the time line."""

    id: int
    purpose: str
    started_at: datetime
    uploaded_at: datetime
    result: str
    accepted_at: datetime | None
    drift_fails: int  # unwaived `fail` findings with a drift_ code
    drift_findings: tuple[Finding, ...] = ()  # its drift findings, worst first

    @property
    def is_baseline(self) -> bool:
        return self.accepted_at is not None


@dataclass(frozen=True)
class GpuFigures:
    """One GPU's figures in one run; `fallen` names the metrics an unwaived drift `fail` marks."""

    run_id: int
    purpose: str
    started_at: datetime
    index: int
    h2d_gbps: float | None
    tflops: float | None
    peak_temp_c: float | None
    fallen: frozenset[str] = frozenset()

    def value(self, metric: str) -> float | None:
        return getattr(self, metric)


@dataclass(frozen=True)
class GpuHistory:
    """A GPU of the server (one `gpu_key`): its baseline figures and each later field/post-repair run's,
    oldest first."""

    key: str
    serial: str
    index: int  # its index in the newest run that measured it
    baseline: GpuFigures | None
    points: list[GpuFigures] = field(default_factory=list)


@dataclass(frozen=True)
class HealthHistory:
    """Everything the health section shows of one server."""

    server_id: int
    handed_over: bool
    runs: list[HealthRun]  # oldest first
    gpus: list[GpuHistory]
    max_age_days: int
    now: datetime

    @property
    def field_runs(self) -> list[HealthRun]:
        return [run for run in self.runs if run.purpose in COMPARED_PURPOSES]

    @property
    def shown(self) -> bool:
        """The section is shown once the server has a field or post-repair run, or is handed over."""
        return self.handed_over or bool(self.field_runs)

    @property
    def last_field_check_at(self) -> datetime | None:
        checks = [run.started_at for run in self.runs if run.purpose == ReportPurpose.FIELD_CHECK]
        return max(checks) if checks else None

    @property
    def last_run_at(self) -> datetime | None:
        return max((run.started_at for run in self.runs), default=None)

    @property
    def overdue(self) -> bool:
        """Handed over, and no field check within the schedule (`WERKBANK_FIELD_CHECK_MAX_AGE_DAYS`)."""
        last = self.last_field_check_at
        return self.handed_over and (last is None or last < self.now - timedelta(days=self.max_age_days))


def max_age_days() -> int:
    """How old the newest field check of a handed-over server may be (days) before it is due."""
    return int(getattr(settings, "WERKBANK_FIELD_CHECK_MAX_AGE_DAYS", 30))


def _fallen(codes: set[str]) -> frozenset[str]:
    return frozenset(
        metric for metric, words in HEALTH_METRICS.items() if any(w in code for code in codes for w in words)
    )


def health_history(server: Server, *, now: datetime | None = None) -> HealthHistory:
    """The server's runs and, per GPU, its baseline and field figures. Three queries, however many runs;
    one where the section is not shown (no field or post-repair run, not handed over), none before the
    server is deployed."""
    handed_over = server.status == ServerStatus.HANDED_OVER
    runs: list[tuple[Any, ...]] = []
    # A field check or post-repair report is taken only once the server is deployed (the ingest's rule),
    # and a server never leaves these statuses: before them there is no history to show.
    if server.status in DEPLOYED_OR_LATER:
        runs = list(
            BurnInRun.objects.filter(server=server)
            .order_by("started_at", "id")
            .values_list("id", "purpose", "started_at", "created_at", "result", "accepted_at")
        )
    ids = [row[0] for row in runs]
    results: list[tuple[Any, ...]] = []
    drift: list[Finding] = []
    if handed_over or any(row[1] in COMPARED_PURPOSES for row in runs):
        results = list(
            GpuResult.objects.filter(run_id__in=ids)
            .order_by("run_id", "index")
            .values_list("run_id", "index", "serial", "uuid", "h2d_gbps", "tflops", "peak_temp_c")
        )
        drift = list(
            Finding.objects.filter(run_id__in=ids, code__startswith=DRIFT_PREFIX)
            .only(*FINDING_FIELDS)
            .order_by("run_id", "gpu_index", "id")
        )
    fails: dict[int, int] = defaultdict(int)
    by_run: dict[int, list[Finding]] = defaultdict(list)
    codes: dict[tuple[int, str | int], set[str]] = defaultdict(set)
    for finding in drift:
        by_run[finding.run_id].append(finding)
        if finding.severity != Severity.FAIL or finding.waived:
            continue
        fails[finding.run_id] += 1
        evidence = finding.evidence or {}
        # The drift's card: its serial, or (a card without one) its key, the UUID.
        serial, key = evidence.get("serial"), evidence.get("key")
        card = gpu_key(str(serial), None) if serial else key
        if card:
            codes[finding.run_id, str(card)].add(finding.code)
        if finding.gpu_index is not None:
            codes[finding.run_id, finding.gpu_index].add(finding.code)
    timeline = [
        HealthRun(
            id=run_id,
            purpose=purpose,
            started_at=started_at,
            uploaded_at=created_at,
            result=result,
            accepted_at=accepted_at,
            drift_fails=fails.get(run_id, 0),
            drift_findings=tuple(
                sorted(by_run.get(run_id, []), key=lambda f: -_SEVERITY_RANK.get(f.severity, 0))
            ),
        )
        for run_id, purpose, started_at, created_at, result, accepted_at in runs
    ]
    by_id = {run.id: run for run in timeline}
    # Accepted runs in the order they became baselines: a GPU's baseline is the first that measured it.
    accepted_order = {
        run.id: position
        for position, run in enumerate(
            sorted((r for r in timeline if r.accepted_at), key=lambda r: (r.accepted_at, r.id))
        )
    }
    gpus: dict[str, dict[str, Any]] = {}
    for run_id, index, serial, uuid, h2d, tflops, peak in results:
        run = by_id[run_id]
        key = gpu_key(serial, uuid)
        figures = GpuFigures(
            run_id=run_id,
            purpose=run.purpose,
            started_at=run.started_at,
            index=index,
            h2d_gbps=h2d,
            tflops=tflops,
            peak_temp_c=peak,
            fallen=_fallen(codes.get((run_id, key), set()) | codes.get((run_id, index), set())),
        )
        gpu = gpus.setdefault(key, {"serial": serial, "baseline": None, "points": [], "latest": figures})
        if (figures.started_at, run_id) >= (gpu["latest"].started_at, gpu["latest"].run_id):
            gpu["latest"] = figures
            gpu["serial"] = serial or gpu["serial"]
        if run_id in accepted_order and (
            gpu["baseline"] is None or accepted_order[run_id] < accepted_order[gpu["baseline"].run_id]
        ):
            gpu["baseline"] = figures
        if run.purpose in COMPARED_PURPOSES:
            gpu["points"].append(figures)
    histories = []
    for key, gpu in gpus.items():
        baseline = gpu["baseline"]
        points = sorted(
            (p for p in gpu["points"] if baseline is None or p.run_id != baseline.run_id),
            key=lambda p: (p.started_at, p.run_id),
        )
        if baseline is None and not points:
            continue  # a GPU only ever in burn-in runs that were never accepted: nothing to compare
        histories.append(
            GpuHistory(
                key=key, serial=gpu["serial"], index=gpu["latest"].index, baseline=baseline, points=points
            )
        )
    histories.sort(key=lambda g: (g.index, g.key))
    return HealthHistory(
        server_id=server.pk,
        handed_over=handed_over,
        runs=timeline,
        gpus=histories,
        max_age_days=max_age_days(),
        now=now or timezone.now(),
    )


# --- what the pages show ---------------------------------------------------------------------------------

#: A run's result in words (the portal's words, so the pages say the same).
RESULT_LABELS: dict[str, StrOrPromise] = {
    "pass": pgettext_lazy("burn-in result", "Passed"),
    "fail": pgettext_lazy("burn-in result", "Failed"),
    "incomplete": pgettext_lazy("burn-in result", "Incomplete"),
}

#: A finding's severity in words (the portal's words).
SEVERITY_LABELS: dict[str, StrOrPromise] = {
    "info": pgettext_lazy("finding severity", "Note"),
    "warn": pgettext_lazy("finding severity", "Warning"),
    "fail": pgettext_lazy("finding severity", "Fault"),
}

METRIC_LABELS: dict[str, tuple[StrOrPromise, str]] = {
    "h2d_gbps": (_("H2D bandwidth"), "GB/s"),
    "tflops": (_("Compute"), "TFLOPS"),
    "peak_temp_c": (_("Peak temperature"), "°C"),
}


def health_panel(history: HealthHistory) -> dict[str, Any] | None:
    """The health section as plain rows (no model instance: the portal shows it as it is) with its SVG, or
    None where it is not shown (no field or post-repair run, not handed over)."""
    # The charts import the selectors' dataclasses; importing them here keeps the import one-way.
    from burnin import health_charts

    if not history.shown:
        return None
    newest = history.field_runs[-1] if history.field_runs else None
    return {
        "handed_over": history.handed_over,
        "overdue": history.overdue,
        "max_age_days": history.max_age_days,
        "last_field_check_at": history.last_field_check_at,
        "last_run_at": history.last_run_at,
        "field_runs": len(history.field_runs),
        "newest_field_run_at": newest.started_at if newest else None,
        # The newest field or post-repair run's drift findings, in the reader's language (`Finding.text`).
        "newest_findings": [
            {
                "severity": finding.severity,
                "severity_label": SEVERITY_LABELS.get(finding.severity, finding.severity),
                "subject": finding.subject_text,
                "message": finding.text,
                "waived": finding.waived,
            }
            for finding in (newest.drift_findings if newest else ())
            if finding.severity != Severity.INFO
        ],
        # Built with escape() from our own data (burnin.health_charts).
        "timeline": mark_safe(health_charts.health_timeline_svg(history)),
        "runs": [
            {
                "id": run.id,
                "purpose": run.purpose,
                "purpose_label": ReportPurpose(run.purpose).label
                if run.purpose in ReportPurpose.values
                else run.purpose,
                "started_at": run.started_at,
                "uploaded_at": run.uploaded_at,
                "result": run.result,
                "result_label": RESULT_LABELS.get(run.result, run.result),
                "is_baseline": run.is_baseline,
                "accepted_at": run.accepted_at,
                "drift_fails": run.drift_fails,
                "url": reverse("burnin:run", args=[run.id]),
            }
            for run in reversed(history.runs)
        ],
        "gpus": [
            {
                "index": gpu.index,
                # A GeForce card reports "N/A" for its serial: its UUID names it instead.
                "serial": gpu.serial if has_serial(gpu.serial) else gpu.key,
                "has_baseline": gpu.baseline is not None,
                "fallen": sorted({m for p in gpu.points[-1:] for m in p.fallen}),
                "charts": [
                    mark_safe(health_charts.health_metric_svg(gpu, metric)) for metric in HEALTH_METRICS
                ],
            }
            for gpu in history.gpus
        ],
    }


def bench_panel(user: Actor, server: Server) -> Panel | None:
    """The health section on the bench's server page (`builds.panels`), where there is one to show."""
    panel = health_panel(health_history(server))
    if panel is None:
        return None
    return Panel(name="health", template="burnin/_health_panel.html", context={"health": panel})


def register_panels() -> None:
    register_panel("health", bench_panel)
