"""bench.report: the one table and JSON file of `make bench`, and the verdict of each figure."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench import report


@pytest.fixture(autouse=True)
def _empty_report() -> Iterator[None]:
    report.clear()
    yield
    report.clear()


def test_a_verdict_follows_the_target_and_its_direction() -> None:
    report.begin("orders")
    fast = report.record("list p95", 40, "ms", target=50)
    slow = report.record("list p95 at 200", 120, "ms", target=100)
    enough = report.record("ingest", 250_000, "samples/s", target=200_000, better="higher")
    short = report.record("pages", 90, "pages/s", target=100, better="higher")
    bare = report.record("queries", 6, "queries")
    at_bound = report.record("admin queries", 12, "queries", target=12)
    assert [f.verdict for f in (fast, slow, enough, short, bare, at_bound)] == [
        "pass",
        "miss",
        "pass",
        "miss",
        "-",
        "pass",
    ]
    assert fast.bench == "orders"
    with pytest.raises(ValueError, match="better"):
        report.record("x", 1, "ms", better="faster")  # type: ignore[arg-type]


def test_the_table_and_the_json_say_the_same(tmp_path: Path) -> None:
    report.begin("scale")
    report.record("API orders limit=50 as PM p95", 37.5, "ms", target=50, note="p50 30.1 ms")
    report.record("admin component changelist queries", 110, "queries", target=12)
    text = report.table()
    lines = text.splitlines()
    assert [cell.strip() for cell in lines[0].split("|")[1:-1]] == [
        "bench",
        "figure",
        "value",
        "target",
        "verdict",
        "note",
    ]
    assert len({len(line) for line in lines}) == 1  # the columns line up
    assert "| 37.50 ms" in text and "≤ 50 ms" in text and "| pass" in text
    assert "| 110 queries" in text and "≤ 12 queries" in text and "| miss" in text
    assert report.summary() == "2 figures, 2 with a target: 1 pass, 1 miss"

    path = report.write_json(tmp_path / "bench" / "results.json", meta={"database": "postgresql"})
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["database"] == "postgresql"
    assert [(f["name"], f["value"], f["target"], f["verdict"]) for f in document["figures"]] == [
        ("API orders limit=50 as PM p95", 37.5, 50, "pass"),
        ("admin component changelist queries", 110.0, 12, "miss"),
    ]


def test_the_results_file_prints_again_with_only_the_misses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report.begin("scale")
    report.record("API components limit=50 as PM p95", 168, "ms", target=50)
    report.record("API orders limit=50 as PM p95", 38, "ms", target=50)
    report.record("seed_scale", 66.6, "s")
    path = report.write_json(tmp_path / "results.json")
    assert report.load(path) == report.figures()

    assert report.main([str(path), "--misses"]) == 0
    printed = capsys.readouterr().out
    assert (
        "API components limit=50" in printed and "API orders" not in printed and "seed_scale" not in printed
    )
    assert "3 figures, 2 with a target: 1 pass, 1 miss" in printed
