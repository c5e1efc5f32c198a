"""The burn-in analysis: findings from one probe report, in plain words. Pure Python, no Django.

``analyze(report)`` applies the rules of ``docs/reference/burnin.md`` §4 to a report as the probe writes it
(schema ``probe/schema/report-v1.schema.json``, fields in §5 of the reference) and returns the findings,
failures first. The thresholds live in :mod:`burnin.rules`; every finding is produced under
:data:`RULES_VERSION`, which the caller stores with it.

What the server should give each card comes from two places: the report itself (the card's and the host
root port's maximum PCIe generation, the card's own lane count) and Werkbank's configuration
(:class:`Expectations`: the platform's stated generation, the connector a card sits in). A Gen5 card on a
Gen4 platform is expected to run at Gen4: that is a cap, never a downtrained link.

Modules: ``context`` reads the report once (links, telemetry in one pass); the GPU rules are in ``link``
(rules 1–5, 13), ``compute`` (6–8, 12) and ``thermal`` (9–11), the host's in ``host``, the burn-in's length
in ``duration``; ``common`` holds the small helpers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from burnin.analysis import compute, duration, host, link, thermal
from burnin.analysis.context import Context, Expectations, Finding, build_context
from burnin.rules import RULES_VERSION, THRESHOLDS

__all__ = ["RULES_VERSION", "SEVERITIES", "Expectations", "Finding", "analyze"]

SEVERITIES = ("fail", "warn", "info")
_RANK = {name: rank for rank, name in enumerate(SEVERITIES)}

#: The rules in the order their findings are listed (within one severity).
RULES: tuple[Callable[[Context], Iterable[Finding]], ...] = (
    host.stage_incomplete,
    link.pcie_link,
    link.h2d,
    link.numa,
    compute.tflops,
    compute.vram,
    compute.compute_errors,
    thermal.thermal,
    thermal.throttling,
    thermal.power_delivery,
    compute.gpu_ecc,
    link.replays,
    host.host_memory,
    host.telemetry_gap,
)


def analyze(report: Mapping[str, Any], *, expectations: Expectations | None = None) -> list[Finding]:
    """All findings for one report, failures first, then warnings, then notes; in rule order within."""
    expectations = expectations or Expectations()
    ctx = build_context(report, expectations, THRESHOLDS)
    findings: list[Finding] = []
    for rule in RULES:
        findings.extend(rule(ctx))
    findings.extend(duration.burnin_too_short(report, target_s=expectations.target_s))
    return sorted(findings, key=lambda f: _RANK[f.severity])
