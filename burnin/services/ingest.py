"""Ingest: one probe report in, stored and analysed in one transaction.

The probe posts its report (JSON, usually gzip-compressed) to
``POST /api/v1/burnin/servers/{asset_tag}/reports/``. What happens to it here:

1. to 3. ``burnin.services.upload`` reads the body within ``WERKBANK_MAX_REPORT_BYTES``, takes the report
   id (the SHA-256 of the uncompressed report, which the probe sends as its ``Idempotency-Key``) and
   validates the report against the probe's own schema; each refusal is a 400. A report that is already
   stored answers with its run and adds nothing; two concurrent posts of one report are serialised by the
   server's row lock (and the unique report id backs it).
4. The report must have measured the server's installed hardware (``burnin.hardware``): its GPUs
   by serial (by UUID for cards without one), their number and model, the host name. Any difference is one
   409 ``hardware_mismatch`` listing them all, and nothing is stored.
5. ``burnin.analysis.analyze`` finds the faults, with what the server knows: the slot each GPU sits in; and
   ``burnin_too_short`` compares the full load with the burn-in the order promises (``promised_burnin_s``).
6. ``report_ingest`` stores the run, its stages, per-GPU results, BMC events, findings and telemetry in one
   transaction, moves an ``assembled`` server to ``burn_in``, and audits ``burnin.ingest`` on the server.
   Telemetry goes in through PostgreSQL's binary ``COPY`` (SQLite: ``bulk_create``), see
   ``burnin.services.samples``, and right after them the run's telemetry rollup, which the charts read.
   The raw report is kept gzip-compressed as the run's stored file, written after the commit.

A report has a purpose (``$.purpose``, schema 1.1.0; a 1.0.0 report is a burn-in). Storing and analysing are
the same for every purpose; what a report means for the server's lifecycle is not:

- ``burn_in``: the server is assembled (it moves into burn-in) or in burn-in; the order's promised
  duration is a rule. Posted by the server's partner or a PM.
- ``field_check``: the server is deployed or handed over; posted also by the customer's members once it is
  handed over (their portal tokens). An installed GPU missing from the report is a drift, not a mismatch.
- ``post_repair``: the server is deployed or handed over, after a swap under warranty; posted by the
  partner or a PM. It passes when the ordinary rules and the drift against the GPUs that stayed find no
  ``fail``; then it is accepted as the baseline of the GPUs that came in.

Field and post-repair runs are compared with the server's baseline (``burnin.baselines``) by
``burnin.analysis.drift``; a ``fail`` drift sends ``burnin.signals.drift_failed`` in the transaction.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone

from builds.choices import DEPLOYED_OR_LATER, ConnectorKind, ServerStatus
from builds.models import Server
from builds.services import server_transition
from burnin import analysis
from burnin.analysis import drift
from burnin.analysis.context import build_context
from burnin.analysis.drift import DRIFT_PREFIX
from burnin.analysis.duration import full_load_seconds
from burnin.baselines import baselines
from burnin.choices import COMPARED_PURPOSES, ReportPurpose, RunResult, Severity, StageStatus
from burnin.hardware import HardwareMismatch, check_hardware, gpu_key, has_serial, installed_gpus
from burnin.models import BmcEvent, BurnInRun, BurnInStage, Finding, GpuResult
from burnin.rules import THRESHOLDS
from burnin.services.samples import report_time, store_rollup, store_samples

# The upload's steps are named here too (re-exported): the API view and the tests read them as `ingest.…`.
from burnin.services.upload import (  # noqa: F401
    ReportTooLarge,
    discard_unread_body,
    parse_report,
    read_report_body,
    report_id_of,
    validation_errors,
)
from burnin.signals import drift_failed, run_analysed
from inventory.serials import normalize_serial
from werkbank.access import Purpose
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.files import save_with_file
from werkbank.types import Actor

#: Servers in these statuses take a burn-in report; an `assembled` one is moved to `burn_in` by it.
ACCEPTS_REPORTS = frozenset({ServerStatus.ASSEMBLED, ServerStatus.BURN_IN})
#: ...and a field check or post-repair run: after the burn-in gate, once the server stands in its rack.
ACCEPTS_BY_PURPOSE: dict[str, frozenset[str]] = {
    ReportPurpose.BURN_IN: ACCEPTS_REPORTS,
    ReportPurpose.FIELD_CHECK: DEPLOYED_OR_LATER,
    ReportPurpose.POST_REPAIR: DEPLOYED_OR_LATER,
}
ACCEPTS_ANY = ACCEPTS_REPORTS | DEPLOYED_OR_LATER
#: Connector kinds a GPU sits in: their PCIe generation and lanes are what the slot can give it.
GPU_CONNECTORS = frozenset({ConnectorKind.PCIE_SLOT, ConnectorKind.RISER_PORT})


def _text(value: Any, path: str, max_length: int) -> str:
    """A string for a column of `max_length`, or a 400 naming the path: nothing is cut silently."""
    text = "" if value is None else str(value)
    if len(text) > max_length:
        raise InvalidInput("report", f"{path}: longer than {max_length} characters.")
    return text


# --- What the server knows: installed GPUs and their slots ---------------------------------------------


@dataclass(frozen=True)
class Slot:
    """The installed component a reported GPU matched by serial, and the connector it sits in."""

    component_id: int
    pcie_gen: int | None
    pcie_lanes: int | None


def installed_slots(server: Server) -> dict[str, Slot]:
    """The server's GPUs installed now (`burnin.hardware.installed_gpus`), by normalised serial."""
    return {gpu.key: Slot(gpu.component_id, gpu.pcie_gen, gpu.pcie_lanes) for gpu in installed_gpus(server)}


def platform_max_gen(server: Server) -> int | None:
    """The highest PCIe generation among the server's GPU connectors (None when none states one)."""
    gens = server.connectors.filter(kind__in=GPU_CONNECTORS, pcie_gen__isnull=False).values_list(
        "pcie_gen", flat=True
    )
    return max((gen for gen in gens if gen is not None), default=None)  # the stubs: a nullable column


def expectations(
    report: Mapping[str, Any],
    slots: Mapping[str, Slot],
    platform: int | None,
    *,
    target_s: float | None = None,
) -> Any:
    """The analysis' expectations: each matched GPU's slot link (by the report's serial), the platform and
    the burn-in the order promises."""
    slot_links = {}
    for gpu in report["gpus"]:
        slot = slots.get(normalize_serial(gpu["serial"])) if gpu["serial"] else None
        if slot is not None:
            slot_links[gpu["serial"]] = (slot.pcie_gen, slot.pcie_lanes)
    return analysis.Expectations(platform_max_gen=platform, slot_links=slot_links, target_s=target_s)


def links(report: Mapping[str, Any], expectations: Any) -> dict[int, Any]:
    """Each GPU's link as the analysis judges it (expected from card, host, platform and slot; under load
    as the probe measured it), by GPU index: what the GPU results show is what the findings were based on.
    The telemetry is left out: the links need none of it, and it is scanned once, by `analyze`."""
    context = build_context({**report, "telemetry": None}, expectations, THRESHOLDS)
    return {gpu.index: gpu.link for gpu in context.gpus}


# --- The ingest ----------------------------------------------------------------------------------------


def _existing(report_id: str, server: Server) -> BurnInRun | None:
    run = BurnInRun.objects.filter(report_id=report_id).first()
    if run is not None and run.server_id != server.pk:
        raise RuleViolation(
            f"This report (id {report_id[:12]}…) is already stored for another server; "
            f"it cannot also be the burn-in of {server.asset_tag}.",
            code="report_elsewhere",
        )
    return run


def report_ingest(
    *, server: Server, actor: Actor, raw: bytes, gz: bytes | None = None, idempotency_key: str | None = None
) -> tuple[BurnInRun, bool]:
    """Store one probe report for `server`, analysed, in one transaction; `(run, created)`.

    `raw` is the report as the probe wrote it; `gz`, when the upload was gzip, is that stream (kept as the
    stored file, so it is not compressed twice). A report that is already stored returns its run and
    changes nothing, whatever the server's status is by now. Otherwise the report must be valid (400,
    naming the JSON path of the first error), the actor may post its purpose (403, `may_post`) and the
    server's status must take it (409 `server_status`, `ACCEPTS_BY_PURPOSE`).

    Reading, validating and analysing the report happen before the transaction opens: the server's row
    lock is held only while the rows are written (and the telemetry copied in).
    """
    report_id = report_id_of(raw, idempotency_key)
    existing = _existing(report_id, server)
    if existing is not None:
        return existing, False
    if server.status not in ACCEPTS_ANY:  # checked again, by purpose, under the lock; this saves parsing
        raise _wrong_status(server, None)
    report = parse_report(raw)
    purpose = report_purpose(report)
    may_post(server=server, actor=actor, purpose=purpose)
    if server.status not in ACCEPTS_BY_PURPOSE[purpose]:
        raise _wrong_status(server, purpose)
    bound_by(server, report, purpose)  # checked again under the lock; this saves the analysis
    slots = installed_slots(server)
    target_s = promised_burnin_s(server) if purpose == ReportPurpose.BURN_IN else None
    expected = expectations(report, slots, platform_max_gen(server), target_s=target_s)
    findings = analysis.analyze(report, expectations=expected)
    # The GPU results as they will be stored (their run is set there): the drift compares these figures.
    results = list(
        gpu_results(report, slots, links(report, expected), by_slot=slot_order_components(server, report))
    )
    compared = (
        compare_with_baseline(server, report, findings, results) if purpose in COMPARED_PURPOSES else None
    )
    try:
        return _store(
            server=server,
            actor=actor,
            report_id=report_id,
            report=report,
            purpose=purpose,
            findings=findings + (compared.findings if compared else []),
            results=results,
            baseline_ids=compared.baseline_ids if compared else {},
            gz=gz if gz is not None else zlib_gzip(raw),
            target_s=target_s,
        )
    except IntegrityError:
        # Another request stored the same report for another server in the meantime (the row lock
        # serialises posts to one server): answer as if it had come first.
        existing = _existing(report_id, server)
        if existing is None:
            raise
        return existing, False


def report_purpose(report: Mapping[str, Any]) -> str:
    """The report's purpose: `$.purpose`, or a burn-in for a report written before purposes (1.0.0)."""
    return str(report.get("purpose") or ReportPurpose.BURN_IN)


def may_post(*, server: Server, actor: Actor, purpose: str) -> None:
    """PMs and the server's partner post every purpose; the customer's members (who see the server, else
    the view answered 404) only a field check of a server handed over to them: 403 otherwise."""
    if Server.objects.visible_to(actor, purpose=Purpose.BENCH).filter(pk=server.pk).exists():
        return
    if purpose == ReportPurpose.FIELD_CHECK and server.status == ServerStatus.HANDED_OVER:
        return
    if purpose == ReportPurpose.FIELD_CHECK:
        raise PermissionDenied(
            f"Server {server.asset_tag} is not handed over yet: until then only its assembly partner and "
            "project managers post its reports."
        )
    raise PermissionDenied(
        f"Customers post field checks only (purpose field_check); a {purpose} report of {server.asset_tag} "
        "is posted by its assembly partner or a project manager."
    )


@dataclass(frozen=True)
class Compared:
    """A field check or post-repair run against the server's baseline: the drift findings, and which
    baseline result each GPU (by the report's index) was compared with."""

    findings: list[Any]
    baseline_ids: dict[int, int]


def _figures(row: GpuResult, codes: frozenset[str], component_id: int | None = None) -> Any:
    return drift.GpuFigures(
        index=row.index,
        key=gpu_key(row.serial, row.uuid),
        serial=row.serial if has_serial(row.serial) else "",  # a GeForce card's "N/A" names no card
        component_id=row.component_id or component_id,
        load_gen=row.load_gen,
        load_width=row.load_width,
        h2d_gbps=row.h2d_gbps,
        tflops=row.tflops,
        vram_gbps=row.vram_gbps,
        peak_temp_c=row.peak_temp_c,
        mean_power_w=row.mean_power_w,
        codes=codes,
        run_id=row.run_id,
    )


def _flagged(findings: Iterable[Any]) -> tuple[dict[int, frozenset[str]], frozenset[str]]:
    """The codes of the warn and fail findings, per GPU index, and those about the host."""
    per_gpu: dict[int, set[str]] = {}
    host: set[str] = set()
    for finding in findings:
        if finding.severity == Severity.INFO:
            continue
        if finding.gpu_index is None:
            host.add(finding.code)
        else:
            per_gpu.setdefault(finding.gpu_index, set()).add(finding.code)
    return {index: frozenset(codes) for index, codes in per_gpu.items()}, frozenset(host)


def compare_with_baseline(
    server: Server,
    report: Mapping[str, Any],
    findings: Sequence[Any],
    results: Sequence[GpuResult],
) -> Compared:
    """The drift of a field check or post-repair run from the server's baseline (`burnin.baselines`),
    GPU by GPU: its GPU results as they will be stored (`results`, not saved yet), against each GPU's
    baseline result."""
    base = baselines(server)
    base_runs = {row.run_id for row in base.values()}
    base_findings = Finding.objects.filter(run_id__in=base_runs).exclude(severity=Severity.INFO)
    base_codes: dict[tuple[int, int], set[str]] = {}
    base_host: set[str] = set()
    for run_id, index, code in base_findings.values_list("run_id", "gpu_index", "code"):
        if index is None:
            base_host.add(code)
        else:
            base_codes.setdefault((run_id, index), set()).add(code)
    codes, host = _flagged(findings)
    by_slot = slot_order_components(server, report)
    current = []
    baseline_ids = {}
    for row in results:
        key = gpu_key(row.serial, row.uuid)
        current.append(_figures(row, codes.get(row.index, frozenset()), by_slot.get(row.index)))
        if key in base:
            baseline_ids[row.index] = base[key].pk
    drifts = drift.compare(
        current=current,
        baseline={
            key: _figures(row, frozenset(base_codes.get((row.run_id, row.index), set())))
            for key, row in base.items()
        },
        host_codes=host,
        baseline_host_codes=frozenset(base_host),
    )
    return Compared(findings=drifts, baseline_ids=baseline_ids)


def slot_order_components(server: Server, report: Mapping[str, Any]) -> dict[int, int]:
    """The installed component of each card that reports no serial (GeForce), by the report's GPU index:
    the cards in PCI bus order (the order the driver numbers them in) against the GPU connectors in their
    order, when the report has one card per installed GPU and none has a serial. A drift on such a card is
    filed on this component's warranty record as a draft, which a PM confirms on the bench's slot map;
    without it there would be no record to file it on."""
    gpus = list(report["gpus"])
    installed = installed_gpus(server)
    if len(gpus) != len(installed) or any(has_serial(gpu.get("serial")) for gpu in gpus):
        return {}
    ordered = sorted(gpus, key=lambda gpu: (str(gpu.get("pci_bus_id") or "").lower(), gpu["index"]))
    return {gpu["index"]: each.component_id for gpu, each in zip(ordered, installed, strict=True)}


def promised_burnin_s(server: Server) -> float:
    """The burn-in promised for the server, in seconds: the longer of its order's and its configuration's
    (72 h by default, seed 001)."""
    order = server.order
    return float(max(order.burnin_hours, order.configuration.burnin_hours) * 3600)


def bound_by(server: Server, report: Mapping[str, Any], purpose: str = ReportPurpose.BURN_IN) -> str:
    """How the report's GPUs bind to the server's installed GPUs; a 409 `hardware_mismatch` naming every
    difference when they are other GPUs. A field check may lack an installed GPU (a drift finding says so)."""
    try:
        return check_hardware(
            server=server, report=report, allow_missing=purpose == ReportPurpose.FIELD_CHECK
        )
    except HardwareMismatch as mismatch:
        raise RuleViolation(
            f"This report did not measure the hardware installed in {server.asset_tag}: "
            + " ".join(mismatch.differences),
            missing=mismatch.differences,
            code="hardware_mismatch",
        ) from None


def zlib_gzip(raw: bytes) -> bytes:
    """gzip at zlib's default level 6: 3-4× faster than `gzip.compress`'s 9, within a few % of its size."""
    packer = zlib.compressobj(6, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return packer.compress(raw) + packer.flush()


def _wrong_status(server: Server, purpose: str | None) -> RuleViolation:
    status = server.get_status_display().lower()
    if purpose == ReportPurpose.BURN_IN:
        rule = "a burn-in report is taken only while the server is assembled or in burn-in"
        if server.status in DEPLOYED_OR_LATER:
            rule += "; after the handover the probe posts a field check (python -m probe field-check)"
    elif purpose is not None:
        label = ReportPurpose(purpose).label.lower()
        rule = f"a {label} report is taken only once the server is deployed or handed over"
    else:
        rule = (
            "a burn-in report is taken only while the server is assembled or in burn-in, a field check or "
            "post-repair report once it is deployed or handed over"
        )
    return RuleViolation(f"Server {server.asset_tag} is {status}: {rule}.", code="server_status")


@transaction.atomic
def _store(
    *,
    server: Server,
    actor: Actor,
    report_id: str,
    report: dict[str, Any],
    purpose: str,
    findings: list[Any],
    results: list[GpuResult],
    baseline_ids: Mapping[int, int],
    gz: bytes,
    target_s: float | None,
) -> tuple[BurnInRun, bool]:
    locked = Server.objects.select_for_update(of=("self",)).select_related("order").get(pk=server.pk)
    # A concurrent post of the same report waited for the lock above: it now finds the stored run.
    existing = _existing(report_id, locked)
    if existing is not None:
        return existing, False
    if locked.status not in ACCEPTS_BY_PURPOSE[purpose]:
        raise _wrong_status(locked, purpose)
    # An install or removal may have come in since the first check: the binding is decided under the lock.
    binding = bound_by(locked, report, purpose)
    if purpose == ReportPurpose.BURN_IN and locked.status == ServerStatus.ASSEMBLED:
        locked = server_transition(
            server=locked,
            actor=actor,
            target=ServerStatus.BURN_IN,
            verb="start_burn_in",
            note=f"Burn-in report {report_id[:12]} uploaded.",
        )

    probe = report["probe"]
    stages = report["stages"]
    interrupted = any(s["status"] in {StageStatus.INTERRUPTED, StageStatus.FAILED} for s in stages)
    if any(f.severity == Severity.FAIL for f in findings):
        result = RunResult.FAIL
    elif interrupted:
        result = RunResult.INCOMPLETE
    else:
        result = RunResult.PASS
    run = BurnInRun(
        server=locked,
        purpose=purpose,
        # A post-repair run that passed re-commissions the server: the baseline of the GPUs it brought in.
        accepted_at=timezone.now()
        if purpose == ReportPurpose.POST_REPAIR and result == RunResult.PASS
        else None,
        report_id=report_id,
        probe_version=_text(probe["version"], "$.probe.version", 32),
        schema_version=_text(report["schema_version"], "$.schema_version", 16),
        started_at=report_time(probe["started_at"]),
        ended_at=report_time(probe["ended_at"]),
        result=result,
        rules_version=analysis.RULES_VERSION,
        binding=binding,
        full_load_s=full_load_seconds(report),
        target_s=target_s,
        uploaded_by=user_or_none(actor),
    )
    save_with_file(run, field="report", content=gz, filename=f"{report_id}.json.gz")

    BurnInStage.objects.bulk_create(
        BurnInStage(
            run=run,
            position=position,
            name=stage["name"],
            status=stage["status"],
            reason=stage["reason"] or "",
            started_at=report_time(stage["started_at"]),
            ended_at=report_time(stage["ended_at"]),
        )
        for position, stage in enumerate(stages)
    )
    for row in results:
        row.run = run
        row.baseline_id = baseline_ids.get(row.index)
    GpuResult.objects.bulk_create(results)
    BmcEvent.objects.bulk_create(_bmc_events(run, report))
    rows = Finding.objects.bulk_create(_findings(run, findings))
    _link_explained(rows, findings)
    samples = store_samples(run, report)
    store_rollup(run)

    counts = {str(s): sum(1 for f in findings if f.severity == s) for s in Severity}
    audit(
        actor=actor,
        verb="burnin.ingest",
        obj=locked,
        after={
            "run": run.pk,
            "purpose": purpose,
            "report_id": report_id,
            "result": result,
            "findings": counts,
            "samples": samples,
        },
        note=f"{ReportPurpose(purpose).label} report {report_id[:12]}: {result}.",
    )
    drifted = [row for row in rows if row.severity == Severity.FAIL and row.code.startswith(DRIFT_PREFIX)]
    if drifted:
        drift_failed.send(sender=BurnInRun, run=run, findings=drifted, actor=actor)
    run_analysed.send(sender=BurnInRun, run=run, findings=rows, actor=actor)
    return run, True


def _h2d_gbps(bench: Mapping[str, Any] | None) -> float | None:
    """The card's own pinned H2D: NUMA-local where measured, else the default placement (as the
    analysis' `h2d_bandwidth_outlier` reads it)."""
    if not bench:
        return None
    h2d = bench["h2d_gbps"]
    return h2d["local"] if h2d["local"] is not None else h2d["default"]


def gpu_results(
    report: Mapping[str, Any],
    slots: Mapping[str, Slot],
    links: Mapping[int, Any],
    *,
    by_slot: Mapping[int, int] | None = None,
) -> Iterator[GpuResult]:
    """The report's GPU results, without their run (`_store` sets it), each linked to the installed
    component its serial matched; a card without a serial (GeForce) to the component in its connector by
    PCI bus order (`slot_order_components`), so that a failure of the card is counted against its lot."""
    by_slot = by_slot or {}
    for i, gpu in enumerate(report["gpus"]):
        path = f"$.gpus[{i}]"
        slot = slots.get(normalize_serial(gpu["serial"])) if gpu["serial"] else None
        link = links.get(gpu["index"])  # none where the analysis skipped the card (an index of 3.0)
        bench = gpu.get("bench") or {}
        burn = gpu.get("burn") or {}
        yield GpuResult(
            index=gpu["index"],
            serial=_text(gpu["serial"], f"{path}.serial", 64),
            uuid=_text(gpu["uuid"], f"{path}.uuid", 64),
            name=_text(gpu["name"], f"{path}.name", 100),
            pci_bus_id=_text(gpu["pci_bus_id"], f"{path}.pci_bus_id", 32),
            numa_node=gpu["numa_node"],
            component_id=slot.component_id if slot else by_slot.get(gpu["index"]),
            expected_gen=link.expected_gen if link else None,
            expected_width=link.expected_width if link else None,
            load_gen=link.loaded_gen if link else None,
            load_width=link.loaded_width if link else None,
            h2d_gbps=_h2d_gbps(bench),
            d2h_gbps=bench.get("d2h_gbps"),
            tflops=bench.get("fp16_tflops"),
            vram_gbps=bench.get("vram_gbps"),
            peak_temp_c=gpu["thermal"]["peak_gpu_c"],
            min_margin_c=gpu["thermal"]["min_tlimit_c"],
            mean_power_w=gpu["power"]["mean_w"],
            power_limit_w=gpu["power"]["limit_w"],
            matmuls=burn.get("matmuls_checked"),
            mismatches=burn.get("mismatches"),
            nans=burn.get("nans"),
        )


def _bmc_events(run: BurnInRun, report: Mapping[str, Any]) -> Iterator[BmcEvent]:
    for i, event in enumerate(report["host_memory"]["sel_events"]):
        path = f"$.host_memory.sel_events[{i}]"
        yield BmcEvent(
            run=run,
            sel_id=_text(event["id"], f"{path}.id", 16),
            at=report_time(event["ts_utc"]),
            sensor=_text(event["sensor"], f"{path}.sensor", 100),
            event=_text(event["event"], f"{path}.event", 200),
            direction=_text(event["dir"], f"{path}.dir", 16),
            dimm=_text(event["dimm"], f"{path}.dimm", 64),
            memory_kind=_text(event["memory_kind"], f"{path}.memory_kind", 32),
            record=event,
        )


def _findings(run: BurnInRun, findings: Iterable[Any]) -> Iterator[Finding]:
    for finding in findings:
        gpu = finding.subject if isinstance(finding.subject, int) else None
        subject = f"GPU {gpu}" if gpu is not None else str(finding.subject)
        yield Finding(
            run=run,
            code=finding.code,
            severity=finding.severity,
            # The subject is a label shown beside the sentence, which never repeats it.
            subject=subject if len(subject) <= 100 else subject[:99] + "…",
            # A finding about several GPUs (the thermal margins) is filed under the worst one.
            gpu_index=finding.gpu_index,
            message=finding.message,
            params=finding.params,
            evidence=finding.evidence,
            rule_version=finding_rules_version(finding.code),
        )


def finding_rules_version(code: str) -> str:
    """The rules that made a finding: the drift rules' version for a drift, the analysis' otherwise."""
    if code.startswith(DRIFT_PREFIX):
        return str(drift.DRIFT_RULES_VERSION)
    return analysis.RULES_VERSION


def _link_explained(rows: list[Finding], findings: list[Any]) -> None:
    """Point each stored finding that another finding of the run explains (`explained_by`, the analysis'
    code and subject) at that finding's row. The rows are the findings in order, with their keys."""
    by_key = {(f.code, f.subject): row for f, row in zip(findings, rows, strict=True)}
    explained = []
    for finding, row in zip(findings, rows, strict=True):
        cause = by_key.get(finding.explained_by) if finding.explained_by else None
        if cause is not None:
            row.explained_by = cause
            explained.append(row)
    Finding.objects.bulk_update(explained, ["explained_by"])
