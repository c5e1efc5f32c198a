"""pm.quality.selectors: the fleet's failure rates per lot, supplier, part and connector position, against
hand-computed figures (issue #29's acceptance: 3 of 8 flagged at 13.7–69.4 %, 1 of 8 not), with a fixed
number of queries however large the fleet."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from pm.quality import selectors
from pm.quality.formulas import YEAR_S
from tests.pm import quality_rig
from warranty.models import Attribution

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


def _row(kind, key):
    row = selectors.quality_row(kind, key, now=NOW)
    assert row is not None, f"no {kind} row {key}"
    return row


def test_a_lot_with_three_of_eight_failed_is_flagged():
    fleet = quality_rig.fleet(servers=8, lots={"L-2291": 8})
    gpus = fleet.lot("L-2291")
    quality_rig.fail(fleet.servers[0], component=gpus[0], stage="burn_in")
    quality_rig.fail(fleet.servers[1], component=gpus[1], stage="burn_in")
    quality_rig.fail(fleet.servers[2], component=gpus[2], stage="claim")
    # A second finding of a unit already failed does not count twice.
    quality_rig.fail(fleet.servers[2], component=gpus[2], stage="field")

    row = _row("lots", fleet.lot_key("L-2291"))

    assert (row.units, row.in_service, row.failures) == (8, 8, 3)
    assert row.by_stage == {"burn_in": 2, "claim": 1, "field": 1}
    assert row.interval is not None
    # Wilson, by hand: n=8, p=3/8, z=1.96 → centre 0.4158, half 0.2787.
    assert round(row.interval.rate, 4) == 0.375
    assert round(row.interval.low * 100, 1) == 13.7
    assert round(row.interval.high * 100, 1) == 69.4
    assert (row.threshold, row.min_units, row.flagged) == (0.05, 8, True)
    assert row.category == "gpu"
    assert row.label == f"Lot L-2291 of {fleet.part.name}"
    assert row.sentence() == f"Lot L-2291 of {fleet.part.name}: 3 of 8 failed, 95 % interval 13.7–69.4 %"
    # 8 units since 1 January, 181 days to 1 July.
    assert row.unit_years == pytest.approx(8 * 181 * 86400 / YEAR_S)


def test_a_lot_with_one_of_eight_failed_is_not_flagged():
    fleet = quality_rig.fleet(servers=8, lots={"L-1": 8})
    quality_rig.fail(fleet.servers[0], component=fleet.gpus[0], stage="claim")

    row = _row("lots", fleet.lot_key("L-1"))

    assert (row.units, row.failures) == (8, 1)
    assert row.interval is not None
    # 1 of 8: 12.5 %, interval 2.2–47.1 %: the lower bound is under 5 %.
    assert (round(row.interval.low * 100, 1), round(row.interval.high * 100, 1)) == (2.2, 47.1)
    assert row.flagged is False


def test_too_few_units_never_flag(settings):
    settings.WERKBANK_QUALITY_MIN_UNITS = 8
    fleet = quality_rig.fleet(servers=4, lots={"L-SMALL": 4})
    for server, gpu in zip(fleet.servers[:3], fleet.gpus, strict=False):
        quality_rig.fail(server, component=gpu)

    row = _row("lots", fleet.lot_key("L-SMALL"))
    assert row.interval is not None and row.interval.low > 0.05  # 3 of 4: 30.1–95.4 %
    assert (row.units, row.flagged) == (4, False)

    settings.WERKBANK_QUALITY_MIN_UNITS = 4
    assert _row("lots", fleet.lot_key("L-SMALL")).flagged is True


def test_the_threshold_is_per_part_category(settings):
    fleet = quality_rig.fleet(servers=8, lots={"L-T": 8})
    for server, gpu in zip(fleet.servers[:3], fleet.gpus, strict=False):
        quality_rig.fail(server, component=gpu)
    settings.WERKBANK_QUALITY_FLAG_LOWER_BOUND = {"default": 0.05, "gpu": 0.2}

    row = _row("lots", fleet.lot_key("L-T"))
    assert (row.threshold, row.flagged) == (0.2, False)
    assert _row("parts", str(fleet.part.pk)).threshold == 0.2


def test_a_lot_code_received_twice_joins_one_history_and_units_include_the_never_installed():
    fleet = quality_rig.fleet(servers=4, lots={"L-AGAIN": 4})
    again = quality_rig.receive(
        part=fleet.part, supplier=fleet.supplier, lots={"L-AGAIN": 2, "L-OTHER": 1}, prefix="R"
    )
    # One of the second receipt's cards was dead on arrival: never installed, still a unit and a failure.
    quality_rig.fail(fleet.servers[0], component=again[0], stage="claim")
    quality_rig.remove(fleet.gpus[1], at=datetime(2026, 4, 1, 12, tzinfo=UTC))

    row = _row("lots", fleet.lot_key("L-AGAIN"))

    assert (row.units, row.in_service, row.failures) == (5, 3, 1)
    # 3 in service for 181 days, one removed after 90.
    assert row.unit_years == pytest.approx((3 * 181 + 90) * 86400 / YEAR_S)
    assert selectors.quality_row("lots", fleet.lot_key("L-OTHER"), now=NOW) is None  # in stock: no units


def test_suppliers_parts_and_the_ranking():
    bad = quality_rig.fleet(servers=8, lots={"L-BAD": 8})
    good = quality_rig.fleet(servers=8, lots={"L-GOOD": 8}, supplier=bad.supplier, part=bad.part)
    for server, gpu in zip(bad.servers[:3], bad.gpus, strict=False):
        quality_rig.fail(server, component=gpu)
    quality_rig.fail(good.servers[0], component=good.gpus[0])
    # Neither host nor environment counts anywhere.
    quality_rig.fail(good.servers[1], component=good.gpus[1], cause="host")

    lots = [
        row
        for row in selectors.quality_rows("lots", now=NOW)
        if row.key in {bad.lot_key("L-BAD"), good.lot_key("L-GOOD")}
    ]
    assert [(row.key, row.failures, row.flagged) for row in lots] == [
        (bad.lot_key("L-BAD"), 3, True),
        (good.lot_key("L-GOOD"), 1, False),
    ]
    supplier = _row("suppliers", bad.supplier_key())
    assert (supplier.units, supplier.failures, supplier.category) == (16, 4, "gpu")
    assert supplier.label == f"{bad.supplier.name}, GPU"
    # 4 of 16: 10.2–49.5 %.
    assert supplier.interval is not None and round(supplier.interval.low * 100, 1) == 10.2
    assert supplier.flagged is True
    part = _row("parts", str(bad.part.pk))
    assert (part.units, part.failures) == (16, 4)
    assert part.label == f"NVIDIA {bad.part.name} ({bad.part.mpn})"


def test_positions_count_servers_of_the_layout():
    fleet = quality_rig.fleet(servers=4, lots={"L-P": 8}, gpus_per_server=2)
    # Seed 003: x8 links on PCIe-2 of two servers are the connector's, not the GPUs' lot.
    quality_rig.fail(
        fleet.servers[0],
        component=fleet.installed[fleet.servers[0].pk][1],
        connector="PCIe-2",
        cause="connector",
    )
    quality_rig.fail(fleet.servers[1], connector="PCIe-2", stage="bench")

    row = _row("positions", fleet.position_key("PCIe-2"))
    assert (row.units, row.in_service, row.failures) == (4, 4, 2)
    assert row.by_stage == {"burn_in": 1, "bench": 1}
    assert (row.category, row.min_units, row.threshold) == ("connector", 4, 0.05)
    assert row.label == "PCIe-2 on 7U GPU chassis"
    # 2 of 4: 15.0–85.0 %.
    assert row.interval is not None
    assert (round(row.interval.low * 100, 1), round(row.interval.high * 100, 1)) == (15.0, 85.0)
    assert row.flagged is True
    assert row.unit_years == pytest.approx(4 * 181 * 86400 / YEAR_S)
    assert _row("positions", fleet.position_key("PCIe-1")).failures == 0
    assert _row("lots", fleet.lot_key("L-P")).failures == 0


def test_a_blacklisted_connector_never_used_counts_as_a_unit():
    fleet = quality_rig.fleet(servers=3, lots={"L-U": 3}, gpus_per_server=1)
    # PCIe-2 never had a card: blacklisted on the bench of one server.
    quality_rig.fail(fleet.servers[0], connector="PCIe-2", stage="bench")

    row = _row("positions", fleet.position_key("PCIe-2"))
    assert (row.units, row.in_service, row.failures, row.unit_years) == (1, 0, 1, 0.0)


def test_moving_an_attribution_from_component_to_connector_moves_the_counts():
    fleet = quality_rig.fleet(servers=8, lots={"L-M": 8})
    attributions = [
        quality_rig.fail(server, component=gpu, connector="PCIe-1")
        for server, gpu in zip(fleet.servers[:3], fleet.gpus, strict=False)
    ]
    assert _row("lots", fleet.lot_key("L-M")).failures == 3
    assert _row("positions", fleet.position_key("PCIe-1")).failures == 0

    Attribution.objects.filter(pk=attributions[0].pk).update(cause="connector")

    assert _row("lots", fleet.lot_key("L-M")).failures == 2
    assert _row("positions", fleet.position_key("PCIe-1")).failures == 1
    assert list(selectors.evidence("positions", fleet.position_key("PCIe-1"))) == [attributions[0]]
    assert set(selectors.evidence("lots", fleet.lot_key("L-M"))) == set(attributions[1:])


def test_evidence_and_failures_by_month():
    fleet = quality_rig.fleet(servers=8, lots={"L-E": 8})
    march = datetime(2026, 3, 5, tzinfo=UTC)
    quality_rig.fail(fleet.servers[0], component=fleet.gpus[0], occurred_at=march)
    quality_rig.fail(
        fleet.servers[1], component=fleet.gpus[1], occurred_at=march + timedelta(days=3), stage="claim"
    )
    quality_rig.fail(fleet.servers[2], component=fleet.gpus[2], occurred_at=datetime(2026, 5, 20, tzinfo=UTC))
    quality_rig.fail(fleet.servers[3], connector="PCIe-1", stage="bench", occurred_at=march)
    key = fleet.lot_key("L-E")

    months = selectors.failures_by_month("lots", [key, "999999:none", "broken"])
    assert months == {key: [(date(2026, 3, 1), 2), (date(2026, 5, 1), 1)], "999999:none": [], "broken": []}
    positions = selectors.failures_by_month("positions", [fleet.position_key("PCIe-1")])
    assert positions == {fleet.position_key("PCIe-1"): [(date(2026, 3, 1), 1)]}

    evidence = list(selectors.evidence("lots", key))
    assert [each.component for each in evidence] == [fleet.gpus[2], fleet.gpus[1], fleet.gpus[0]]
    assert evidence[1].claim is not None and evidence[0].finding is not None
    assert list(selectors.evidence("lots", "nonsense")) == []


def test_malformed_keys_and_kinds():
    assert selectors.quality_row("lots", "x:y") is None
    assert selectors.quality_row("parts", "abc") is None
    assert selectors.quality_row("positions", "12") is None
    assert selectors.quality_row("parts", "²") is None  # a digit, but not an ASCII one
    assert selectors.quality_row("lots", "99999999999999999999:L-1") is None  # beyond any key
    assert selectors.quality_row("lots", "1:L\x00") is None
    with pytest.raises(ValueError, match="unknown quality table"):
        selectors.quality_rows("racks")


@pytest.mark.parametrize(("kind", "queries"), [("lots", 1), ("suppliers", 1), ("parts", 1), ("positions", 2)])
def test_a_fixed_number_of_queries(django_assert_num_queries, kind, queries):
    small = quality_rig.fleet(servers=2, lots={"L-S": 2})
    quality_rig.fail(small.servers[0], component=small.gpus[0], connector="PCIe-1")
    with django_assert_num_queries(queries):
        few = selectors.quality_rows(kind)
    big = quality_rig.fleet(servers=10, lots={"L-B1": 10, "L-B2": 10}, gpus_per_server=2)
    for server, gpu in zip(big.servers, big.gpus, strict=False):
        quality_rig.fail(
            server, component=gpu, connector="PCIe-2", cause="component" if gpu.pk % 2 else "connector"
        )
    with django_assert_num_queries(queries):
        many = selectors.quality_rows(kind)
    assert len(many) > len(few) or kind == "suppliers"
    with django_assert_num_queries(queries):
        selectors.quality_row(kind, many[0].key)
    with django_assert_num_queries(1 + (kind == "positions")):
        selectors.failures_by_month(kind, [row.key for row in many])
    with django_assert_num_queries(1):
        for each in selectors.evidence(kind, many[0].key):
            _ = (
                each.server.asset_tag,
                each.finding and each.finding.run,
                each.claim,
                each.component,
                each.connector,
            )


def test_quality_tables_gives_every_table_from_three_queries(django_assert_num_queries):
    fleet = quality_rig.fleet(servers=8, lots={"L-Q1": 6, "L-Q2": 2}, gpus_per_server=1)
    quality_rig.fail(fleet.servers[0], component=fleet.gpus[0], stage="burn_in")
    quality_rig.fail(fleet.servers[7], component=fleet.gpus[7], connector="PCIe-1", stage="claim")
    quality_rig.fail(fleet.servers[1], connector="PCIe-2", stage="bench")
    with django_assert_num_queries(3):
        tables = selectors.quality_tables(now=NOW)
    assert list(tables) == ["lots", "suppliers", "parts", "positions"]
    for kind, rows in tables.items():
        assert rows == selectors.quality_rows(kind, now=NOW), kind
    assert [row.key for row in tables["lots"]] == [fleet.lot_key("L-Q2"), fleet.lot_key("L-Q1")]  # 1/2 > 1/6
