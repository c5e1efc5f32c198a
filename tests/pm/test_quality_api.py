"""GET /api/v1/quality/{lots,suppliers,parts,positions}/ and /api/v1/quality/<kind>/<key>/: the fleet's
failure rates, PMs only (anyone else: an empty list, a 404 for a row), read-only, keys with ':' in the URL,
a fixed number of queries whatever the fleet."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.pm import quality_rig
from tests.tenants_rig import api_client

pytestmark = pytest.mark.django_db

ROW_FIELDS = {
    "key",
    "label",
    "category",
    "units",
    "in_service",
    "unit_years",
    "failures",
    "by_stage",
    "rate",
    "low",
    "high",
    "threshold",
    "min_units",
    "flagged",
}


@pytest.fixture
def flagged():
    """Lot L-2291: 3 of 8 failed (two burn-in fails, one claim); PCIe-2 failed on two of the servers."""
    fleet = quality_rig.fleet(servers=8, lots={"L-2291": 8})
    quality_rig.fail(fleet.servers[0], component=fleet.gpus[0], stage="burn_in")
    quality_rig.fail(fleet.servers[1], component=fleet.gpus[1], stage="burn_in")
    quality_rig.fail(fleet.servers[2], component=fleet.gpus[2], stage="claim")
    quality_rig.fail(fleet.servers[3], connector="PCIe-2", stage="bench")
    quality_rig.fail(fleet.servers[4], connector="PCIe-2", stage="bench")
    return fleet


def _rows(user, kind):
    response = api_client(user).get(f"/api/v1/quality/{kind}/")
    assert response.status_code == 200, response.content
    return {row["key"]: row for row in response.json()["results"]}


def test_a_pm_lists_the_lots_with_their_figures(tenants, flagged):
    rows = _rows(tenants.pm, "lots")
    row = rows[flagged.lot_key("L-2291")]
    assert set(row) == ROW_FIELDS
    assert (row["units"], row["in_service"], row["failures"], row["flagged"]) == (8, 8, 3, True)
    assert row["by_stage"] == {"bench": 0, "burn_in": 2, "field": 0, "claim": 1}
    assert round(row["low"] * 100, 1) == 13.7 and round(row["high"] * 100, 1) == 69.4
    assert (row["rate"], row["threshold"], row["min_units"], row["category"]) == (0.375, 0.05, 8, "gpu")
    assert row["label"] == f"Lot L-2291 of {flagged.part.name}"


@pytest.mark.parametrize("kind", ["lots", "suppliers", "parts", "positions"])
def test_every_table_lists_for_a_pm(tenants, flagged, kind):
    rows = _rows(tenants.pm, kind)
    assert rows and all(set(row) == ROW_FIELDS for row in rows.values())


def test_positions_and_their_evidence(tenants, flagged):
    key = flagged.position_key("PCIe-2")
    row = _rows(tenants.pm, "positions")[key]
    assert (row["units"], row["failures"], row["category"], row["min_units"]) == (2, 2, "connector", 4)

    response = api_client(tenants.pm).get(f"/api/v1/quality/positions/{quote(key)}/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert {entry["server_asset_tag"] for entry in body["evidence"]} == {
        flagged.servers[3].asset_tag,
        flagged.servers[4].asset_tag,
    }
    assert {entry["connector_name"] for entry in body["evidence"]} == {"PCIe-2"}


def test_a_row_with_its_evidence(tenants, flagged):
    key = flagged.lot_key("L-2291")
    response = api_client(tenants.pm).get(f"/api/v1/quality/lots/{key}/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == ROW_FIELDS | {"evidence"}
    assert body["key"] == key and body["failures"] == 3
    evidence = {entry["component_serial"]: entry for entry in body["evidence"]}
    assert set(evidence) == {gpu.serial for gpu in flagged.gpus[:3]}
    claim = evidence[flagged.gpus[2].serial]
    assert (claim["stage"], claim["cause"], claim["confirmed"]) == ("claim", "component", False)
    assert claim["claim_number"].startswith("RMA-") and claim["finding_code"] is None
    fail = evidence[flagged.gpus[0].serial]
    assert fail["finding_code"] == "gpu_xid_errors" and fail["run"] is not None
    assert fail["server_asset_tag"] == flagged.servers[0].asset_tag


def test_unknown_and_malformed_keys_are_404(tenants, flagged):
    for url in (
        f"/api/v1/quality/lots/{flagged.part.pk}:NOPE/",
        "/api/v1/quality/lots/nonsense/",
        "/api/v1/quality/parts/abc/",
        "/api/v1/quality/positions/99999:PCIe-1/",
    ):
        assert api_client(tenants.pm).get(url).status_code == 404, url


def test_nobody_else_sees_the_rates(tenants, flagged):
    key = flagged.lot_key("L-2291")
    for user in (tenants.user_a, tenants.user_p, tenants.user_b, tenants.outsider):
        for kind in ("lots", "suppliers", "parts", "positions"):
            assert _rows(user, kind) == {}, (user.username, kind)
        assert api_client(user).get(f"/api/v1/quality/lots/{key}/").status_code == 404, user.username
    assert api_client(None).get("/api/v1/quality/lots/").status_code in (401, 403)


def test_read_only(tenants, flagged):
    key = flagged.lot_key("L-2291")
    client = api_client(tenants.pm)
    assert client.post("/api/v1/quality/lots/", {}, format="json").status_code == 405
    assert client.delete(f"/api/v1/quality/lots/{key}/").status_code == 405
    assert client.patch(f"/api/v1/quality/lots/{key}/", {}, format="json").status_code == 405


def test_a_fixed_number_of_queries(tenants, django_assert_num_queries):
    client = api_client(tenants.pm)
    small = quality_rig.fleet(servers=2, lots={"L-S": 2})
    quality_rig.fail(small.servers[0], component=small.gpus[0])
    # The PM check (cached on the user after the first request), then the fleet's tables
    # (pm/quality/cache.py): its fingerprint's two queries, and when that changed the tables' three.
    client.get("/api/v1/quality/lots/")
    with django_assert_num_queries(2):
        assert client.get("/api/v1/quality/lots/").status_code == 200
    big = quality_rig.fleet(servers=10, lots={"L-B1": 10, "L-B2": 10}, gpus_per_server=2)
    for server, gpu in zip(big.servers, big.gpus, strict=False):
        quality_rig.fail(server, component=gpu)
    with django_assert_num_queries(5):
        body = client.get("/api/v1/quality/lots/").json()
    # Not the tables kept before: the new lots' failures are counted.
    rows = {row["key"]: row for row in body["results"]}
    assert rows[big.lot_key("L-B1")]["failures"] + rows[big.lot_key("L-B2")]["failures"] == 10
    with django_assert_num_queries(2):
        assert client.get("/api/v1/quality/lots/").status_code == 200
    with django_assert_num_queries(2):  # the row's one, its evidence one
        assert client.get(f"/api/v1/quality/lots/{big.lot_key('L-B1')}/").status_code == 200


def test_a_pms_correction_moves_the_counts_at_once(tenants):
    """The tables are kept between requests (pm/quality/cache.py), yet a PM's correction of an attribution
    through the API moves its failure from the card's lot to the connector's position on the next read,
    with its audit row."""
    from werkbank.models import AuditEvent

    fleet = quality_rig.fleet(servers=2, lots={"L-M": 2})
    server, card = fleet.servers[0], fleet.installed[fleet.servers[0].pk][0]
    row = quality_rig.fail(server, component=card, stage="burn_in")
    connector = card.installations.get().connector
    assert _rows(tenants.pm, "lots")[fleet.lot_key("L-M")]["failures"] == 1
    position = fleet.position_key(connector.name)
    assert _rows(tenants.pm, "positions")[position]["failures"] == 0

    response = api_client(tenants.pm).post(
        f"/api/v1/warranty/attributions/{row.pk}/attribute/",
        {"cause": "connector", "connector": connector.pk, "note": "Trained x16 in another slot."},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert _rows(tenants.pm, "lots")[fleet.lot_key("L-M")]["failures"] == 0
    assert _rows(tenants.pm, "positions")[position]["failures"] == 1
    event = AuditEvent.objects.for_object(row).get(verb="attribution.correct")
    assert event.actor == tenants.pm


def test_a_saved_attribution_bumps_the_generation_of_the_kept_tables():
    """A rule's re-proposal changes a cause in place (no new row, no confirmation): the generation in the
    fingerprint moves all the same, on Redis as in memory."""
    from pm.quality.cache import bump_generation, fingerprint

    before = fingerprint()
    bump_generation()
    bumped = fingerprint()
    bump_generation()
    assert before[-1] != bumped[-1] != fingerprint()[-1]
    assert isinstance(fingerprint()[-1], int)
