"""Small helpers of the analysis: tolerant reading of report values, and numbers in plain words."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

COUNT_WORDS = {1: "once", 2: "twice", 3: "three times", 4: "four times", 5: "five times"}


def num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def first_of(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def lowest(*values: Any) -> Any:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def highest(*values: Any) -> Any:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def change(start: Any, end: Any) -> int | None:
    return int(end - start) if num(start) is not None and num(end) is not None else None


def rounded(value: float | None, digits: int) -> float | None:
    return round(value, digits) if value is not None else None


def cv(values: Sequence[float]) -> float:
    """Coefficient of variation (population standard deviation over the mean)."""
    mean = statistics.fmean(values)
    return statistics.pstdev(values) / mean if mean else math.inf


def link_text(gen: int | None, width: int | None) -> str:
    return f"Gen{gen if gen is not None else '?'} x{width if width is not None else '?'}"


def deg(value: float | None) -> str:
    if value is None:
        return "? °C"
    return f"{value:.0f} °C" if float(value).is_integer() else f"{value:.1f} °C"


def plain(value: float) -> str:
    """A figure with at most two decimals and no trailing zeros: 55, 27.5, 12.75."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def plural(count: int, one: str, many: str) -> str:
    """``"1 CUDA error"``, ``"3 CUDA errors"``: ``one`` or ``many`` after the count (English only)."""
    return f"{count:,} {one if count == 1 else many}"


def gpus_label(indices: Sequence[int]) -> str:
    """The subject of a finding about several GPUs: ``"GPUs 0, 2, 5"``."""
    return "GPUs " + ", ".join(str(i) for i in sorted(indices))


def and_join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def duration(seconds: float) -> str:
    seconds = round(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} m" + (f" {secs:02d} s" if secs else "")
    return f"{minutes} min" + (f" {secs} s" if secs else "")


def about(seconds: float) -> str:
    """A period in round words: "~4 h", "~35 min"."""
    if seconds >= 2 * 3600:
        return f"~{seconds / 3600:.0f} h"
    if seconds >= 120:
        return f"~{seconds / 60:.0f} min"
    return f"~{seconds:.0f} s"


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: Any) -> datetime | None:
    """An ISO timestamp (``...Z`` or naive, read as UTC) as an aware datetime."""
    if not isinstance(text, str) or not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def event_seconds(event: Mapping[str, Any]) -> float | None:
    """A SEL event's time in seconds: UTC when the zone was printed, the BMC's wall clock otherwise (the
    gaps are what matters)."""
    moment = parse_time(event.get("ts_utc") or event.get("ts_bmc"))
    return moment.timestamp() if moment else None


def event_time(event: Mapping[str, Any]) -> str | None:
    return event.get("ts_utc") or event.get("ts_bmc")


def sysfs_bdf(pci_bus_id: Any) -> str:
    """``00000000:18:00.0`` -> ``0000:18:00.0`` (the kernel's spelling in "limited by" lines)."""
    domain, _, rest = str(pci_bus_id or "").lower().partition(":")
    return f"{domain[-4:].rjust(4, '0')}:{rest}"
