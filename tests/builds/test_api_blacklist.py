"""The connector blacklist (seed 003): added with a reason and evidence, never removed, by no route at all."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, transaction

from builds.api.views import ConnectorViewSet
from builds.models import ConnectorBlacklist, Installation
from builds.services import photo_upload
from tests.builds.bench_rig import blacklist, connector_map, get, install, png, post, snapshot
from tests.tenants_rig import api_client
from werkbank.models import AuditEvent
from werkbank.urls import api_router as router

pytestmark = pytest.mark.django_db

REASON = "intermittent link training at x8"
MEASUREMENTS = {"link_width": 8, "h2d_gbps": 13.9, "expected_h2d_gbps": 27.7}


def test_blacklist_a_free_connector(bench):
    response = blacklist(
        bench, "PCIe-1", REASON, evidence="nvbandwidth under load, twice", measurements=MEASUREMENTS
    )

    assert response.status_code == 201, response.json()
    entry = response.json()["blacklist"]
    assert (entry["reason"], entry["evidence"], entry["measurements"], entry["created_by"]) == (
        REASON,
        "nvbandwidth under load, twice",
        MEASUREMENTS,
        "petr",
    )
    assert ConnectorBlacklist.objects.get(connector=bench.connector("PCIe-1")).reason == REASON
    entries = connector_map(bench)
    assert (entries["PCIe-1"]["state"], entries["PCIe-1"]["blacklist_reason"]) == ("blacklisted", REASON)
    assert get(bench.t.pm, bench.url()).json()["blacklisted_count"] == 1
    listed = get(bench.t.user_p, "/api/v1/builds/connectors/", server=bench.server.pk, blacklisted="true")
    assert [row["name"] for row in listed.json()["results"]] == ["PCIe-1"]
    assert AuditEvent.objects.filter(verb="server.blacklist_connector").get().after["connector"] == "PCIe-1"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"reason": ""}, "reason"),
        ({"reason": "x", "measurements": [1, 2]}, "measurements"),
        # Multipart, as the bench form sends it: text parsed by werkbank.jsonfields' rules (issue 16).
        ({"reason": "x", "measurements": '{"width": NaN}', "format": "multipart"}, "measurements"),
        ({"reason": "x", "measurements": "[" * 3000 + "]" * 3000, "format": "multipart"}, "measurements"),
    ],
)
def test_a_blacklist_needs_a_reason_and_measurements_as_an_object(bench, body, field):
    before = snapshot()
    body = dict(body)
    body_format = body.pop("format", "json")
    response = post(
        bench.t.user_p,
        f"/api/v1/builds/connectors/{bench.connector('PCIe-1').pk}/blacklist/",
        body,
        format=body_format,
    )
    assert response.status_code == 400
    assert field in response.json()
    assert snapshot() == before


def test_an_occupied_connector_needs_a_target(bench):
    install(bench, "GPU-L1-1", "PCIe-1")
    before = snapshot()

    response = blacklist(bench, "PCIe-1", REASON)

    assert response.status_code == 409
    assert response.json()["code"] == "connector_occupied"
    assert "GPU-L1-1" in response.json()["detail"]
    assert snapshot() == before


def test_with_a_target_the_component_moves_in_the_same_transaction(bench):
    install(bench, "GPU-L1-1", "PCIe-1")
    install(bench, "GPU-L1-2", "PCIe-2")
    before = snapshot()

    # The target is occupied: the move fails, and with it the blacklist. Nothing half-done.
    refused = blacklist(bench, "PCIe-1", REASON, target_connector="PCIe-2")
    assert refused.status_code == 409
    assert snapshot() == before

    response = blacklist(bench, "PCIe-1", REASON, target_connector="Riser-1")

    assert response.status_code == 201, response.json()
    entries = connector_map(bench)
    assert (entries["PCIe-1"]["state"], entries["PCIe-1"]["serial"]) == ("blacklisted", "")
    assert (entries["Riser-1"]["state"], entries["Riser-1"]["serial"]) == ("occupied", "GPU-L1-1")
    old = Installation.objects.get(connector=bench.connector("PCIe-1"))
    assert old.removal_reason == f"Connector PCIe-1 blacklisted: {REASON}"


def test_a_blacklisted_connector_cannot_be_blacklisted_again(bench):
    assert blacklist(bench, "PCIe-1", REASON).status_code == 201
    before = snapshot()

    response = blacklist(bench, "PCIe-1", "something else")

    assert response.status_code == 409
    assert REASON in response.json()["detail"]
    assert snapshot() == before
    assert ConnectorBlacklist.objects.get().reason == REASON


def test_a_photo_of_another_server_is_no_evidence(bench, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    photo = photo_upload(server=bench.other_server, actor=bench.t.user_p, data=png())
    before = snapshot()

    response = blacklist(bench, "PCIe-1", REASON, photo=photo.pk)

    assert response.status_code == 400
    assert "photo" in response.json()
    assert snapshot() == before
    own = photo_upload(server=bench.server, actor=bench.t.user_p, data=png())
    assert blacklist(bench, "PCIe-1", REASON, photo=own.pk).json()["blacklist"]["photo"] == own.pk


def test_there_is_no_way_to_lift_a_blacklist(bench):
    assert blacklist(bench, "PCIe-1", REASON).status_code == 201
    connector = bench.connector("PCIe-1")
    url = f"/api/v1/builds/connectors/{connector.pk}/"
    for user in (bench.t.pm, bench.t.user_p):
        client = api_client(user)
        assert client.delete(url).status_code == 405
        assert client.put(url, {"name": "PCIe-1"}, format="json").status_code == 405
        assert client.patch(url, {"blacklist": None}, format="json").status_code == 405
        assert client.delete(f"{url}blacklist/").status_code == 405
        assert client.patch(f"{url}blacklist/", {"reason": "fixed"}, format="json").status_code == 405

    names = {pattern.name for pattern in router.urls}
    assert not [name for name in names if "unblacklist" in name or "whitelist" in name]
    assert [name for name in names if "blacklist" in name] == ["connector-blacklist"]
    assert [extra.__name__ for extra in ConnectorViewSet.get_extra_actions()] == ["blacklist"]
    assert not [
        verb for verb in ("create", "update", "partial_update", "destroy") if hasattr(ConnectorViewSet, verb)
    ]
    assert ConnectorBlacklist.objects.get(connector=connector).reason == REASON


def test_the_database_refuses_to_change_or_delete_a_blacklist_entry(bench):
    assert blacklist(bench, "PCIe-1", REASON).status_code == 201
    entry = ConnectorBlacklist.objects.get()

    with pytest.raises(DatabaseError), transaction.atomic():
        ConnectorBlacklist.objects.filter(pk=entry.pk).delete()
    with pytest.raises(DatabaseError), transaction.atomic():
        ConnectorBlacklist.objects.filter(pk=entry.pk).update(reason="x")
    with pytest.raises(DatabaseError), transaction.atomic():
        entry.reason = "fixed after all"
        entry.save()

    entry.refresh_from_db()
    assert entry.reason == REASON
