"""The attribution rules (warranty/attribution_rules.py, pure): every code the burn-in analysis can emit
with severity `fail` is attributed or explicitly not; the link rule of seed 003; the room's ECC pattern."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from burnin.findings_text import _RENDERERS
from warranty import attribution_rules as rules
from warranty.attribution_rules import LinkFacts, propose
from warranty.choices import FailureCause

ANALYSIS = Path(rules.__file__).resolve().parents[1] / "burnin" / "analysis"


def _emitted() -> dict[str, set[str]]:
    """Every `Finding(code, severity, ...)` of burnin/analysis/*.py: code → the severities it may carry
    ("?" where the severity is computed). A code held in a variable is resolved from the literal tuples
    the module loops over, or the string literals passed to the helper that builds the finding."""
    found: dict[str, set[str]] = {}
    for path in sorted(ANALYSIS.glob("*.py")):
        tree = ast.parse(path.read_text())
        literals = {
            n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Finding"):
                continue
            code, severity = node.args[0], node.args[1]
            severities = _severities(severity)
            if isinstance(code, ast.Constant):
                codes = {code.value}
            else:  # a helper's parameter: the snake_case literals of the module that look like codes
                codes = {s for s in literals if s.islower() and "_" in s and " " not in s and s in _KNOWN}
            for name in codes:
                found.setdefault(name, set()).update(severities)
    return found


def _severities(node: ast.expr) -> set[str]:
    values = {
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value in {"info", "warn", "fail"}
    }
    return values if isinstance(node, ast.Constant | ast.IfExp) else values | {"?"}


#: The codes the findings' texts know: the analysis' vocabulary.
_KNOWN = frozenset(_RENDERERS)


def test_every_fail_capable_code_is_mapped_or_explicitly_not():
    emitted = _emitted()
    fail_capable = {code for code, severities in emitted.items() if severities & {"fail", "?"}}
    # The scan sees the codes it must (a sanity check of the scan itself).
    assert {
        "pcie_link_downtrained",
        "compute_errors",
        "drift_link",
        "drift_gpu_errors",
        "burnin_too_short",
    } <= (fail_capable)
    unknown = fail_capable - rules.KNOWN_CODES
    assert not unknown, f"fail-capable codes without an attribution rule: {sorted(unknown)}"
    # Every code the analysis words at all is in the tables too (a warn can be a fail tomorrow).
    assert not (_KNOWN - rules.KNOWN_CODES), sorted(_KNOWN - rules.KNOWN_CODES)


def test_the_tables_are_disjoint():
    tables = [
        set(rules.COMPONENT_CODES),
        set(rules.LINK_CODES),
        set(rules.HOST_CODES),
        set(rules.ENVIRONMENT_CODES),
        {rules.THROTTLING},
        set(rules.NOT_ATTRIBUTED),
    ]
    assert sum(len(t) for t in tables) == len(rules.KNOWN_CODES)


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        ("gpu_ecc_uncorrectable", FailureCause.COMPONENT),
        ("compute_errors", FailureCause.COMPONENT),
        ("tflops_outlier", FailureCause.COMPONENT),
        ("vram_bandwidth_low", FailureCause.COMPONENT),
        ("drift_tflops", FailureCause.COMPONENT),
        ("drift_vram", FailureCause.COMPONENT),
        ("drift_gpu_errors", FailureCause.COMPONENT),
        ("drift_gpu_missing", FailureCause.COMPONENT),
        ("pcie_link_downtrained", FailureCause.CONNECTOR),
        ("h2d_bandwidth_outlier", FailureCause.CONNECTOR),
        ("pcie_replay_growth", FailureCause.CONNECTOR),
        ("drift_link", FailureCause.CONNECTOR),
        ("drift_h2d", FailureCause.CONNECTOR),
        ("thermal_margin_low", FailureCause.ENVIRONMENT),
        ("drift_thermal", FailureCause.ENVIRONMENT),
        ("drift_throttling", FailureCause.ENVIRONMENT),
        ("ecc_correlated_periodic", FailureCause.ENVIRONMENT),
        ("host_dimm_uncorrectable", FailureCause.HOST),
        ("ecc_periodic_single_dimm", FailureCause.HOST),
        ("drift_dimm_ecc", FailureCause.HOST),
        ("host_ecc_logging_limit_reached", FailureCause.HOST),
        ("power_delivery_low", FailureCause.HOST),
        ("pcie_link_cap_limited", FailureCause.HOST),
        ("numa_misaffinity", FailureCause.HOST),
    ],
)
def test_the_table(code, cause):
    proposal = propose(code, card="S1", connector="PCIe-3")
    assert proposal is not None and proposal.cause == cause
    assert proposal.reason.endswith(".") and proposal.reason[0].isupper()


@pytest.mark.parametrize(
    "code", ["burnin_too_short", "stage_incomplete", "telemetry_gap", "sel_clock_skew", "drift_no_baseline"]
)
def test_process_findings_get_no_attribution(code):
    assert propose(code) is None


def test_an_unknown_code_gets_none():
    assert propose("a_rule_of_tomorrow") is None


def test_throttling_is_the_room_unless_the_card_was_cool():
    assert propose("throttling_active", params={"variant": "cool"}).cause == FailureCause.HOST
    assert propose("throttling_active", params={}).cause == FailureCause.ENVIRONMENT


def test_the_correlated_ecc_pattern_is_the_rooms_not_a_dimms():
    proposal = propose("ecc_correlated_periodic")
    assert proposal.cause == FailureCause.ENVIRONMENT and "not a DIMM" in proposal.reason


def test_the_link_rule_strongest_evidence_first():
    code = "pcie_link_downtrained"
    moved = propose(code, link=LinkFacts(full_elsewhere="PCIe-7"), card="S1", connector="PCIe-3")
    assert moved.cause == FailureCause.CONNECTOR
    assert "card S1 trained at full width in connector PCIe-7 in another run" in moved.reason
    assert "connector PCIe-3" in moved.reason

    travels = propose(code, link=LinkFacts(failed_elsewhere="PCIe-7"), card="S1", connector="PCIe-3")
    assert (
        travels.cause == FailureCause.COMPONENT
        and "failed its link in connector PCIe-7 too" in travels.reason
    )

    here = propose(code, link=LinkFacts(other_card_here="S9"), card="S1", connector="PCIe-3")
    assert (
        here.cause == FailureCause.CONNECTOR
        and "card S9 failed its link in the same connector" in here.reason
    )

    # A full-width run elsewhere outweighs the rest: the card is fine, this connector is not.
    both = LinkFacts(full_elsewhere="PCIe-7", failed_elsewhere="PCIe-8", other_card_here="S9")
    assert propose(code, link=both, card="S1", connector="PCIe-3").cause == FailureCause.CONNECTOR
    assert propose(code, link=LinkFacts(failed_elsewhere="PCIe-8", other_card_here="S9")).cause == (
        FailureCause.COMPONENT
    )


def test_no_evidence_yet_says_so():
    proposal = propose("drift_link", connector="PCIe-3")
    assert proposal.cause == FailureCause.CONNECTOR
    assert "no move yet to tell" in proposal.reason and "connector PCIe-3" in proposal.reason
