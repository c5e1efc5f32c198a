"""The burn-in gate's writes: passing or failing a server's burn-in, and a PM's waiver of a finding.

What the gate judges and what blocks it are reads, in `burnin.gates`; `server_pass_burnin` refuses with the
same sentences the pages show from there.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, Q, Sum
from django.utils import timezone

from builds.choices import ServerStatus
from builds.models import Server
from builds.services import server_record_burnin_power, server_transition
from burnin.choices import Severity
from burnin.gates import (
    counting_runs,
    finding_sentence,
    no_counting_run,
    require_burn_in,
    run_blockers,
    stage_sentence,
)
from burnin.hardware import last_gpu_change
from burnin.models import Finding
from orders.selectors import configuration_gpus
from werkbank.access import is_pm
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.types import Actor


def _lock(server: Server) -> Server:
    return Server.objects.select_for_update(of=("self",)).select_related("order").get(pk=server.pk)


@transaction.atomic
def server_pass_burnin(*, server: Server, actor: Actor, note: str = "") -> Server:
    """burn_in → burn_in_passed, when the latest run leaves no unwaived `fail` and no undecided stage.

    Audited twice: `server.pass_burn_in` on the server (by the builds transition) and `burnin.pass` on the
    run that was accepted, with the findings that were waived on it.
    """
    locked = _lock(server)
    require_burn_in(locked)
    change = last_gpu_change(locked)
    run = counting_runs(locked, change).first()
    if run is None:
        raise no_counting_run(locked, change)
    blocking, undecided = run_blockers(run)
    if blocking or undecided:
        missing = [finding_sentence(finding) for finding in blocking] + [
            stage_sentence(stage) for stage in undecided
        ]
        raise RuleViolation(
            f"Server {locked.hostname} cannot pass burn-in yet: {len(missing)} finding(s) of its judged run "
            "need a project manager's decision.",
            missing=missing,
            code="burnin_unwaived_failures",
        )
    passed = server_transition(
        server=locked, actor=actor, target=ServerStatus.BURN_IN_PASSED, verb="pass_burn_in", note=note
    )
    # What the GPUs drew under full load goes onto the server: deployment sums it per circuit.
    # A GPU without a mean power would make the sum too low for the circuit check: then none is kept, and
    # deployment falls back to the configuration's budget.
    # So would a run that reports fewer GPUs than the configuration has.
    powers = run.gpu_results.aggregate(
        total=Sum("mean_power_w"), known=Count("pk", filter=Q(mean_power_w__isnull=False))
    )
    configured = configuration_gpus(order=locked.order)[0]
    gpu_power_w = powers["total"] if powers["known"] >= max(configured, 1) else None
    passed = server_record_burnin_power(server=passed, actor=actor, gpu_power_w=gpu_power_w)
    # The run the gate passed is the server's baseline: field checks are compared with it, GPU by GPU.
    run.accepted_at = timezone.now()
    run.save(update_fields=["accepted_at"])
    waived = list(run.findings.filter(waived_at__isnull=False).order_by("id").values_list("id", flat=True))
    audit(
        actor=actor,
        verb="burnin.pass",
        obj=run,
        before={"server_status": ServerStatus.BURN_IN},
        after={"server_status": ServerStatus.BURN_IN_PASSED, "result": run.result, "waived_findings": waived},
        note=note,
    )
    return passed


def _require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("reason", "a written reason is required.")
    return reason


@transaction.atomic
def server_fail_burnin(*, server: Server, actor: Actor, reason: str) -> Server:
    """burn_in → burn_in_failed: the server goes back to its partner for rework (`server_start_assembly`),
    with the reason written on the audit row."""
    reason = _require_reason(reason)
    return server_transition(
        server=server, actor=actor, target=ServerStatus.BURN_IN_FAILED, verb="fail_burn_in", note=reason
    )


@transaction.atomic
def finding_waive(*, finding: Finding, actor: Actor, reason: str) -> Finding:
    """A PM accepts a `warn` or `fail` finding (or decides on an unfinished stage) with a written reason.

    The waiver is kept on the finding and audited on the server (`burnin.finding_waive`). Waiving twice is
    refused, and so is waiving an `info` finding: there is nothing to accept.
    """
    if not is_pm(actor):
        raise RuleViolation(
            "Only project managers waive findings.",
            missing=["a project manager's decision"],
            code="pm_only",
        )
    reason = _require_reason(reason)
    locked = Finding.objects.select_for_update(of=("self",)).select_related("run__server").get(pk=finding.pk)
    subject = f"Finding {locked.code} ({locked.subject})"
    if locked.waived:
        raise RuleViolation(
            f"{subject} was already waived on {locked.waived_at:%Y-%m-%d %H:%M} UTC: {locked.waiver_reason}",
            missing=["a finding that is not waived yet"],
            code="finding_already_waived",
        )
    if locked.severity == Severity.INFO:
        raise RuleViolation(
            f"{subject} is for information only; it blocks nothing and there is nothing to waive.",
            missing=["a warn or fail finding"],
            code="finding_not_waivable",
        )
    locked.waived_by = user_or_none(actor)  # a PM (checked above), so never None here
    locked.waived_at = timezone.now()
    locked.waiver_reason = reason
    locked.save(update_fields=["waived_by", "waived_at", "waiver_reason"])
    audit(
        actor=actor,
        verb="burnin.finding_waive",
        obj=locked.run.server,
        before={"finding": locked.pk, "waived": False},
        after={
            "finding": locked.pk,
            "run": locked.run_id,
            "code": locked.code,
            "severity": locked.severity,
            "subject": locked.subject,
            "waived": True,
        },
        note=reason,
    )
    return locked
