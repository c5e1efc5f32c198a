"""The host rules: stages, host memory from the BMC event log (rules 14–17), telemetry gaps (rule 18)."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any

from burnin.analysis.common import (
    COUNT_WORDS,
    about,
    and_join,
    cv,
    duration,
    event_seconds,
    event_time,
    iso,
    num,
    parse_time,
    plural,
    rounded,
)
from burnin.analysis.context import Context, Finding
from burnin.rules import Thresholds

#: The reason the probe gives a stage it did not start because the run was interrupted (probe.burnin).
_NOT_STARTED = re.compile(r"not started: run interrupted \((?P<reason>.*)\)")
#: Which outcome names a cause that cut several stages: the stage that was running wins.
_OUTCOMES = ("interrupted", "failed", "skipped")


def stage_incomplete(ctx: Context) -> Iterable[Finding]:
    """An interrupted, failed or skipped stage is never silently treated as passed: it needs a PM's
    decision (a waiver), so it is a failure.

    One cause, one finding: an interruption stops every stage running at that moment (the telemetry and
    the burn) and the probe skips the stages after it ("not started: run interrupted (...)"); they share
    the probe's reason, so stages with the same reason make one finding. ``evidence["stage"]`` is the
    first stage it cut, ``evidence["stages"]`` all of them."""
    causes: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for stage in ctx.report.get("stages") or []:
        if stage.get("status") == "ok":
            continue
        reason = stage.get("reason")
        if isinstance(reason, str) and reason:
            cut = _NOT_STARTED.fullmatch(reason)
            key = ("reason", cut["reason"] if cut else reason)
        else:  # no reason recorded: nothing says two such stages share a cause
            key = ("stage", str(stage.get("name")))
        causes.setdefault(key, []).append(stage)
    for (kind, cause), stages in causes.items():
        names = [str(s.get("name")) for s in stages]
        first = stages[0]
        ran = [s.get("status") for s in stages if s.get("status") in ("interrupted", "failed")]
        if ran:  # the cause as the stage it stopped says it; the stages it kept from starting beside it
            status = min(ran, key=_OUTCOMES.index)
            reason: str | None = cause if kind == "reason" else None
            not_started = [str(s.get("name")) for s in stages if s.get("status") not in _OUTCOMES[:2]]
        else:
            status, reason, not_started = str(first.get("status")), first.get("reason"), []
        params = {"status": status, "reason": reason, "stages": names, "not_started": not_started}
        text = f"{status}: {reason or 'no reason recorded'}"
        if not_started:
            text += f"; {and_join(not_started)} not started"
        yield Finding(
            "stage_incomplete",
            "fail",
            f"stage {names[0]}" if len(names) == 1 else "stages " + ", ".join(names),
            text,
            {
                "stage": names[0],
                "stages": names,
                "status": first.get("status"),
                "reason": first.get("reason"),
                "started_at": first.get("started_at"),
                "ended_at": first.get("ended_at"),
                "by_stage": [
                    {k: s.get(k) for k in ("name", "status", "reason", "started_at", "ended_at")}
                    for s in stages
                ],
            },
            params,
        )


def _memory_events(ctx: Context) -> list[dict[str, Any]]:
    """SEL memory events of the run: those logged during it and those whose timing is unknown. Events
    already in the SEL when the run started are history, not this run's findings."""
    events = (ctx.report.get("host_memory") or {}).get("sel_events") or []
    return [e for e in events if e.get("memory_kind") and e.get("during_run") is not False]


def _dimm_labels(keys: Iterable[str | None]) -> dict[str | None, str]:
    """Short DIMM labels ("A1" for CPU1_DIMMA1) where they stay unique, the full key otherwise."""
    short: dict[str | None, str] = {}
    for key in set(keys):
        if key is None:
            short[key] = "not identified"
            continue
        cpu, _, slot = key.partition("_DIMM")
        short[key] = slot if cpu.startswith("CPU") and slot else key
    counts: dict[str, int] = {}
    for label in short.values():
        counts[label] = counts.get(label, 0) + 1
    return {k: (v if counts[v] == 1 else (k or v)) for k, v in short.items()}


def host_memory(ctx: Context) -> Iterable[Finding]:
    """Rule 14 (per-DIMM UE / CE / logging limit), rule 15 (patterns), rule 16 (EDAC blind), rule 17."""
    events = _memory_events(ctx)
    labels = _dimm_labels(e.get("dimm") for e in events)
    patterns = list(_ecc_patterns(ctx, [e for e in events if e.get("memory_kind") == "ce"], labels))
    # A pattern names its cause for the correctable errors of every DIMM it covers: their per-DIMM warnings
    # are explained by it (the pages show them under it, not as separate faults).
    explained = {dimm: pattern.key for pattern in patterns for dimm in pattern.evidence["dimms"]}
    for kind, code, severity, one, many in (
        ("ue", "host_dimm_uncorrectable", "fail", "uncorrectable ECC error", "uncorrectable ECC errors"),
        ("ce", "host_dimm_correctable", "warn", "correctable ECC error", "correctable ECC errors"),
        (
            "ce_logging_limit",
            "host_ecc_logging_limit_reached",
            "warn",
            "'logging limit reached' record",
            "'logging limit reached' records",
        ),
    ):
        by_dimm: dict[str | None, list[dict[str, Any]]] = {}
        for event in events:
            if event.get("memory_kind") == kind:
                by_dimm.setdefault(event.get("dimm"), []).append(event)
        for dimm, items in sorted(by_dimm.items(), key=lambda kv: labels[kv[0]]):
            label = labels[dimm]
            text = plural(len(items), one, many) + " in the BMC event log"
            if kind == "ce_logging_limit":
                text += ": later errors are not logged, every count is a lower bound"
            yield Finding(
                code,
                severity,
                f"DIMM {label}",
                text,
                {"dimm": dimm, "count": len(items), "times": [event_time(e) for e in items][:50]},
                {"dimm": label, "count": len(items)},
                explained_by=explained.get(dimm) if kind == "ce" else None,
            )
    yield from patterns
    edac = (ctx.report.get("host_memory") or {}).get("edac") or {}
    errors = [e for e in events if e.get("memory_kind") in ("ce", "ue", "ce_logging_limit")]
    edac_total = sum(int(mc.get("ce") or 0) + int(mc.get("ue") or 0) for mc in edac.get("mc") or [])
    if errors and (not edac.get("present") or edac_total == 0):
        params = {"variant": "absent" if not edac.get("present") else "zero", "errors": len(errors)}
        state = "is absent" if not edac.get("present") else "reads 0"
        yield Finding(
            "edac_firmware_first_blind",
            "info",
            "host",
            f"the BMC logged {plural(len(errors), 'memory error', 'memory errors')} while Linux EDAC {state} "
            "(firmware-first): EDAC = 0 proves nothing on this host, read the BMC event log",
            {
                "sel_memory_errors": len(errors),
                "edac_present": bool(edac.get("present")),
                "edac_total": edac_total,
            },
            params,
        )
    offset = num(((ctx.report.get("host") or {}).get("bmc") or {}).get("sel_time_offset_s"))
    if offset is not None and abs(offset) > ctx.limits.sel_skew_s:
        yield Finding(
            "sel_clock_skew",
            "info",
            "host",
            f"the BMC clock is {round(offset):+d} s off host UTC: correct SEL times before comparing them "
            "with the GPU telemetry",
            {"sel_time_offset_s": offset, "limit_s": ctx.limits.sel_skew_s},
            {"offset_s": round(offset)},
        )


def _ecc_patterns(
    ctx: Context, events: list[dict[str, Any]], labels: dict[str | None, str]
) -> Iterable[Finding]:
    """Rule 15: correctable errors on several DIMMs in the same second at roughly regular gaps point at
    an external periodic cause; strictly periodic errors on one DIMM at a scheduled or logging artefact."""
    lim = ctx.limits
    timed = sorted((t, e.get("dimm")) for e in events if (t := event_seconds(e)) is not None)
    bursts: list[tuple[float, set[str | None]]] = []
    for t, dimm in timed:
        if bursts and t - bursts[-1][0] <= lim.ecc_coincidence_s:
            bursts[-1][1].add(dimm)
        else:
            bursts.append((t, {dimm}))
    coincident = [(t, dimms) for t, dimms in bursts if len(dimms - {None}) >= 2]
    covered: set[str | None] = set()
    if len(coincident) >= lim.ecc_min_bursts:
        gaps = [b[0] - a[0] for a, b in pairwise(coincident)]
        median = statistics.median(gaps)
        within = sum(1 for g in gaps if abs(g - median) <= lim.ecc_coincident_gap_tolerance * median)
        if median > 0 and within >= max(2, math.ceil(lim.ecc_coincident_gap_share * len(gaps))):
            dimms = sorted(set().union(*(d for _, d in coincident)) - {None}, key=lambda k: labels[k])
            covered.update(dimms)
            names = [labels[d] for d in dimms]
            times = COUNT_WORDS.get(len(coincident), f"{len(coincident)} times")
            yield Finding(
                "ecc_correlated_periodic",
                "warn",
                "DIMMs " + ", ".join(names),
                f"correctable ECC in the same second, {times} at {about(round(median))} intervals: "
                "a signature of an external periodic cause, not a failing module",
                {
                    "category": "external cause",
                    "dimms": dimms,
                    "coincident": True,
                    "bursts": [iso(datetime.fromtimestamp(t, UTC)) for t, _ in coincident],
                    "gaps_s": [rounded(g, 1) for g in gaps],
                    "period_s": rounded(median, 1),
                    "cv": rounded(cv(gaps), 4),
                    "gap_tolerance": lim.ecc_coincident_gap_tolerance,
                    "same_second_counts": {
                        labels[d]: sum(1 for _, ds in coincident if d in ds) for d in dimms
                    },
                },
                {
                    "variant": "coincident",
                    "dimms": names,
                    "bursts": len(coincident),
                    "period_s": round(median),
                },
            )
    periodic: list[tuple[str, float, list[float]]] = []
    per_dimm: dict[str, list[float]] = {}
    for t, dimm in timed:
        if dimm is not None and dimm not in covered:
            per_dimm.setdefault(dimm, []).append(t)
    for dimm, times in per_dimm.items():
        gaps = [b - a for a, b in pairwise(times)]
        period = _strict_period(gaps, lim)
        if period is not None:
            periodic.append((dimm, period, gaps))
    groups: list[list[tuple[str, float, list[float]]]] = []
    for item in sorted(periodic, key=lambda p: p[1]):
        if groups and abs(item[1] - groups[-1][0][1]) <= lim.ecc_strict_gap_tolerance * groups[-1][0][1]:
            groups[-1].append(item)
        else:
            groups.append([item])
    for group in groups:
        dimms = sorted((d for d, _, _ in group), key=lambda k: labels[k])
        names = [labels[d] for d in dimms]
        period = statistics.median(p for _, p, _ in group)
        evidence = {
            "dimms": dimms,
            "coincident": False,
            "period_s": rounded(period, 1),
            "gaps_s": {labels[d]: [rounded(g, 1) for g in gaps] for d, _, gaps in group},
            "cv": {labels[d]: rounded(cv(gaps), 5) for d, _, gaps in group},
        }
        if len(group) > 1:
            yield Finding(
                "ecc_correlated_periodic",
                "warn",
                "DIMMs " + ", ".join(names),
                f"correctable ECC at the same period ({about(round(period))}) on each: "
                "a signature of an external periodic cause, not a failing module",
                dict(evidence, category="external cause"),
                {"variant": "period", "dimms": names, "period_s": round(period)},
            )
        else:
            yield Finding(
                "ecc_periodic_single_dimm",
                "warn",
                f"DIMM {names[0]}",
                f"correctable ECC every {duration(period)}, strictly periodic: a scheduled "
                "or logging artefact is more likely than a decaying module",
                evidence,
                {"dimm": names[0], "period_s": round(period)},
            )


def _strict_period(gaps: list[float], lim: Thresholds) -> float | None:
    """Rule 15.3: >= 3 gaps with CV < 0.05, or more than half of them (and >= 3) within ±2 % of the median."""
    if len(gaps) < lim.ecc_strict_min_gaps:
        return None
    median = statistics.median(gaps)
    if median <= 0:
        return None
    within = [g for g in gaps if abs(g - median) <= lim.ecc_strict_gap_tolerance * median]
    if cv(gaps) < lim.ecc_strict_cv or (
        len(within) >= lim.ecc_strict_min_gaps and 2 * len(within) > len(gaps)
    ):
        return statistics.median(within) if within else median
    return None


def telemetry_gap(ctx: Context) -> Iterable[Finding]:
    """Rule 18: > 1 % of samples missing or any gap > 5 min: "no throttling" cannot be claimed."""
    lim = ctx.limits
    if not ctx.gpus:
        return
    stage = next((s for s in ctx.report.get("stages") or [] if s.get("name") == "telemetry"), {})
    end = parse_time(stage.get("ended_at"))
    stop = (end - ctx.t0).total_seconds() if end and ctx.t0 else None
    affected: dict[int, dict[str, Any]] = {}
    for gpu in ctx.gpus:
        series = gpu.series
        if series is None:
            affected[gpu.index] = {"samples": 0}
            continue
        gaps = list(series.long_gaps)
        if series.t_first > lim.telemetry_max_gap_s:
            gaps.insert(0, (0.0, series.t_first))
        if stop is not None and stop - series.t_last > lim.telemetry_max_gap_s:
            gaps.append((series.t_last, stop - series.t_last))
        share = series.missing / (series.samples + series.missing)
        if gaps or share > lim.telemetry_missing_share:
            affected[gpu.index] = {
                "samples": series.samples,
                "missing": series.missing,
                "missing_share": rounded(share, 4),
                "gaps": [{"from": ctx.at(t) or t, "seconds": rounded(g, 1)} for t, g in gaps[:20]],
                "longest_gap_s": rounded(max([g for _, g in gaps], default=series.max_gap_s), 1),
            }
    if not affected:
        return

    def params_of(info: dict[str, Any]) -> dict[str, Any]:
        """The figures of the sentence: no samples, or the long gaps and the share missing (either may be
        absent: 0 gaps, a share of None)."""
        if not info["samples"]:
            return {"samples": 0}
        share = info["missing_share"]
        return {
            "samples": info["samples"],
            "gaps": len(info["gaps"]),
            "gap_limit_min": round(lim.telemetry_max_gap_s / 60),
            "longest_gap_s": round(info["longest_gap_s"]) if info["gaps"] else None,
            "missing_pct": round(share * 100, 1) if share > lim.telemetry_missing_share else None,
        }

    def words(params: dict[str, Any]) -> str:
        if not params["samples"]:
            return "no samples"
        parts = []
        if params["gaps"]:
            count = params["gaps"]
            parts.append(
                f"{'a gap' if count == 1 else f'{count} gaps'} over {params['gap_limit_min']} min "
                f"(longest {duration(params['longest_gap_s'])})"
            )
        if params["missing_pct"] is not None:
            parts.append(f"{params['missing_pct']:.1f}% of samples missing")
        return " and ".join(parts)

    tail = ": no claim about throttling can be made for those periods"
    described = {index: params_of(info) for index, info in affected.items()}
    if len(affected) == len(ctx.gpus) and len({words(p) for p in described.values()}) == 1:
        params = dict(next(iter(described.values())), variant="every_gpu")
        yield Finding(
            "telemetry_gap",
            "warn",
            "host",
            f"{words(params)} in the telemetry of every GPU{tail}",
            {"gpus": {str(index): info for index, info in affected.items()}},
            params,
        )
        return
    for index, info in affected.items():
        params = described[index]
        yield Finding("telemetry_gap", "warn", index, f"{words(params)} in the telemetry{tail}", info, params)
