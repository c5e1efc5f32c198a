"""Phases of a power feed: which line conductors a phase value names, which a feed has, and one phase's load.

A single-phase feed has L1 only; a three-phase feed L1, L2 and L3 (`PowerFeed.phases`). A server's PSU group
on a feed draws from the phase(s) its link names (`PlacementFeed.phase`): L1, L2, L3, or a combination, over
which its load splits evenly. Each phase carries at most V × A × the continuous factor (0.8, the 80 % rule
of `PowerFeed`): 230 V × 32 A × 0.8 = 5,888 W, whatever the other two phases carry, so a 3 × 32 A feed's
17,664 W are three pools of 5,888 W, never one (issue #28: two 5.7 kW servers on one phase draw 194 % of it).

Imbalance of a three-phase feed: (the highest phase − the lowest) / the mean of the three, in percent. NEMA's
unbalance measure takes the largest deviation from the mean instead; the spread reads simply as "how far
apart the phases are" and is never the smaller of the two.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from django.conf import settings
from django.utils import formats
from django.utils.translation import gettext

from deployment.choices import Phase

if TYPE_CHECKING:
    from deployment.models import PowerFeed
    from deployment.selectors import ServerPower

#: The line conductors each phase value draws from.
PHASE_LINES: dict[str, tuple[str, ...]] = {
    Phase.L1: ("L1",),
    Phase.L2: ("L2",),
    Phase.L3: ("L3",),
    Phase.L1_L2: ("L1", "L2"),
    Phase.L1_L3: ("L1", "L3"),
    Phase.L2_L3: ("L2", "L3"),
    Phase.ALL: ("L1", "L2", "L3"),
}
#: The phase a feed link gets where nobody names one: the one phase every feed has.
DEFAULT_PHASE = Phase.L1


def feed_lines(feed: PowerFeed) -> tuple[str, ...]:
    """The line conductors of a feed: L1 for a single-phase feed, L1–L3 for a three-phase one."""
    return ("L1",) if feed.phases == 1 else ("L1", "L2", "L3")


def phases_of(feed: PowerFeed) -> list[str]:
    """The phase values a link to `feed` may name: L1 only on a single-phase feed, all seven on three."""
    lines = set(feed_lines(feed))
    return [value for value in Phase.values if set(PHASE_LINES[value]) <= lines]


def lines_of(feed: PowerFeed, phase: str) -> tuple[str, ...]:
    """The lines of `feed` a link naming `phase` draws from. A single-phase feed has only L1, so whatever a
    link to it names counts there (a feed that went from three phases to one keeps its links' load)."""
    if feed.phases == 1:
        return ("L1",)
    return PHASE_LINES.get(phase, PHASE_LINES[DEFAULT_PHASE])


def figure(value: float, digits: int = 0) -> str:
    """A figure in the active language's format: rounded to `digits` decimals, thousands grouped ("2,900" and
    "98.5"; German "2.900" and "98,5"). Rounded first: Django's number_format cuts a float's decimals off."""
    return formats.number_format(round(value, digits), digits, use_l10n=True, force_grouping=True)


def _factor() -> float:
    return float(settings.WERKBANK_CIRCUIT_CONTINUOUS_FACTOR)


def factor_text() -> str:
    """The continuous factor in the active language's decimals ("0.8"; German "0,8")."""
    return f"{_factor():g}".replace(".", formats.get_format("DECIMAL_SEPARATOR"))


class Load(Protocol):
    """A load against a continuous limit: one phase of a feed (`PhaseLoad`) or a whole feed
    (`deployment.selectors.FeedLoad`)."""

    @property
    def feed(self) -> PowerFeed: ...
    @property
    def load_w(self) -> float: ...
    @property
    def limit_w(self) -> float: ...
    @property
    def rated_w(self) -> int: ...
    @property
    def margin_w(self) -> float: ...
    @property
    def percent_of_limit(self) -> float: ...


def load_values(load: Load) -> dict[str, object]:
    """What a load's sentence quotes, in the active language's figures: the feed, its volts and amps, the
    load, the limit, the factor and the rating it comes from, the percent of the limit and how far over."""
    return {
        "feed": load.feed.name,
        "volts": load.feed.voltage_v,
        "amps": load.feed.current_a,
        "load": figure(load.load_w),
        "limit": figure(load.limit_w),
        "factor": factor_text(),
        "rated": figure(load.rated_w),
        "percent": figure(load.percent_of_limit, 1),
        "over": figure(-load.margin_w),
    }


def load_figures(load: Load) -> dict[str, float]:
    """A load's figures for an audit row."""
    return {
        "load_w": round(load.load_w),
        "limit_w": round(load.limit_w),
        "percent_of_limit": round(load.percent_of_limit, 1),
    }


@dataclass
class PhaseLoad:
    """One line conductor of a feed: the share of each server's wall power on it, against V × A × 0.8."""

    feed: PowerFeed
    line: str
    draws: list[tuple[ServerPower, float]] = field(default_factory=list)

    @property
    def load_w(self) -> float:
        return sum(watts for _, watts in self.draws)

    @property
    def rated_w(self) -> int:
        return self.feed.voltage_v * self.feed.current_a

    @property
    def limit_w(self) -> float:
        return _factor() * self.rated_w

    @property
    def margin_w(self) -> float:
        return self.limit_w - self.load_w

    @property
    def percent_of_limit(self) -> float:
        return self.load_w / self.limit_w * 100 if self.limit_w else 0.0

    @property
    def ok(self) -> bool:
        return self.load_w <= self.limit_w

    def sentence(self) -> str:
        """The phase's load in words, in the active language: e.g. "Feed PDU-A phase L1 (230 V × 32 A) would
        carry 11,400 W against its continuous limit of 5,888 W (0.8 × 7,360 W): 193.6 % of the limit,
        5,512 W over."."""
        values = {**load_values(self), "phase": self.line}
        if self.ok:
            return (
                gettext(
                    "Feed %(feed)s phase %(phase)s carries %(load)s W of its %(limit)s W continuous limit "
                    "(%(percent)s %%)."
                )
                % values
            )
        return (
            gettext(
                "Feed %(feed)s phase %(phase)s (%(volts)s V × %(amps)s A) would carry %(load)s W against its "
                "continuous limit of %(limit)s W (%(factor)s × %(rated)s W): %(percent)s %% of the limit, "
                "%(over)s W over."
            )
            % values
        )

    def figures(self) -> dict[str, float]:
        """The phase's figures for an audit row."""
        return load_figures(self)


def split_loads(feed: PowerFeed, servers: list[ServerPower], links: Mapping[int, str]) -> list[PhaseLoad]:
    """Each line of `feed` with the share of each server on it: a server's wall power splits evenly over the
    lines its link names (`links`: server id → phase value; a server left out draws from L1)."""
    loads = {line: PhaseLoad(feed=feed, line=line) for line in feed_lines(feed)}
    for power in servers:
        lines = lines_of(feed, links.get(power.server_id, DEFAULT_PHASE))
        for line in lines:
            loads[line].draws.append((power, power.wall_w / len(lines)))
    return list(loads.values())


def imbalance_percent(loads: list[PhaseLoad]) -> float | None:
    """(highest − lowest) / mean of a three-phase feed's phases, in percent; None for a single phase or an
    idle feed."""
    if len(loads) < 2:
        return None
    watts = [load.load_w for load in loads]
    mean = sum(watts) / len(watts)
    return (max(watts) - min(watts)) / mean * 100 if mean else None
