"""The rules that propose what caused a `fail` finding (issue #29, item 1): pure Python, no ORM.

Every code the burn-in analysis can emit (`burnin.analysis`, worded in `burnin.findings_text*`) sits in
exactly one of the tables below: blamed on the card itself (`COMPONENT_CODES`), decided by the link rule
(`LINK_CODES`), on the host around the card (`HOST_CODES`), on the room (`ENVIRONMENT_CODES`), or not a
failure of the hardware at all (`NOT_ATTRIBUTED`: the run was too short, a stage was interrupted, the
telemetry had gaps; they get no attribution). `tests/warranty/test_attribution_rules.py` holds every code
the analysis can emit with severity `fail` against these tables.

The link rule is seed 003's lesson: two cards trained at Gen4 x8 in two chassis connectors; moved to free
connectors, both trained x16, so the connectors were at fault, not the cards. The evidence, strongest first:

1. the same card trained at full width on another connector in another run → the connector;
2. the same card failed its link on another connector too → the card;
3. another card failed its link in this same connector → the connector;
4. no evidence yet → the connector (a card rarely trains narrow on its own; seed 003), saying that no
   move has told them apart yet.

The ECC pattern correlated across DIMMs (seed 003: every burst on two modules within the same second, at a
near-fixed interval) is the environment's (a switching load in the room), not a DIMM's.

The reasons are English sentences (`Attribution.proposed_reason`), as the analysis' messages are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The causes, spelled as `warranty.choices.FailureCause` (this module imports nothing of Django's).
COMPONENT = "component"
CONNECTOR = "connector"
HOST = "host"
ENVIRONMENT = "environment"

#: Faults of the card itself: its compute, memory, ECC, or its absence from the bus.
COMPONENT_CODES: dict[str, str] = {
    "tflops_outlier": "the card computes far below its peers",
    "compute_errors": "the card computed wrong results or raised CUDA errors",
    "vram_bandwidth_low": "the card's memory bandwidth is far below its SKU's",
    "gpu_ecc_uncorrectable": "the card's memory had uncorrectable ECC errors",
    "gpu_row_remap_failure": "the card's memory has no spare rows left",
    "gpu_row_remap_pending": "the card's memory has a row remap pending",
    "gpu_ecc_correctable_growth": "the card's correctable ECC errors grew",
    "drift_tflops": "the card computes slower than at its baseline",
    "drift_vram": "the card's memory bandwidth fell from its baseline",
    "drift_gpu_errors": "the card shows errors it did not have at its baseline",
    "drift_gpu_missing": "the baseline's card is missing from the run",
}

#: The PCIe link between the card and its connector: the link rule decides between the two.
LINK_CODES: dict[str, str] = {
    "pcie_link_downtrained": "the link trained narrower or slower than its connector",
    "h2d_bandwidth_outlier": "the host-to-device bandwidth is far below its peers'",
    "h2d_under_load_drop": "the host-to-device bandwidth dropped under load",
    "pcie_replay_growth": "the link replayed packets",
    "drift_link": "the link trained narrower or slower than at its baseline",
    "drift_h2d": "the host-to-device bandwidth fell from its baseline",
}

#: The host around the card: its DIMMs, its power delivery, its platform's PCIe, its NUMA placement.
HOST_CODES: dict[str, str] = {
    "host_dimm_uncorrectable": "a DIMM of the host had uncorrectable ECC errors",
    "host_dimm_correctable": "a DIMM of the host had correctable ECC errors",
    "host_ecc_logging_limit_reached": "the host's BMC stopped logging memory errors",
    "ecc_periodic_single_dimm": "one DIMM of the host logged errors at a regular interval",
    "drift_dimm_ecc": "the host's DIMMs show errors they did not have at the baseline",
    "power_delivery_low": "the card drew less power than its limit under load: the host's power delivery",
    "pcie_link_cap_limited": "the host's platform caps the link below what the card can do",
    "numa_misaffinity": "host buffers on the wrong NUMA node slowed the transfers",
}

#: The room: its air (heat, throttling) and its power (a periodic switching load; seed 003).
ENVIRONMENT_CODES: dict[str, str] = {
    "thermal_margin_low": "the card ran close to its thermal limit: the room's air",
    "thermal_outlier": "the card ran hotter than its peers: the air where it sits",
    "drift_thermal": "the card runs hotter than at its baseline at the same power: the site's air",
    "drift_throttling": "the card throttles where it did not at its baseline: the site's air or power",
    "ecc_correlated_periodic": (
        "correctable ECC errors on several DIMMs within the same second at a near-fixed interval: an "
        "external, periodic cause (the room's power), not a DIMM"
    ),
}

#: The throttling finding is the room's when the card was hot, the host's power delivery when it was cool
#: (`params["variant"] == "cool"`: HW slowdown or power brake with thermal margin left).
THROTTLING = "throttling_active"

#: Findings about the run, not the hardware: they get no attribution.
NOT_ATTRIBUTED: frozenset[str] = frozenset(
    {
        "burnin_too_short",
        "stage_incomplete",
        "telemetry_gap",
        "sel_clock_skew",
        "drift_no_baseline",
        "edac_firmware_first_blind",
        "power_capped",
    }
)

#: Every code these rules know (the tables are disjoint; the test checks it).
KNOWN_CODES: frozenset[str] = frozenset(
    {*COMPONENT_CODES, *LINK_CODES, *HOST_CODES, *ENVIRONMENT_CODES, THROTTLING, *NOT_ATTRIBUTED}
)


@dataclass(frozen=True)
class LinkFacts:
    """What the fleet's other runs say about a failed link of one card in one connector."""

    #: The same card trained at full width and speed on another connector in another run.
    full_elsewhere: str = ""  # that connector's name ("" when none)
    #: The same card failed its link on another connector too.
    failed_elsewhere: str = ""  # that connector's name
    #: Another card failed its link in this same connector.
    other_card_here: str = ""  # that card's serial


@dataclass(frozen=True)
class Proposal:
    cause: str
    reason: str


def is_link_code(code: str) -> bool:
    return code in LINK_CODES


def propose(
    code: str,
    *,
    params: Mapping[str, Any] | None = None,
    link: LinkFacts | None = None,
    card: str = "",
    connector: str = "",
) -> Proposal | None:
    """The proposed cause of a `fail` finding with `code`, and the sentence why; None for a finding about
    the run (`NOT_ATTRIBUTED`) or a code these rules do not know (a newer analysis; logged by the caller).
    `card` (its serial) and `connector` (its name) word the sentence; `link` is the link rule's evidence."""
    params = params or {}
    if code in COMPONENT_CODES:
        return Proposal(COMPONENT, _sentence(COMPONENT_CODES[code], card=card))
    if code in LINK_CODES:
        return _link(LINK_CODES[code], link or LinkFacts(), card=card, connector=connector)
    if code in HOST_CODES:
        return Proposal(HOST, _sentence(HOST_CODES[code]))
    if code in ENVIRONMENT_CODES:
        return Proposal(ENVIRONMENT, _sentence(ENVIRONMENT_CODES[code]))
    if code == THROTTLING:
        if params.get("variant") == "cool":
            return Proposal(HOST, "The card throttled while cool: the host's PSU or power cabling.")
        return Proposal(ENVIRONMENT, "The card throttled for heat: the room's air.")
    return None


def _sentence(text: str, *, card: str = "") -> str:
    sentence = text[0].upper() + text[1:]
    return f"{sentence} ({card})." if card else f"{sentence}."


def _link(what: str, facts: LinkFacts, *, card: str, connector: str) -> Proposal:
    """The link rule (module docstring), strongest evidence first."""
    here = f"connector {connector}" if connector else "its connector"
    the_card = f"card {card}" if card else "the card"
    start = what[0].upper() + what[1:]
    if facts.full_elsewhere:
        return Proposal(
            CONNECTOR,
            f"{start} in {here}; {the_card} trained at full width in connector {facts.full_elsewhere} "
            "in another run: the connector.",
        )
    if facts.failed_elsewhere:
        return Proposal(
            COMPONENT,
            f"{start} in {here}, and {the_card} failed its link in connector {facts.failed_elsewhere} "
            "too: the card.",
        )
    if facts.other_card_here:
        return Proposal(
            CONNECTOR,
            f"{start} in {here}; card {facts.other_card_here} failed its link in the same connector: "
            "the connector.",
        )
    return Proposal(
        CONNECTOR,
        f"{start} in {here}: the connector, as a narrow link usually is (a card moved off such a "
        "connector trains at full width); no move yet to tell the card from the connector.",
    )
