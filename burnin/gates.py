"""The burn-in gate: a server passes burn-in only when its judged run leaves nothing undecided.

Registered in `ready()`: the order gate of `deployment` (every server passed burn-in, `orders.gates`) and the
burn-in app's two server steps (`builds.gates`): an assembled server waits for the probe's report (its
upload moves the server into burn-in, `burnin.services.ingest`; nobody clicks), and a server in burn-in
passes it (`burnin.services.gate.server_pass_burnin`).

The judged run is the server's newest counting run by upload (`judged_run`): a run counts only when it
was uploaded after the server's last GPU install, removal or move (`burnin.hardware`); the runs
before that are stale, measured on other hardware, and are never judged. Every page, the API and the
handover pack name this same run. A PM sees all of a server's runs listed, the judged one marked and the
stale ones shown as stale with the change that made them so.

What blocks, on the judged run:

- every `fail` finding that no PM has waived;
- every `stage_incomplete` finding that no PM has waived, whatever its severity: a stage that did not finish
  (interrupted, failed) is never silently treated as passed. The PM's explicit decision is the waiver, with
  its written reason;
- an interrupted or failed stage for which the analysis recorded no `stage_incomplete` finding at all (the
  analysis always should; should it not, nobody can decide on it, and the burn-in has to be run again).

A waived finding stays on the run with who waived it, when and why: the handover pack prints it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext_lazy

from builds.choices import SERVER_TRANSITIONS, ServerStatus
from builds.gates import ServersReached, register_servers_gate, register_step
from builds.models import Server
from burnin.choices import ReportPurpose, RunResult, Severity, StageStatus
from burnin.hardware import GpuChange, is_stale, last_gpu_change, last_gpu_changes
from burnin.models import BurnInRun, BurnInStage, Finding
from orders.choices import OrderStatus
from werkbank.errors import RuleViolation
from werkbank.transitions import require_transition

#: Statuses of a server that has passed burn-in, whatever happened since.
PASSED_BURN_IN = frozenset({ServerStatus.BURN_IN_PASSED, ServerStatus.DEPLOYED, ServerStatus.HANDED_OVER})
#: The analysis' code for a stage that did not finish (`burnin.analysis`, rule `stage_incomplete`).
STAGE_INCOMPLETE = "stage_incomplete"
#: Stage outcomes that need a PM's decision before the server may pass.
UNFINISHED_STAGES = frozenset({StageStatus.INTERRUPTED, StageStatus.FAILED})
#: The judged run's verdict where the server passed the gate on it with findings a PM waived.
PASSED_WITH_WAIVERS = "waived"

AWAIT_REPORT = "burnin.await_report"
PASS_BURN_IN = "burnin.pass"
#: What an assembled server waits for: the report moves it on, no one clicks, but the pages say so.
AWAITING_REPORT = gettext_lazy("Waits for the probe's burn-in report.")


@dataclass(frozen=True)
class GateState:
    """Where a server stands at the burn-in gate: its judged run, what blocks, and whether it may pass."""

    server: Server
    run: BurnInRun | None
    blocking: list[Finding] = field(default_factory=list)
    undecided_stages: list[BurnInStage] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.server.status in PASSED_BURN_IN

    @property
    def ready(self) -> bool:
        """May pass now: in burn-in, with a run, and nothing undecided on it."""
        return self.server.status == ServerStatus.BURN_IN and not self.missing


def burn_in_runs() -> QuerySet[BurnInRun]:
    """Runs of purpose burn-in: the only ones the gate judges (field checks and post-repair runs come after
    it, `burnin.services.ingest`)."""
    return BurnInRun.objects.filter(purpose=ReportPurpose.BURN_IN)


def counting_runs(server: Server, change: GpuChange | None) -> QuerySet[BurnInRun]:
    """The server's burn-in runs uploaded since its last GPU change (`last_gpu_change`), newest first."""
    runs = burn_in_runs().filter(server=server).order_by("-id")
    return runs.filter(created_at__gte=change.at) if change is not None else runs


def judged_run(server: Server) -> BurnInRun | None:
    """The run the gate judges: the newest counting run by upload, None when no run counts."""
    return counting_runs(server, last_gpu_change(server)).first()


@dataclass(frozen=True)
class RunStanding:
    """One run of a server as the pages list it: judged, counting, or stale (with the change)."""

    run: BurnInRun
    judged: bool
    stale: bool
    change: GpuChange | None

    @property
    def state(self) -> str:
        return "judged" if self.judged else "stale" if self.stale else "counting"


def run_standings(server: Server, runs: Sequence[BurnInRun]) -> list[RunStanding]:
    """Each of `runs` (a server's) with its standing: the judged one marked, the stale ones with the GPU
    change that made them stale."""
    change = last_gpu_change(server)
    stale = {run.pk: is_stale(run, change) for run in runs}
    judged = max(
        (run.pk for run in runs if not stale[run.pk] and run.purpose == ReportPurpose.BURN_IN), default=None
    )
    return [
        RunStanding(
            run=run,
            judged=run.pk == judged,
            stale=stale[run.pk],
            change=change if stale[run.pk] else None,
        )
        for run in runs
    ]


def run_verdict(server: Server, run: BurnInRun) -> str:
    """What the judged run says of the server, the same on every page and in the pack: the analysis'
    result (`pass`, `fail`, `incomplete`), or `waived` where the server has passed burn-in on this run
    although the analysis found a failure (a PM waived it, with a reason the pack prints)."""
    if run.result != RunResult.PASS and server.status in PASSED_BURN_IN:
        return PASSED_WITH_WAIVERS
    return run.result


def stale_sentence(server: Server, change: GpuChange) -> str:
    """Why a server whose runs are all stale cannot pass: the change, and what to do."""
    return _(
        "Server %(hostname)s has no burn-in run on its current hardware: %(change)s, after its last "
        "report was uploaded. The probe must run again."
    ) % {"hostname": server.hostname, "change": change.sentence()}


def no_counting_run(server: Server, change: GpuChange | None) -> RuleViolation:
    """The refusal of a server without a counting run: its runs are all stale, or it has none yet."""
    if change is not None and burn_in_runs().filter(server=server).exists():
        sentence = stale_sentence(server, change)
        return RuleViolation(sentence, missing=[sentence], code="burnin_stale")
    sentence = _no_run_sentence(server)
    return RuleViolation(sentence, missing=[sentence], code="burnin_no_run")


def _stage_of(finding: Finding) -> str:
    stage = (finding.evidence or {}).get("stage")
    if isinstance(stage, str) and stage:
        return stage
    return finding.subject.removeprefix("stage ").strip()


def _stages_of(finding: Finding) -> set[str]:
    """Every stage a `stage_incomplete` finding decides on: one interruption may cut several."""
    stages = (finding.evidence or {}).get("stages")
    if isinstance(stages, list) and stages:
        return {str(stage) for stage in stages}
    return {_stage_of(finding)}


def finding_sentence(finding: Finding) -> str:
    """A blocking finding as the gate's 409 and the pages list it: its subject, then its sentence."""
    return f"{finding.subject_text}: {finding.text}"


def stage_sentence(stage: BurnInStage) -> str:
    """An unfinished stage that no finding decides on, as the gate's 409 and the pages list it."""
    if stage.status == StageStatus.INTERRUPTED:
        ended = _("Stage %(stage)s was interrupted") % {"stage": stage.name}
    else:
        ended = _("Stage %(stage)s failed") % {"stage": stage.name}
    if stage.reason:
        ended = _("%(ended)s: %(reason)s") % {"ended": ended, "reason": stage.reason}
    return _(
        "%(ended)s; the analysis recorded no finding for it that a project manager could waive, so the "
        "burn-in must be run again."
    ) % {"ended": ended}


def run_blockers(run: BurnInRun) -> tuple[list[Finding], list[BurnInStage]]:
    """What on this run keeps its server from passing: unwaived findings (a `fail`, or an unfinished stage
    of any severity) and unfinished stages the analysis left without a finding."""
    return runs_blockers([run])[run.pk]


def runs_blockers(runs: Sequence[BurnInRun]) -> dict[int, tuple[list[Finding], list[BurnInStage]]]:
    """`run_blockers` of many runs at once, `{run id: (blocking findings, undecided stages)}`, in two
    queries however many runs there are."""
    ids = [run.pk for run in runs]
    findings: dict[int, list[Finding]] = defaultdict(list)
    for finding in Finding.objects.filter(
        Q(severity=Severity.FAIL) | Q(code=STAGE_INCOMPLETE), run_id__in=ids
    ).order_by("id"):
        findings[finding.run_id].append(finding)
    stages: dict[int, list[BurnInStage]] = defaultdict(list)
    unfinished = BurnInStage.objects.filter(run_id__in=ids, status__in=UNFINISHED_STAGES)
    for stage in unfinished.order_by("position"):
        stages[stage.run_id].append(stage)
    answer = {}
    for run_id in ids:
        covered: set[str] = set()
        for finding in findings[run_id]:
            if finding.code == STAGE_INCOMPLETE:
                covered |= _stages_of(finding)
        blocking = [finding for finding in findings[run_id] if not finding.waived]
        undecided = [stage for stage in stages[run_id] if stage.name not in covered]
        answer[run_id] = (blocking, undecided)
    return answer


def judged_runs(
    servers: Sequence[Server], changes: Mapping[int, GpuChange] | None = None
) -> dict[int, BurnInRun]:
    """The judged run (`judged_run`) of each server that has one, for many servers in two queries (one,
    given the servers' `last_gpu_changes`)."""
    if changes is None:
        changes = last_gpu_changes([server.pk for server in servers])
    judged: dict[int, BurnInRun] = {}
    runs = burn_in_runs().filter(server_id__in=[server.pk for server in servers]).order_by("server_id", "-id")
    for run in runs.defer("report"):
        if run.server_id not in judged and not is_stale(run, changes.get(run.server_id)):
            judged[run.server_id] = run
    return judged


def pass_missing_many(servers: Sequence[Server]) -> dict[int, list[str]]:
    """What keeps each server from passing burn-in (`burnin_gate_state(server=...).missing`), for many
    servers in four queries: the PM's pipeline shows it beside every server in burn-in."""
    servers = list(servers)
    changes = last_gpu_changes([server.pk for server in servers])
    judged = judged_runs(servers, changes)
    blockers = runs_blockers(list(judged.values()))
    missing = {}
    for server in servers:
        run = judged.get(server.pk)
        blocking, undecided = blockers[run.pk] if run else ([], [])
        missing[server.pk] = _missing(server, run, blocking, undecided, change=changes.get(server.pk))
    return missing


def _missing(
    server: Server,
    run: BurnInRun | None,
    blocking: list[Finding],
    undecided: list[BurnInStage],
    *,
    change: GpuChange | None = None,
) -> list[str]:
    missing = _status_missing(server)
    if run is None:
        return [*missing, *no_counting_run(server, change).missing]
    return [
        *missing,
        *(finding_sentence(finding) for finding in blocking),
        *(stage_sentence(stage) for stage in undecided),
    ]


def require_burn_in(server: Server) -> None:
    """Refuse (`invalid_transition`) a server the lifecycle does not let pass burn-in from its status."""
    require_transition(
        transitions=SERVER_TRANSITIONS,
        choices=ServerStatus,
        current=server.status,
        target=ServerStatus.BURN_IN_PASSED,
        subject=f"Server {server.hostname}",
        verb="pass_burn_in",
    )


def _status_missing(server: Server) -> list[str]:
    if server.status in PASSED_BURN_IN:
        return []
    try:
        require_burn_in(server)
    except RuleViolation as refusal:
        return [refusal.message]
    return []


def _no_run_sentence(server: Server) -> str:
    return _("Server %(hostname)s has no burn-in run yet: the probe's report must be uploaded first.") % {
        "hostname": server.hostname
    }


def burnin_gate_state(*, server: Server) -> GateState:
    """The gate as the API's GET shows it: the same sentences `server_pass_burnin` refuses with. A server
    that has passed already lacks nothing; what its judged run shows is still listed."""
    change = last_gpu_change(server)
    run = counting_runs(server, change).first()
    if run is None:
        return GateState(server=server, run=None, missing=_missing(server, None, [], [], change=change))
    blocking, undecided = run_blockers(run)
    missing = _missing(server, run, blocking, undecided)
    return GateState(server=server, run=run, blocking=blocking, undecided_stages=undecided, missing=missing)


def awaiting_report_many(servers: Sequence[Server]) -> dict[int, list[str]]:
    """An assembled server always waits for the probe's report (no query)."""
    return {server.pk: [str(AWAITING_REPORT)] for server in servers}


#: No deployment until every server of the order has passed burn-in.
SERVERS_PASSED = ServersReached(
    reached=PASSED_BURN_IN,
    behind=gettext_lazy("Server %(hostname)s is %(status)s; it must pass burn-in first."),
    more=ngettext_lazy(
        "%(count)d more server has not passed burn-in yet.",
        "%(count)d more servers have not passed burn-in yet.",
        "count",
    ),
    no_servers=gettext_lazy("Order %(reference)s has no servers to deploy."),
)


def register_gates() -> None:
    register_servers_gate(target=OrderStatus.DEPLOYMENT, name="burnin.servers_passed", rule=SERVERS_PASSED)


def register_steps() -> None:
    register_step(
        name=AWAIT_REPORT,
        source=ServerStatus.ASSEMBLED,
        target=ServerStatus.BURN_IN,
        label=gettext_lazy("Burn-in"),
        missing_many=awaiting_report_many,
    )
    register_step(
        name=PASS_BURN_IN,
        source=ServerStatus.BURN_IN,
        target=ServerStatus.BURN_IN_PASSED,
        label=gettext_lazy("Pass burn-in"),
        missing_many=pass_missing_many,
    )
