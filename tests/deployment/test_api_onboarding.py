"""A server's way into production through the API: its deployment state by asset tag, the PM's deploy, and
the append-only platform listings of deployed servers."""

from __future__ import annotations

import pytest

from builds.choices import ServerStatus
from builds.models import Server
from deployment.models import PlatformListing
from deployment.services import listing_record, network_set
from tests.deployment.api_rig import ids, make_rig
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

LISTINGS = "/api/v1/platform-listings/"


def _state_url(server) -> str:
    return f"/api/v1/deployment/servers/{server.asset_tag}/"


def _network(r, server, n: int):
    return network_set(
        server=server,
        actor=r.t.pm,
        management_ip=f"10.0.0.{n}",
        bmc_ip=f"10.1.0.{n}",
        bmc_mac=f"3c:ec:ef:00:00:{n:02x}",
        bmc_password="s3cret-quokka",
    )


def _deployed(server) -> Server:
    Server.objects.filter(pk=server.pk).update(status=ServerStatus.DEPLOYED)
    server.refresh_from_db()
    return server


# --- deployment state and deploy -------------------------------------------------------------------------


def test_the_state_says_what_is_missing(tenants):
    r = make_rig(tenants)
    state = r.get(r.t.user_a, _state_url(r.a2)).json()
    assert (state["asset_tag"], state["hostname"], state["status"]) == (
        r.a2.asset_tag,
        r.a2.hostname,
        "burn_in_passed",
    )
    assert (state["ready"], state["deployed"], state["placement"], state["network"], state["listing"]) == (
        False,
        False,
        None,
        None,
        None,
    )
    assert state["missing"] == [
        f"Server {r.a2.hostname} has no rack placement.",
        f"Server {r.a2.hostname} has no network record (management IP, BMC IP and BMC MAC).",
    ]

    _network(r, r.a1, 11)
    state = r.get(r.t.user_p, _state_url(r.a1)).json()
    assert (state["ready"], state["missing"]) == (True, [])
    assert state["placement"] == {
        "id": r.place_a1.pk,
        "rack": r.rack.pk,
        "rack_name": "R1",
        "site_name": "Sofia Colo 1",
        "lowest_u": 10,
        "top_u": 15,
        "face": "front",
        "feeds": [{"id": r.feed_a.pk, "name": "PDU-A"}, {"id": r.feed_b.pk, "name": "PDU-B"}],
    }
    assert state["network"] == {
        "management_ip": "10.0.0.11",
        "bmc_ip": "10.1.0.11",
        "bmc_mac": "3c:ec:ef:00:00:0b",
        "bmc_credentials_set": True,
    }


def test_a_pm_deploys_a_ready_server(tenants):
    r = make_rig(tenants)
    url = f"{_state_url(r.a1)}deploy/"
    refused = r.post(r.t.pm, url, {"note": "go"})
    assert refused.status_code == 409, refused.content
    assert refused.json()["code"] == "deploy_missing"
    assert refused.json()["missing"] == [
        f"Server {r.a1.hostname} has no network record (management IP, BMC IP and BMC MAC)."
    ]

    _network(r, r.a1, 11)
    for user in (r.t.user_a, r.t.user_p):  # they see the server, so they are told why not
        assert r.post(user, url, {"note": "go"}).status_code == 403
    for user in (r.t.user_b, r.t.user_q, r.t.outsider):
        assert r.post(user, url, {"note": "go"}).status_code == 404
    r.a1.refresh_from_db()
    assert r.a1.status == ServerStatus.BURN_IN_PASSED

    deployed = r.post(r.t.pm, url, {"note": "racked by Ivan"})
    assert deployed.status_code == 200, deployed.content
    assert (deployed.json()["status"], deployed.json()["deployed"], deployed.json()["ready"]) == (
        "deployed",
        True,
        False,
    )
    event = AuditEvent.objects.for_object(r.a1).get(verb="deployment.deploy")
    assert (event.note, event.after["rack"]) == ("racked by Ivan", "R1")
    again = r.post(r.t.pm, url, {})
    assert again.status_code == 409


def test_another_tenants_server_state_is_a_404(tenants):
    r = make_rig(tenants)
    for user in (r.t.user_b, r.t.user_q, r.t.outsider):
        assert r.get(user, _state_url(r.a1)).status_code == 404
    assert r.get(r.t.pm, "/api/v1/deployment/servers/NO-SUCH-TAG/").status_code == 404


# --- platform listings ---------------------------------------------------------------------------------


def test_a_pm_records_listings_as_a_history(tenants):
    r = make_rig(tenants)
    _deployed(r.a1)
    body = {"server": r.a1.pk, "platform": "vast_ai", "machine_id": "41234", "reliability": "0.9950"}
    first = r.post(r.t.pm, LISTINGS, body)
    assert first.status_code == 201, first.content
    row = first.json()
    assert (
        row["hostname"],
        row["platform"],
        row["verification"],
        row["reliability"],
        row["recorded_by"],
    ) == (
        r.a1.hostname,
        "vast_ai",
        "unverified",
        "0.9950",
        "pm",
    )
    assert row["listed_on"] is not None
    second = r.post(r.t.pm, LISTINGS, {**body, "verification": "verified"})
    assert second.status_code == 201, second.content
    assert second.json()["verified_on"] is not None
    assert ids(r.get(r.t.user_a, LISTINGS, server=r.a1.pk)) == {row["id"], second.json()["id"]}
    state = r.get(r.t.user_a, _state_url(r.a1)).json()
    assert (state["listing"]["verification"], state["listing"]["machine_id"]) == ("verified", "41234")

    # Append-only: no change, no delete.
    client = api_client(r.t.pm)
    assert client.patch(f"{LISTINGS}{row['id']}/", {"note": "x"}, format="json").status_code == 405
    assert client.delete(f"{LISTINGS}{row['id']}/").status_code == 405
    assert PlatformListing.objects.count() == 2


def test_listing_bad_input(tenants):
    r = make_rig(tenants)
    body = {"server": r.a2.pk, "platform": "vast_ai", "machine_id": "41234"}
    not_deployed = r.post(r.t.pm, LISTINGS, body)
    assert not_deployed.status_code == 409 and not_deployed.json()["code"] == "not_deployed"
    _deployed(r.a2)
    no_id = r.post(r.t.pm, LISTINGS, {**body, "machine_id": ""})
    assert no_id.status_code == 400 and "machine_id" in no_id.json()
    bad = r.post(r.t.pm, LISTINGS, {**body, "reliability": "1.5"})
    assert bad.status_code == 400 and "reliability" in bad.json()
    unknown = r.post(r.t.pm, LISTINGS, {**body, "server": 999999})
    assert unknown.status_code == 404 and "server" in unknown.json()
    assert not PlatformListing.objects.exists()


def test_each_sees_the_listings_of_their_servers_and_only_pms_record(tenants):
    r = make_rig(tenants)
    mine = listing_record(server=_deployed(r.a1), actor=r.t.pm, platform="vast_ai", machine_id="1")
    theirs = listing_record(server=_deployed(r.b1), actor=r.t.pm, platform="vast_ai", machine_id="2")
    assert ids(r.get(r.t.pm, LISTINGS)) == {mine.pk, theirs.pk}
    for user in (r.t.user_a, r.t.user_p):
        assert ids(r.get(user, LISTINGS)) == {mine.pk}
    for user in (r.t.user_b, r.t.user_q):
        assert ids(r.get(user, LISTINGS)) == {theirs.pk}
    assert ids(r.get(r.t.outsider, LISTINGS)) == set()
    assert r.get(r.t.user_q, LISTINGS, server=r.a1.pk).status_code == 400
    assert r.get(r.t.user_q, f"{LISTINGS}{mine.pk}/").status_code == 404
    body = {"server": r.a1.pk, "platform": "vast_ai", "machine_id": "1"}
    for user in (r.t.user_a, r.t.user_p, r.t.user_b, r.t.outsider):
        assert r.post(user, LISTINGS, body).status_code == 403
    assert PlatformListing.objects.count() == 2


def test_the_listing_list_costs_a_fixed_number_of_queries(tenants, django_assert_max_num_queries):
    r = make_rig(tenants)
    for n in range(3):
        listing_record(server=_deployed(r.a1), actor=r.t.pm, platform="vast_ai", machine_id=f"m{n}")
    with django_assert_max_num_queries(3):  # the count, the page, the caller's organization kinds
        assert len(api_client(r.t.user_a).get(LISTINGS).json()["results"]) == 3
