"""The pack admin: "add" asks for a new revision through `pack_request`; the actions run a failed pack
again (`pack_retry`) or ask for a new revision; a pack is never edited."""

from __future__ import annotations

import pytest

from tests.warranty.packs_rig import load_demo
from warranty.choices import PackStatus
from warranty.models import HandoverPack
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_a_pm_asks_for_a_pack_and_runs_a_failed_one_again_in_the_admin(client):
    demo = load_demo()
    client.force_login(demo.pm)
    add = "/admin/warranty/handoverpack/add/"
    assert client.get(add).status_code == 200
    response = client.post(add, {"server": demo.fleet.pk, "language": "en"})
    assert response.status_code == 302, response.content.decode()[:2000]
    pack = HandoverPack.objects.get(server=demo.fleet)
    assert (pack.revision, pack.language, pack.generated_by) == (1, "en", demo.pm)
    assert AuditEvent.objects.filter(verb="pack.request", object_id=str(pack.pk), actor=demo.pm).exists()

    HandoverPack.objects.filter(pk=pack.pk).update(status=PackStatus.FAILED, error="disk full")
    changelist = "/admin/warranty/handoverpack/"
    client.post(changelist, {"action": "retry_failed", "_selected_action": [pack.pk]})
    pack.refresh_from_db()
    assert pack.status == PackStatus.QUEUED
    assert AuditEvent.objects.filter(verb="pack.retry", object_id=str(pack.pk)).exists()
    # Queued, it is kept (it renders the data of when its task starts); running, a new revision is made.
    kept = client.post(
        changelist, {"action": "request_new_revision", "_selected_action": [pack.pk]}, follow=True
    )
    assert "is already queued; no new revision was made" in kept.content.decode()
    assert client.post(add, {"server": demo.fleet.pk, "language": "en"}).status_code == 302
    assert HandoverPack.objects.filter(server=demo.fleet).count() == 1
    HandoverPack.objects.filter(pk=pack.pk).update(status=PackStatus.RUNNING)
    client.post(changelist, {"action": "request_new_revision", "_selected_action": [pack.pk]})
    assert list(HandoverPack.objects.filter(server=demo.fleet).values_list("revision", "language")) == [
        (2, "en"),
        (1, "en"),
    ]
    # Without a language, the customer's (Vastfleet: German).
    assert client.post(add, {"server": demo.fleet.pk, "language": ""}).status_code == 302
    assert HandoverPack.objects.get(server=demo.fleet, revision=3).language == "de"
    # The change page shows, and never saves.
    page = client.get(f"{changelist}{pack.pk}/change/")
    assert page.status_code == 200 and "disk full" in page.content.decode()
    assert client.post(f"{changelist}{pack.pk}/change/", {}).status_code == 403
