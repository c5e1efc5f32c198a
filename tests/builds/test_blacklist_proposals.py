"""Flagged connector positions proposed for blacklisting on the bench (issue #29, "Back into procurement").

The apps above (pm.quality) register a source in `builds.proposals`; here a test source stands in for it,
registered for one test and removed after it.
"""

from __future__ import annotations

import pytest

from builds import proposals
from builds.choices import ServerStatus
from builds.models import ChassisLayout, Server
from builds.services import connector_blacklist
from tests.builds.bench_page_rig import logged_in, make_build, page_of

pytestmark = pytest.mark.django_db

HEADING = "Proposed for blacklisting on new builds of this layout"
SENTENCE = "GPU3 of this layout: 2 of 4 servers failed there (95 % interval 15.0–85.0 %)."


@pytest.fixture
def asked():
    """A source proposing GPU3 of every layout, and the layouts it was asked about; unregistered after."""
    layouts: list[ChassisLayout] = []

    def source(layout: ChassisLayout) -> dict[str, str]:
        layouts.append(layout)
        return {"GPU3": SENTENCE, "NO-SUCH-CONNECTOR": "Not on this server."}

    proposals.register_blacklist_proposals(source)
    proposals.register_blacklist_proposals(source)  # idempotent: ready() may run twice
    assert proposals._sources.count(source) == 1
    yield layouts
    proposals._sources.remove(source)


def _proposals_section(html: str) -> str:
    start = html.index('id="blacklist-proposals"')
    return html[start : html.index("</div>", start)]


def test_the_bench_page_proposes_a_flagged_connector_of_the_layout(tenants, asked):
    build = make_build(tenants)
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    section = _proposals_section(html)
    assert HEADING in section
    assert '<li data-connector="GPU3"><strong>GPU3</strong>: ' in section
    assert "2 of 4 servers failed there" in section
    # Only the server's own connectors are proposed; the layout asked is the server's chassis layout.
    assert "NO-SUCH-CONNECTOR" not in html
    assert [layout.chassis.mpn for layout in asked] == ["KT-4GPU-1652"]
    # The partner decides with the bench's own form, which offers the connector.
    assert 'id="blacklist-form"' in html and '<option value="GPU3">GPU3</option>' in html
    assert proposals.blacklist_proposals(asked[0]) == {
        "GPU3": SENTENCE,
        "NO-SUCH-CONNECTOR": "Not on this server.",
    }


def test_the_proposal_speaks_german(tenants, asked):
    build = make_build(tenants)
    client = logged_in(tenants.user_p)
    client.cookies["django_language"] = "de"
    section = _proposals_section(client.get(page_of(build.server)).content.decode())
    assert "Vorgeschlagen zum Sperren bei neuen Aufbauten dieses Layouts" in section
    assert "GPU3" in section


def test_no_proposal_for_a_server_past_the_bench(tenants, asked):
    build = make_build(tenants)
    Server.objects.filter(pk=build.server.pk).update(status=ServerStatus.BURN_IN)
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert HEADING not in html and 'id="blacklist-proposals"' not in html
    assert asked == []  # not even asked: a server past the bench costs no query for it


def test_a_server_back_for_rework_is_proposed_again(tenants, asked):
    build = make_build(tenants)
    Server.objects.filter(pk=build.server.pk).update(status=ServerStatus.BURN_IN_FAILED)
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert '<li data-connector="GPU3">' in _proposals_section(html)


def test_no_proposal_for_a_connector_already_blacklisted(tenants, asked):
    build = make_build(tenants)
    connector_blacklist(
        connector=build.server.connectors.get(name="GPU3"), actor=tenants.user_p, reason="x8 on the bench"
    )
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert HEADING not in html
    assert "x8 on the bench" in html  # it stands in the blacklist instead


def test_nothing_registered_nothing_shown(tenants):
    build = make_build(tenants)
    assert proposals.bench_proposals(build.server, []) == []
    html = logged_in(tenants.user_p).get(page_of(build.server)).content.decode()
    assert HEADING not in html


def test_another_partner_and_a_customer_do_not_reach_the_page(tenants, asked):
    build = make_build(tenants)
    for user in (tenants.user_q, tenants.user_a):
        assert logged_in(user).get(page_of(build.server)).status_code == 404
    assert asked == []


def test_two_sources_on_one_connector_give_both_sentences(tenants, asked):
    build = make_build(tenants)

    def second(layout: ChassisLayout) -> dict[str, str]:
        return {"GPU3": "Two burn-in fails at x8."}

    proposals.register_blacklist_proposals(second)
    try:
        layout = proposals.server_layout(build.server)
        assert layout is not None
        assert proposals.blacklist_proposals(layout)["GPU3"] == f"{SENTENCE} Two burn-in fails at x8."
    finally:
        proposals._sources.remove(second)
