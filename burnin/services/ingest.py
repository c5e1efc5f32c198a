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
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction

from builds.choices import ConnectorKind, ServerStatus
from builds.models import Server
from builds.services import server_transition
from burnin import analysis
from burnin.analysis.context import build_context
from burnin.analysis.duration import full_load_seconds
from burnin.choices import RunResult, Severity, StageStatus
from burnin.hardware import HardwareMismatch, check_hardware, installed_gpus
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
from inventory.serials import normalize_serial
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation
from werkbank.files import save_with_file
from werkbank.types import Actor

#: Servers in these statuses take a report; an `assembled` one is moved to `burn_in` by it.
ACCEPTS_REPORTS = frozenset({ServerStatus.ASSEMBLED, ServerStatus.BURN_IN})
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
    changes nothing, whatever the server's status is by now. Otherwise the server must be `assembled`
    (it moves to `burn_in`) or in `burn_in` (409), and the report must be valid (400, naming the JSON
    path of the first error).

    Reading, validating and analysing the report happen before the transaction opens: the server's row
    lock is held only while the rows are written (and the telemetry copied in).
    """
    report_id = report_id_of(raw, idempotency_key)
    existing = _existing(report_id, server)
    if existing is not None:
        return existing, False
    if server.status not in ACCEPTS_REPORTS:  # checked again under the lock; this saves parsing
        raise _wrong_status(server)
    report = parse_report(raw)
    bound_by(server, report)  # checked again under the lock; this saves the analysis
    slots = installed_slots(server)
    target_s = promised_burnin_s(server)
    expected = expectations(report, slots, platform_max_gen(server), target_s=target_s)
    findings = analysis.analyze(report, expectations=expected)
    try:
        return _store(
            server=server,
            actor=actor,
            report_id=report_id,
            report=report,
            findings=findings,
            slots=slots,
            links=links(report, expected),
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


def promised_burnin_s(server: Server) -> float:
    """The burn-in promised for the server, in seconds: the longer of its order's and its configuration's
    (72 h by default, seed 001)."""
    order = server.order
    return float(max(order.burnin_hours, order.configuration.burnin_hours) * 3600)


def bound_by(server: Server, report: Mapping[str, Any]) -> str:
    """How the report's GPUs bind to the server's installed GPUs; a 409 `hardware_mismatch` naming every
    difference when they are other GPUs."""
    try:
        return check_hardware(server=server, report=report)
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


def _wrong_status(server: Server) -> RuleViolation:
    return RuleViolation(
        f"Server {server.asset_tag} is {server.get_status_display().lower()}: a burn-in report is taken "
        "only while the server is assembled or in burn-in.",
        code="server_status",
    )


@transaction.atomic
def _store(
    *,
    server: Server,
    actor: Actor,
    report_id: str,
    report: dict[str, Any],
    findings: list[Any],
    slots: Mapping[str, Slot],
    links: Mapping[int, Any],
    gz: bytes,
    target_s: float,
) -> tuple[BurnInRun, bool]:
    locked = Server.objects.select_for_update(of=("self",)).select_related("order").get(pk=server.pk)
    # A concurrent post of the same report waited for the lock above: it now finds the stored run.
    existing = _existing(report_id, locked)
    if existing is not None:
        return existing, False
    if locked.status not in ACCEPTS_REPORTS:
        raise _wrong_status(locked)
    # An install or removal may have come in since the first check: the binding is decided under the lock.
    binding = bound_by(locked, report)
    if locked.status == ServerStatus.ASSEMBLED:
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
    GpuResult.objects.bulk_create(_gpu_results(run, report, slots, links))
    BmcEvent.objects.bulk_create(_bmc_events(run, report))
    _link_explained(Finding.objects.bulk_create(_findings(run, findings)), findings)
    samples = store_samples(run, report)
    store_rollup(run)

    counts = {str(s): sum(1 for f in findings if f.severity == s) for s in Severity}
    audit(
        actor=actor,
        verb="burnin.ingest",
        obj=locked,
        after={
            "run": run.pk,
            "report_id": report_id,
            "result": result,
            "findings": counts,
            "samples": samples,
        },
        note=f"Burn-in report {report_id[:12]}: {result}.",
    )
    return run, True


def _h2d_gbps(bench: Mapping[str, Any] | None) -> float | None:
    """The card's own pinned H2D: NUMA-local where measured, else the default placement (as the
    analysis' `h2d_bandwidth_outlier` reads it)."""
    if not bench:
        return None
    h2d = bench["h2d_gbps"]
    return h2d["local"] if h2d["local"] is not None else h2d["default"]


def _gpu_results(
    run: BurnInRun, report: Mapping[str, Any], slots: Mapping[str, Slot], links: Mapping[int, Any]
) -> Iterator[GpuResult]:
    for i, gpu in enumerate(report["gpus"]):
        path = f"$.gpus[{i}]"
        slot = slots.get(normalize_serial(gpu["serial"])) if gpu["serial"] else None
        link = links.get(gpu["index"])  # none where the analysis skipped the card (an index of 3.0)
        bench = gpu.get("bench") or {}
        burn = gpu.get("burn") or {}
        yield GpuResult(
            run=run,
            index=gpu["index"],
            serial=_text(gpu["serial"], f"{path}.serial", 64),
            uuid=_text(gpu["uuid"], f"{path}.uuid", 64),
            name=_text(gpu["name"], f"{path}.name", 100),
            pci_bus_id=_text(gpu["pci_bus_id"], f"{path}.pci_bus_id", 32),
            numa_node=gpu["numa_node"],
            component_id=slot.component_id if slot else None,
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
            rule_version=analysis.RULES_VERSION,
        )


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
