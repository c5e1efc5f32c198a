"""The thresholds of the burn-in analysis, in one place, each with its source.

Rule numbers refer to ``docs/reference/burnin.md`` §4 ("Finding rules"); row numbers to its §2 table.
Where the reference says a value is our own proposal (§7: the 5 %, 10 % and 5 °C values), so does the
comment. Changing any value here, or any rule in ``burnin.analysis``, means bumping ``RULES_VERSION``:
every stored finding carries the version that produced it.

Standard library only: the analysis runs without Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

RULES_VERSION = "2026.12.1"

#: Clocks-event reason bits (NVML ``nvmlDeviceGetCurrentClocksEventReasons``; §3 of the reference).
SW_POWER_CAP = 0x4
HW_SLOWDOWN = 0x8
SW_THERMAL = 0x20
HW_THERMAL = 0x40
HW_POWER_BRAKE = 0x80
THERMAL_BITS = SW_THERMAL | HW_THERMAL

#: The probe's ``clocks_events.seen_active`` names and ``counters_delta_us`` keys for the same reasons.
BAD_REASON_NAMES = MappingProxyType(
    {
        "hw_slowdown": HW_SLOWDOWN,
        "sw_thermal_slowdown": SW_THERMAL,
        "hw_thermal_slowdown": HW_THERMAL,
        "hw_power_brake_slowdown": HW_POWER_BRAKE,
    }
)
BAD_COUNTER_NAMES = MappingProxyType(
    {"sw_therm_slowdown": SW_THERMAL, "hw_therm_slowdown": HW_THERMAL, "hw_power_brake": HW_POWER_BRAKE}
)
REASON_WORDS = MappingProxyType(
    {
        HW_SLOWDOWN: "HW slowdown",
        SW_THERMAL: "SW thermal slowdown",
        HW_THERMAL: "HW thermal slowdown",
        HW_POWER_BRAKE: "HW power brake",
    }
)


def _frozen(mapping: dict[Any, float]) -> Any:
    """A read-only table as a dataclass default (a frozen dataclass cannot hold a plain dict default)."""
    return field(default_factory=lambda: MappingProxyType(dict(mapping)))


@dataclass(frozen=True)
class Thresholds:
    """Every number a rule compares against. One frozen instance, :data:`THRESHOLDS`."""

    # Rule 1 / §0.1: DCGM reads the link only in P0 (PcieMain.cpp); the probe's "under load" is P0 with
    # utilisation >= 80 % (§2 row 1). A sample whose pstate the driver does not report counts when it is
    # busy: a GPU at >= 80 % utilisation runs in P0.
    load_util_pct: float = 80.0
    # Rule 1: the expected width is x16 from the SKU table (every datacenter and workstation GPU we build
    # with), unless the configuration's connector says otherwise or the card's own LnkCap is narrower.
    default_link_width: int = 16

    # Rule 3: a card below 0.75 x the median of its same-SKU peers, or 0.75 x the per-generation
    # expectation, is an outlier. 0.75 is DCGM's own derating factor. Peers need >= 3 comparable cards.
    h2d_ratio_fail: float = 0.75
    # Rule 3 / §2 row 2: pinned H2D expected of a x16 link (Gen4 ~25-26.5, Gen5 ~55-56.5 GB/s measured).
    h2d_expected_x16_gbps: Mapping[int, float] = _frozen({4: 25.5, 5: 55.0})
    min_peers: int = 3
    # Rule 4: under-load H2D below 0.90 x idle, or the concurrent sum below 0.8 x the individual sum.
    h2d_under_load_ratio: float = 0.90
    h2d_concurrent_ratio: float = 0.80
    # Rule 5: default placement within 5 % of the NUMA-remote figure means the workload runs off-node.
    numa_remote_within: float = 0.05
    # Ours: remote must be at least 5 % below local for "remote" to mean anything (~20 % is typical,
    # §2 row 4).
    numa_penalty_min: float = 0.05

    # Rule 7: warn below 0.95 x median, fail below 0.90 x median (our proposals after DCGM's 0.95
    # target_perf_min_ratio and its comparison with the mean, §7). A 3.5 % spread passes.
    tflops_warn_ratio: float = 0.95
    tflops_fail_ratio: float = 0.90
    # Rule 8: fail below 0.75 x the SKU reference (DCGM memory_bandwidth), warn below 0.95 x median.
    vram_sku_fail_ratio: float = 0.75
    vram_warn_ratio: float = 0.95
    # §1 DCGM memory_bandwidth: the dcgmproftester figures behind its minimums (MB/s / 1000 = GB/s), by
    # PCI device id (upper case, without the vendor suffix). H200's entry is unit-inconsistent upstream
    # and is deliberately left out (§1).
    vram_reference_gbps: Mapping[str, float] = _frozen({"2BB5": 1480.0, "2BB4": 1530.0})

    # Rule 9: margin (min T.Limit) below 5 °C warns (our proposal, §7; 88 vs ~90 °C warns); <= 0 fails.
    thermal_margin_warn_c: float = 5.0
    thermal_margin_fail_c: float = 0.0
    # Rule 9: a GPU peaking more than 8 °C above its peers' median warns (airflow, slot position).
    thermal_peer_delta_c: float = 8.0

    # Rule 11: mean power under burn below 0.75 x the enforced limit (DCGM targeted_power
    # target_power_min_ratio) or below 0.95 x the peers' median (power_tolerance_pcnt).
    power_limit_ratio: float = 0.75
    power_peer_ratio: float = 0.95

    # Rule 13: DCGM pcie plugin: max_pcie_replays 80 per test; AER above 16/min (Gen4) or 32/min (Gen5 x16).
    replay_fail: int = 80
    aer_per_min_fail: Mapping[int, float] = _frozen({4: 16.0, 5: 32.0})

    # Rule 15, ecc_correlated_periodic. SEL timestamps have whole seconds and two records logged for one
    # event can straddle a second boundary, so "the same second" is a window of 1 s.
    ecc_coincidence_s: float = 1.0
    # A co-incident burst needs >= 2 distinct DIMMs; the pattern needs >= 3 bursts (>= 2 gaps).
    ecc_min_bursts: int = 3
    # Co-incident bursts are periodic when >= 75 % of the gaps (and at least 2) lie within ±15 % of the
    # median gap. Looser than rule 15's single-DIMM test on purpose: several DIMMs hit within one second
    # is itself the strong signal (independent faults do not line up), and with three bursts there are
    # only two gaps, too few for a CV below 0.05 to mean anything. Seed 003's gaps, 4 h 30 m and
    # 4 h 01 m, lie ±5.7 % around their median and pass; gaps of 1 h and 7 h do not. Two random
    # (exponential) gaps would pass with a chance of 0.15: it is the same-second co-incidence, not the
    # regularity, that rules out chance.
    ecc_coincident_gap_tolerance: float = 0.15
    ecc_coincident_gap_share: float = 0.75
    # Rule 15 for one DIMM, or for DIMMs that are not hit in the same second: >= 3 gaps with CV < 0.05,
    # or more than half of the gaps (and >= 3) within ±2 % of the median. Fixture A (five gaps of
    # 20146-20147 s among seven) passes; random arrivals do not.
    ecc_strict_min_gaps: int = 3
    ecc_strict_cv: float = 0.05
    ecc_strict_gap_tolerance: float = 0.02

    # Rule 17: a SEL clock more than 60 s off host UTC.
    sel_skew_s: float = 60.0

    # Rule 18: more than 1 % of samples missing, or any gap over 5 min.
    telemetry_missing_share: float = 0.01
    telemetry_max_gap_s: float = 300.0


THRESHOLDS = Thresholds()


# --- drift: a field or post-repair run against the same GPU's baseline (burnin.analysis.drift) -------------
# Kept here beside the burn-in thresholds so that every number Werkbank judges a report by is in one file,
# but versioned on its own: a drift rule can change without re-labelling every stored burn-in finding.
# Changing a value or a code set below, or a rule in ``burnin.analysis.drift``, means bumping this version.
DRIFT_RULES_VERSION = "2026.12.1"


@dataclass(frozen=True)
class DriftThresholds:
    """Every number and code set the drift rules compare against. One frozen instance, :data:`DRIFT`."""

    # H2D down by more than 10 % fails. Pinned, NUMA-local H2D repeats within ~2-3 % run to run (§7 of the
    # reference: one GPU at a time, as nvbandwidth and DCGM measure it), and rule 4 already treats 0.90 × idle
    # as a real drop; a lane lost halves it. Nothing at a field site (air, power) costs PCIe bandwidth, so a
    # drop beyond noise is the link or the slot: hardware, a claim.
    h2d_drop_fail: float = 0.10
    # FP16 TFLOPS and VRAM bandwidth down by more than 5 % warn, never fail. 5 % is the analysis' own
    # warning ratio (rules 7 and 8, DCGM's 0.95 target_perf_min_ratio). A warn, not a fail: a site's warmer
    # inlet air, a power limit its operator set, or HBM that runs its memory clock down when hot all cost
    # clocks without any part being faulty, and a fail here opens a warranty claim. A card that is really
    # broken still fails the ordinary rules on the same report (0.90 × the peers' median, 0.75 × the SKU
    # reference) and shows ECC or Xid events, which fail below.
    tflops_drop_warn: float = 0.05
    vram_drop_warn: float = 0.05
    # Peak temperature up by more than 5 °C warns (the reference's 5 °C proposal, §7), but only at the same
    # power or less: "the same power" is a mean power under load at most 5 % above the baseline's. Hotter at
    # less power is worse cooling beyond doubt. At more power the heat may be the extra power's: a 700 W card
    # runs ~45 °C above its inlet (~0.065 °C/W), so +5 % power may add ~2 °C, under half of the 5 °C; at
    # +10 % it could be the whole 5 °C, so 10 % would be too loose. Not comparable: no finding.
    temp_rise_warn_c: float = 5.0
    same_power_above: float = 0.05
    # The ordinary analysis' codes (filed on one GPU) that mean a thermal or hardware slowdown: throttling
    # (rule 10) and a thermal margin at or near the slowdown limit (rule 9). New ones warn: a field site's air
    # can cause them as well as a failing fan or heatsink, so a person looks before a claim is made.
    throttle_codes: frozenset[str] = frozenset({"throttling_active", "thermal_margin_low"})
    # GPU memory ECC and row remapping (rule 12), and Xid events (rule 6: compute_errors carries the Xids of
    # the run, with mismatches, NaNs and CUDA errors). New ones fail: they are the card's own faults.
    gpu_error_codes: frozenset[str] = frozenset(
        {
            "gpu_ecc_uncorrectable",
            "gpu_ecc_correctable_growth",
            "gpu_row_remap_failure",
            "gpu_row_remap_pending",
            "compute_errors",
        }
    )
    # Correctable DIMM ECC in the BMC event log (rules 14 and 15: per DIMM, the CE logging limit, and the
    # periodic patterns). New ones warn: correctable errors are corrected, and seed 003 shows a periodic
    # cause outside the module; an uncorrectable one already fails the ordinary rules.
    dimm_ce_codes: frozenset[str] = frozenset(
        {
            "host_dimm_correctable",
            "host_ecc_logging_limit_reached",
            "ecc_correlated_periodic",
            "ecc_periodic_single_dimm",
        }
    )


DRIFT = DriftThresholds()
