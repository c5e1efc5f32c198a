"""One row of the quality tables (a lot, a supplier, a part or a connector position), as the selectors build
it and the page, the CSV, the API and the procurement checks read it."""

from __future__ import annotations

from dataclasses import dataclass, field

from pm.quality.formulas import Interval

#: The four tables, in the page's order.
KINDS = ("lots", "suppliers", "parts", "positions")


@dataclass(frozen=True)
class QualityRow:
    """Failures among the units of one lot, supplier (per part category), part or connector position.

    ``key`` identifies the row in a URL (``evidence`` and the API): ``lots``: ``<part id>:<lot code>``;
    ``suppliers``: ``<supplier id>:<category>``; ``parts``: ``<part id>``; ``positions``:
    ``<layout id>:<connector name>``. ``by_stage`` counts distinct failed units per stage (one unit may fail
    at two stages, so the stages can add up to more than ``failures``)."""

    kind: str
    key: str
    label: str
    category: str
    units: int
    in_service: int
    unit_years: float
    failures: int
    by_stage: dict[str, int] = field(default_factory=dict)
    interval: Interval | None = None
    threshold: float = 0.0
    min_units: int = 0
    flagged: bool = False

    def sentence(self) -> str:
        """The figures in one English sentence (the procurement checks quote it): "Lot L-2291 of RTX 5090: 3
        of 8 failed, 95 % interval 13.7–69.4 %"."""
        if self.interval is None:
            return f"{self.label}: no units in service yet"
        return (
            f"{self.label}: {self.failures} of {self.units} failed, 95 % interval "
            f"{self.interval.low * 100:.1f}–{self.interval.high * 100:.1f} %"
        )
