"""The PM's quality page (/pm/quality/), its evidence pages and its CSV: PMs only; four tables ranked by the
lower bound with the Wilson interval and a visible flag; each row's attributions; the chart of failures per
lot with its text alternative; filters; in German too; a fixed number of queries."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from tests.pm import quality_rig

pytestmark = pytest.mark.django_db

URL = "/pm/quality/"


def _client(user: Any, *, language: str = "en") -> Client:
    client = Client()
    client.force_login(user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    return client


def _at(month: int, day: int = 2) -> datetime:
    return datetime(2026, month, day, 8, 0, tzinfo=UTC)


@pytest.fixture
def fleet(tenants):
    """Sixteen servers with one GPU each: lot L-2291 in servers 1-8 with two burn-in fails and a claim (3 of
    8, flagged), lot L-2292 in servers 9-16 with one field failure (1 of 8, not flagged), and a connector
    blacklisted on the bench on server 10."""
    built = quality_rig.fleet(servers=16, lots={"L-2291": 8, "L-2292": 8})
    bad, good = built.lot("L-2291"), built.lot("L-2292")
    server_of = {gpu.pk: server for server in built.servers for gpu in built.installed[server.pk]}
    built.failed = [
        quality_rig.fail(server_of[bad[0].pk], component=bad[0], stage="burn_in", occurred_at=_at(2)),
        quality_rig.fail(server_of[bad[1].pk], component=bad[1], stage="burn_in", occurred_at=_at(3)),
        quality_rig.fail(server_of[bad[2].pk], component=bad[2], stage="claim", occurred_at=_at(3, 20)),
        quality_rig.fail(server_of[good[0].pk], component=good[0], stage="field", occurred_at=_at(4)),
    ]
    built.blacklisted = quality_rig.fail(
        built.servers[9], connector="PCIe-1", stage="bench", occurred_at=_at(4)
    )
    return built


def _section(html: str, kind: str) -> str:
    return html.split(f'data-kind="{kind}"', 1)[1].split("</section>", 1)[0]


def _row(html: str, key: str) -> str:
    return html.split(f'data-row="{key}"', 1)[1].split("</tr>", 1)[0]


def test_only_pms_open_the_page_the_evidence_and_the_csv(client, tenants, fleet):
    urls = (URL, f"{URL}lots/{fleet.lot_key('L-2291')}/", f"{URL}lots.csv")
    for url in urls:
        assert client.get(url).status_code == 302, url  # anonymous: the login page
        for user in (tenants.user_a, tenants.user_p, tenants.outsider):
            assert _client(user).get(url).status_code == 404, (url, user.username)
        assert _client(tenants.pm).get(url).status_code == 200, url


def test_the_lots_are_ranked_by_lower_bound_with_interval_and_flag(tenants, fleet):
    response = _client(tenants.pm).get(URL)
    html = response.content.decode()
    lots = _section(html, "lots")
    flagged, clear = fleet.lot_key("L-2291"), fleet.lot_key("L-2292")
    assert lots.index(f'data-row="{flagged}"') < lots.index(f'data-row="{clear}"')

    bad = _row(lots, flagged)
    assert f'href="/pm/quality/lots/{flagged}/"' in bad and "Lot L-2291 of" in bad
    assert '<td class="num">8</td>' in bad  # units, and all of them in service
    assert "13.7–69.4 %" in bad and "37.5 %" in bad
    assert "⚑ flagged" in bad  # a word, not a colour alone
    assert "Burn-in 2" in bad and "Claim 1" in bad and "Field 0" in bad and "Bench 0" in bad

    good = _row(lots, clear)
    assert "2.2–47.1 %" in good and "12.5 %" in good
    assert 'data-flag="clear"' in good and "not flagged" in good and "⚑" not in good

    # The other tables: the supplier and the part with 4 of 16, the connector position with its bench failure.
    assert "25.0 %" in _row(_section(html, "suppliers"), fleet.supplier_key())
    assert "25.0 %" in _row(_section(html, "parts"), str(fleet.part.pk))
    position = _row(_section(html, "positions"), fleet.position_key("PCIe-1"))
    assert "PCIe-1 on 7U GPU chassis" in position and "Bench 1" in position and "1.1–28.3 %" in position
    # The menu leads here.
    assert f'href="{URL}"' in html.split("</nav>", 1)[0]


def test_the_chart_draws_the_failed_lots_per_month_with_a_table_beside_it(tenants, fleet):
    response = _client(tenants.pm).get(URL)
    chart = response.content.decode().split('id="quality-chart"', 1)[1]
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in chart and 'role="img"' in chart
    assert chart.count('<g class="series"') == 2
    assert "2026-02" in chart and "2026-04" in chart
    table = response.context["chart"]["table"]
    assert [(month.isoformat(), counts) for month, counts in table] == [
        ("2026-02-01", [1, 0]),
        ("2026-03-01", [2, 0]),
        ("2026-04-01", [0, 1]),
    ]
    assert '<th scope="row" class="nw">2026-03</th><td class="num">2</td><td class="num">0</td>' in chart


def test_the_evidence_page_lists_the_attributions_of_a_row(tenants, fleet):
    key = fleet.lot_key("L-2291")
    response = _client(tenants.pm).get(f"{URL}lots/{key}/")
    html = response.content.decode()
    assert response.context["total"] == 3
    assert [a.pk for a in response.context["attributions"]] == [a.pk for a in reversed(fleet.failed[:3])]
    first, _, claim = fleet.failed[:3]
    row = html.split(f'data-attribution="{first.pk}"', 1)[1].split("</tr>", 1)[0]
    assert "2026-02-02" in row and "Burn-in" in row and "Component" in row and "proposed" in row
    assert f'href="/burnin/runs/{first.finding.run_id}/"' in row and "gpu_xid_errors" in row
    assert f'href="/bench/servers/{first.server_id}/"' in row and first.server.hostname in row
    assert first.component.serial in row and "L-2291" in row
    assert f'href="/admin/warranty/attribution/{first.pk}/change/"' in row  # where a PM corrects it
    row = html.split(f'data-attribution="{claim.pk}"', 1)[1].split("</tr>", 1)[0]
    assert (
        claim.claim.number in row and f'href="/admin/warranty/warrantyclaim/{claim.claim_id}/change/"' in row
    )
    assert "13.7–69.4 %" in html and "⚑ flagged" in html.split("</h1>", 1)[0]
    # A connector position's evidence: the blacklisting on the bench.
    position = _client(tenants.pm).get(f"{URL}positions/{fleet.position_key('PCIe-1')}/").content.decode()
    assert (
        f'data-attribution="{fleet.blacklisted.pk}"' in position
        and "connector PCIe-1 blacklisted" in position
    )


def test_a_row_or_table_that_does_not_exist_is_a_404(tenants, fleet):
    client = _client(tenants.pm)
    assert client.get(f"{URL}lots/{fleet.part.pk}:L-NONE/").status_code == 404
    assert client.get(f"{URL}lots/not-a-key/").status_code == 404
    assert client.get(f"{URL}racks/1/").status_code == 404
    assert client.get(f"{URL}racks.csv").status_code == 404
    assert client.get(f"{URL}lots/{fleet.part.pk}:L%00/").status_code == 400  # no 500 from the database


def test_the_csv_has_every_column_with_decimal_points(tenants, fleet):
    for language in ("en", "de"):
        response = _client(tenants.pm, language=language).get(f"{URL}lots.csv")
        assert response["Content-Type"] == "text/csv; charset=utf-8"
        assert 'filename="quality-lots-' in response["Content-Disposition"]
        rows = list(csv.DictReader(io.StringIO(response.content.decode())))
        assert [row["key"] for row in rows] == [fleet.lot_key("L-2291"), fleet.lot_key("L-2292")]
        bad = rows[0]
        assert (bad["units"], bad["in_service"], bad["failures"]) == ("8", "8", "3")
        assert (bad["failures_burn_in"], bad["failures_claim"], bad["failures_field"]) == ("2", "1", "0")
        assert (bad["rate"], bad["low"], bad["threshold"], bad["flagged"]) == (
            "0.375000",
            "0.136844",
            "0.050000",
            "true",
        )
        assert float(bad["high"]) == pytest.approx(0.6942, abs=1e-4)
        assert float(bad["unit_years"]) > 0 and "," not in bad["unit_years"]
        assert rows[1]["flagged"] == "false" and rows[1]["low"] == "0.022417"
    header = _client(tenants.pm).get(f"{URL}positions.csv").content.decode().splitlines()[0]
    assert header.startswith("kind,key,label,category,units,in_service,unit_years,failures,failures_bench,")


def test_filters_keep_the_flagged_rows_and_a_category(tenants, fleet):
    client = _client(tenants.pm)
    response = client.get(URL, {"flagged": "1"})
    sections = {
        section["kind"]: [shown.row.key for shown in section["rows"]]
        for section in response.context["sections"]
    }
    assert sections == {
        "lots": [fleet.lot_key("L-2291")],
        "suppliers": [fleet.supplier_key()],
        "parts": [str(fleet.part.pk)],
        "positions": [],
    }
    csv_rows = list(
        csv.DictReader(io.StringIO(client.get(f"{URL}lots.csv", {"flagged": "1"}).content.decode()))
    )
    assert [row["key"] for row in csv_rows] == [fleet.lot_key("L-2291")]
    response = client.get(URL, {"category": "memory"})
    assert [section["rows"] for section in response.context["sections"][:3]] == [[], [], []]
    assert len(response.context["sections"][3]["rows"]) == 1  # positions have no part category


def test_a_filter_the_page_does_not_know_is_a_400_naming_it(tenants, fleet):
    client = _client(tenants.pm)
    response = client.get(URL, {"category": "gpus"})
    assert response.status_code == 400
    assert "The filter “category” has a value the page does not know." in response.content.decode()
    assert client.get(URL, {"flagged": "yes"}).status_code == 400
    assert client.get(f"{URL}lots.csv", {"category": "gpus"}).status_code == 400


def test_the_page_speaks_german(tenants, fleet):
    response = _client(tenants.pm, language="de").get(URL)
    assert response.status_code == 200 and response["Content-Language"] == "de"
    html = response.content.decode()
    for heading in ("Flottenqualität", "Fertigungslose", "Lieferanten", "Anschlusspositionen", "Ausfallrate"):
        assert heading in html, heading
    assert "95-%-Intervall" in html and "⚑ markiert" in html and "13,7–69,4 %" in html
    assert "Failure rate" not in html and "Connector positions" not in html


def test_the_page_costs_a_fixed_number_of_queries(tenants, django_assert_num_queries):
    small = quality_rig.fleet(servers=2, lots={"L-1": 2})
    quality_rig.fail(small.servers[0], component=small.gpus[0], stage="burn_in")
    client = _client(tenants.pm)
    client.get(URL)  # the session and the user are read once the same way each time
    with django_assert_num_queries(WARM):
        assert client.get(URL).status_code == 200
    big = quality_rig.fleet(servers=12, lots={"L-2": 6, "L-3": 6})
    for gpu in big.gpus[:7]:
        server = next(s for s in big.servers if gpu in big.installed[s.pk])
        quality_rig.fail(server, component=gpu, stage="claim")
    quality_rig.fail(big.servers[3], connector="PCIe-1", stage="bench")
    with django_assert_num_queries(COLD):
        page = client.get(URL)
    assert page.status_code == 200
    # The tables kept for the small fleet were not shown again: the new failures are on the page.
    assert "L-2" in page.content.decode()
    with django_assert_num_queries(WARM):
        assert client.get(URL).status_code == 200


#: Session, user and the PM check (3), the fingerprint of the fleet's tables (2, pm/quality/cache.py), the
#: chart of the worst lots (1); when the fingerprint changed, the tables too: lots, suppliers and parts in one
#: query, the positions in two.
WARM = 3 + 2 + 1
COLD = WARM + 1 + 2


def test_the_evidence_page_costs_a_fixed_number_of_queries(tenants, fleet, django_assert_num_queries):
    client = _client(tenants.pm)
    url = f"{URL}lots/{fleet.lot_key('L-2291')}/"
    client.get(url)
    # Session, user, PM check (3); the row (1); the count and the page of attributions, joined (2).
    with django_assert_num_queries(6):
        assert client.get(url).context["total"] == 3
    bad = fleet.lot("L-2291")
    for gpu in bad[3:6]:
        server = next(server for server in fleet.servers if gpu in fleet.installed[server.pk])
        quality_rig.fail(server, component=gpu, stage="claim")
    with django_assert_num_queries(6):
        assert client.get(url).context["total"] == 6
