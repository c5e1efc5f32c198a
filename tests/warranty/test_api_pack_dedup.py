"""The pack request API and duplicates (issue #26): a second request while the first revision is queued or
running answers 200 with that revision; `new_revision` (PMs only, as every pack request) makes a new one
(201) while one runs; a new request after the last is ready is a new revision again."""

from __future__ import annotations

import pytest

from tests import factories
from tests.deployment import svc_rig as rig
from tests.tenants_rig import api_client
from warranty.choices import PackStatus
from warranty.models import HandoverPack

pytestmark = pytest.mark.django_db

PACKS = "/api/v1/handover/packs/"


def test_a_second_request_returns_the_same_revision_with_200():
    server = rig.server(status="deployed")
    client = api_client(factories.make_pm(username="api-dedup-pm"))
    first = client.post(PACKS, {"server": server.pk, "language": "en"}, format="json")
    assert first.status_code == 201, first.json()
    second = client.post(PACKS, {"server": server.pk, "language": "en"}, format="json")
    assert second.status_code == 200, second.json()
    assert (second.json()["id"], second.json()["revision"]) == (first.json()["id"], 1)
    HandoverPack.objects.filter(pk=first.json()["id"]).update(status=PackStatus.RUNNING)
    running = client.post(PACKS, {"server": server.pk, "language": "en"}, format="json")
    assert (running.status_code, running.json()["id"], running.json()["status"]) == (
        200,
        first.json()["id"],
        PackStatus.RUNNING,
    )
    assert HandoverPack.objects.filter(server=server).count() == 1


def test_a_pm_asks_for_a_new_revision_explicitly_and_a_customer_may_not():
    server = rig.server(status="deployed")
    pm = api_client(factories.make_pm(username="api-force-pm"))
    first = pm.post(PACKS, {"server": server.pk, "language": "en"}, format="json").json()
    HandoverPack.objects.filter(pk=first["id"]).update(status=PackStatus.RUNNING)
    forced = pm.post(PACKS, {"server": server.pk, "language": "en", "new_revision": True}, format="json")
    assert forced.status_code == 201, forced.json()
    assert (forced.json()["revision"], forced.json()["status"]) == (2, PackStatus.QUEUED)
    # The queued one is what a new one would be: asked again, explicitly, it comes back.
    again = pm.post(PACKS, {"server": server.pk, "language": "en", "new_revision": True}, format="json")
    assert (again.status_code, again.json()["id"]) == (200, forced.json()["id"])

    member = factories.make_member(server.order.customer, username="api-force-member")
    refused = api_client(member).post(PACKS, {"server": server.pk, "new_revision": True}, format="json")
    assert refused.status_code == 403
    bad = pm.post(PACKS, {"server": server.pk, "new_revision": "perhaps"}, format="json")
    assert bad.status_code == 400 and "new_revision" in bad.json()
    assert HandoverPack.objects.filter(server=server).count() == 2
