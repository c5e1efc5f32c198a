"""The warranty API: lookup by serial, claims through their POST actions, the hand-over by asset tag."""

from __future__ import annotations

import pytest

from builds.choices import ServerStatus
from tests.builds.bench_rig import GPUS_L1
from tests.tenants_rig import api_client
from tests.warranty.handover_rig import INSTALLED, SPARE_GPU, ready_pack, recommission
from warranty.models import WarrantyRecord

pytestmark = pytest.mark.django_db


def test_lookup_by_serial_finds_only_the_customers_own(handed):
    a = api_client(handed.t.user_a)
    rows = a.get("/api/v1/warranty/records/", {"serial": GPUS_L1[0].lower()}).json()["results"]
    assert [row["serial"] for row in rows] == [GPUS_L1[0]]
    assert rows[0]["end_date"] and rows[0]["term_months"] == handed.server.order.warranty_months
    for user in (handed.t.user_b, handed.t.user_p, handed.t.outsider):
        assert (
            api_client(user).get("/api/v1/warranty/records/", {"serial": GPUS_L1[0]}).json()["results"] == []
        )
        assert api_client(user).get(f"/api/v1/warranty/records/{rows[0]['id']}/").status_code == 404
    assert a.get("/api/v1/warranty/records/", {"serial": "NO-SUCH"}).json()["count"] == 0


def test_record_list_query_count_is_flat(handed, django_assert_max_num_queries):
    with django_assert_max_num_queries(8):
        response = api_client(handed.t.user_a).get("/api/v1/warranty/records/")
    assert response.json()["count"] == len(INSTALLED) + 1


def test_claim_path_through_the_api(handed):
    a, pm = api_client(handed.t.user_a), api_client(handed.t.pm)
    record = WarrantyRecord.objects.get(serial=GPUS_L1[0])
    opened = a.post("/api/v1/warranty/claims/", {"record": record.pk, "description": "Xid 79"}, format="json")
    assert opened.status_code == 201, opened.json()
    claim = opened.json()
    assert claim["status"] == "open" and "opened_by" not in claim  # a login name: PMs only
    again = a.post("/api/v1/warranty/claims/", {"record": record.pk, "description": "again"}, format="json")
    assert again.status_code == 409 and claim["number"] in again.json()["detail"]
    url = f"/api/v1/warranty/claims/{claim['id']}"
    assert a.post(f"{url}/approve/", {}, format="json").status_code == 403
    assert pm.post(f"{url}/close/", {}, format="json").status_code == 409
    assert pm.post(f"{url}/approve/", {"note": "ok"}, format="json").json()["status"] == "approved"
    spare = handed.component(SPARE_GPU)
    shipped = pm.post(f"{url}/ship-replacement/", {"component": spare.pk, "note": "UPS"}, format="json")
    assert shipped.status_code == 200, shipped.json()
    recommission(handed.server, spare)  # a GPU: the claim closes once the new card passed post-repair
    assert pm.post(f"{url}/close/", {}, format="json").json()["status"] == "closed"
    new = a.get("/api/v1/warranty/records/", {"serial": SPARE_GPU}).json()["results"][0]
    old = a.get(f"/api/v1/warranty/records/{record.pk}/").json()
    assert (new["replaces"], new["replaces_serial"]) == (record.pk, GPUS_L1[0])
    assert (old["replaced_by"], old["replaced_by_serial"]) == (new["id"], SPARE_GPU)
    assert new["end_date"] == old["end_date"]
    # The customer sees the decision and the registration of the replacement in its name.
    assert a.get(f"{url}/").json()["decision_note"] == "ok"
    regs = a.get("/api/v1/warranty/registrations/", {"q": SPARE_GPU}).json()["results"]
    assert [row["customer_name"] for row in regs] == [handed.t.customer_a.name]


def test_reject_needs_a_note(handed):
    record = WarrantyRecord.objects.get(serial=GPUS_L1[1])
    claim = (
        api_client(handed.t.user_a)
        .post("/api/v1/warranty/claims/", {"record": record.pk, "description": "noise"}, format="json")
        .json()
    )
    pm = api_client(handed.t.pm)
    assert pm.post(f"/api/v1/warranty/claims/{claim['id']}/reject/", {}, format="json").status_code == 400
    rejected = pm.post(f"/api/v1/warranty/claims/{claim['id']}/reject/", {"note": "in spec"}, format="json")
    assert rejected.json()["status"] == "rejected"


def test_hand_over_through_the_api_lists_what_is_missing(world):
    pm = api_client(world.t.pm)
    server = world.bench.other_server  # deployed, no pack yet
    state = pm.get(f"/api/v1/handover/servers/{server.asset_tag}/").json()
    assert state["ready"] is False and len(state["missing"]) == 1
    refused = pm.post(f"/api/v1/handover/servers/{server.asset_tag}/hand-over/", {}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "handover_incomplete"
    ready_pack(server)
    done = pm.post(
        f"/api/v1/handover/servers/{server.asset_tag}/hand-over/", {"note": "signed"}, format="json"
    )
    assert done.status_code == 200, done.json()
    assert done.json()["handed_over"] is True and done.json()["status"] == ServerStatus.HANDED_OVER
    assert (
        api_client(world.t.user_a)
        .post(f"/api/v1/handover/servers/{world.server.asset_tag}/hand-over/", {}, format="json")
        .status_code
        == 403
    )
