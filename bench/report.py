"""The benchmarks' one report: each bench records its key figures here, the runner prints them as one table
(figure, value, target, pass or miss) at the end and writes the same as JSON.

    from bench.report import record
    record("orders list limit=50 p95", 37.5, "ms", target=50)              # lower is better
    record("telemetry ingest", 310_000, "samples/s", target=200_000, better="higher")
    record("queries, orders list", 6, "queries", note="constant in page size")

A figure without a target is shown for information (its verdict is "-"). The bench that recorded a figure is
the one the runner was running (`begin()`).
"""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

Better = Literal["lower", "higher"]
#: Where the runner writes the figures (`python -m bench --json PATH` elsewhere).
DEFAULT_PATH = Path(__file__).resolve().parents[1] / "var" / "bench" / "results.json"


@dataclass(frozen=True)
class Figure:
    """One measured figure, and the target it is held to (if any)."""

    bench: str
    name: str
    value: float
    unit: str
    target: float | None = None
    better: Better = "lower"
    note: str = ""

    @property
    def verdict(self) -> str:
        """ "pass" or "miss" against the target; "-" when there is none."""
        if self.target is None:
            return "-"
        met = self.value <= self.target if self.better == "lower" else self.value >= self.target
        return "pass" if met else "miss"


_figures: list[Figure] = []
_bench = ""


def begin(bench: str) -> None:
    """The runner starts `bench`: the figures recorded from now on are its."""
    global _bench
    _bench = bench


def record(
    name: str,
    value: float,
    unit: str,
    target: float | None = None,
    better: Better = "lower",
    note: str = "",
) -> Figure:
    """Record one figure of the running bench. `target` is a bound: at most (`better="lower"`) or at least
    (`better="higher"`)."""
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', not {better!r}")
    figure = Figure(
        bench=_bench, name=name, value=float(value), unit=unit, target=target, better=better, note=note
    )
    _figures.append(figure)
    return figure


def figures() -> list[Figure]:
    return list(_figures)


def clear() -> None:
    _figures.clear()


def _number(value: float) -> str:
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.1f}"


def table(rows: list[Figure] | None = None) -> str:
    """The figures as a plain-text table (also valid Markdown), in the order they were recorded."""
    rows = _figures if rows is None else rows
    header = ["bench", "figure", "value", "target", "verdict", "note"]
    body = []
    for figure in rows:
        bound = (
            ""
            if figure.target is None
            else f"{'≤' if figure.better == 'lower' else '≥'} {_number(figure.target)}"
        )
        body.append(
            [
                figure.bench,
                figure.name,
                f"{_number(figure.value)} {figure.unit}",
                f"{bound} {figure.unit}" if bound else "",
                figure.verdict,
                figure.note,
            ]
        )
    widths = [max(len(str(row[i])) for row in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return (
            "| "
            + " | ".join(str(cell).ljust(width) for cell, width in zip(cells, widths, strict=True))
            + " |"
        )

    separator = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    return "\n".join([line(header), separator, *(line(row) for row in body)])


def summary(rows: list[Figure] | None = None) -> str:
    rows = _figures if rows is None else rows
    held = [figure for figure in rows if figure.target is not None]
    missed = [figure for figure in held if figure.verdict == "miss"]
    return (
        f"{len(rows)} figures, {len(held)} with a target: {len(held) - len(missed)} pass, {len(missed)} miss"
    )


def write_json(path: Path, *, meta: dict[str, object] | None = None) -> Path:
    """Write the figures (and `meta`: database, duration …) as JSON to `path`; return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {
        "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        },
        **(meta or {}),
        "summary": summary(),
        "figures": [{**asdict(figure), "verdict": figure.verdict} for figure in _figures],
    }
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def load(path: Path) -> list[Figure]:
    """The figures of a results file that `write_json` wrote."""
    document = json.loads(path.read_text(encoding="utf-8"))
    fields = ("bench", "name", "value", "unit", "target", "better", "note")
    return [Figure(**{key: row[key] for key in fields}) for row in document["figures"]]


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.report [PATH] [--targets] [--misses]`: the table of a results file again, e.g. only
    the figures with a target, for docs/performance.md."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.report", description=main.__doc__)
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--targets", action="store_true", help="only the figures held to a target")
    parser.add_argument("--misses", action="store_true", help="only the figures that miss their target")
    arguments = parser.parse_args(argv)
    rows = load(arguments.path)
    if arguments.targets:
        rows = [figure for figure in rows if figure.target is not None]
    if arguments.misses:
        rows = [figure for figure in rows if figure.verdict == "miss"]
    print(table(rows))
    print(f"\n{summary(load(arguments.path))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
