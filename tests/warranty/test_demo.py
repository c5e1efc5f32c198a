"""`manage.py seed_demo` hands the Vastfleet fleet's first server over: its customer finds the ready
handover pack on the server's portal page, and its warranty records with one open claim on a GPU."""

from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.core.management import call_command

from builds.models import Server
from warranty.demo import CUSTOMER
from warranty.models import HandoverPack, WarrantyClaim, WarrantyRecord
from werkbank.demo_context import DEMO_PASSWORD
from werkbank.models import AuditEvent


def _counts() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def _fleet() -> list[Server]:
    return list(Server.objects.filter(order__customer__name=CUSTOMER).order_by("sequence"))


def _assert_portal_shows_pack_and_claim(client, server: Server, claim: WarrantyClaim, pack: HandoverPack):
    assert client.login(username="vastfleet", password=DEMO_PASSWORD)
    page = client.get(f"/portal/servers/{server.pk}/").content.decode()
    assert "The handover pack of this server is not ready yet." not in page
    assert f'href="/portal/packs/{pack.pk}/handover.pdf"' in page
    assert pack.zip_sha256 in page

    serial = claim.record.serial
    listing = client.get("/portal/warranty/", {"serial": serial}).content.decode()
    [record_id] = re.findall(r'href="/portal/warranty/records/(\d+)/"', listing)
    assert int(record_id) == claim.record_id
    record_page = client.get(f"/portal/warranty/records/{record_id}/").content.decode()
    assert claim.number in record_page
    assert "Xid 79" in record_page


@pytest.mark.django_db
def test_seed_demo_hands_over_the_first_fleet_server_with_its_pack_records_and_a_claim(
    client, settings, tmp_path
):
    """In a test the seeds' transaction never commits, so the pack's task does not run: the demo renders
    the pack itself (the path of a broker whose worker is not running)."""
    settings.MEDIA_ROOT = tmp_path
    call_command("seed_demo", quiet=True)
    first = _counts()
    call_command("seed_demo", quiet=True)
    assert _counts() == first

    fleet = _fleet()
    server = fleet[0]
    assert server.status == "handed_over"
    assert all(other.status != "handed_over" for other in fleet[1:])
    assert server.order.status not in ("handed_over", "closed")
    # r1 made for the handover, r2 after it with the warranty dates (issue #24): the portal offers r2.
    first_pack, pack = HandoverPack.objects.filter(server=server).order_by("revision")
    assert (first_pack.revision, first_pack.language, first_pack.status) == (1, "de", "ready")
    assert (pack.revision, pack.language, pack.status) == (2, "de", "ready")
    records = WarrantyRecord.objects.filter(server=server)
    # The server's own record and one per installed component, all on the order's term.
    assert records.count() == 1 + server.installations.filter(removed_at__isnull=True).count()
    assert {record.customer.name for record in records} == {CUSTOMER}
    # The customer's own claim; the demo's field checks may add a draft (tests/burnin/test_demo_field.py).
    [claim] = WarrantyClaim.objects.exclude(status="draft").select_related(
        "record__component__part", "opened_by"
    )
    assert claim.status == "open"
    assert claim.record.server == server
    assert claim.record.component.part.category == "gpu"
    assert claim.opened_by.username == "vastfleet"
    words = claim.description.lower()
    assert not any(word in words for word in ("seed", "demo", "todo"))
    _assert_portal_shows_pack_and_claim(client, server, claim, pack)


@pytest.mark.django_db(transaction=True)
def test_seed_demo_committed_renders_the_pack_once_by_its_task(client, settings, tmp_path):
    """Committed for real, as `make demo` runs it: the pack's task renders it (in-process, no broker)
    once the seeds commit, before the handover; the records task finds the records made; a re-run adds
    nothing."""
    settings.MEDIA_ROOT = tmp_path
    call_command("seed_demo", quiet=True)
    first = _counts()
    call_command("seed_demo", quiet=True)
    assert _counts() == first

    server = _fleet()[0]
    assert server.status == "handed_over"
    _first, pack = HandoverPack.objects.filter(server=server).order_by("revision")
    assert (pack.revision, pack.status, pack.attempts) == (2, "ready", 1)
    assert pack.pdf.storage.exists(pack.pdf.name) and pack.zip.storage.exists(pack.zip.name)
    assert AuditEvent.objects.filter(verb="pack.generate").count() == 2  # r1 and r2, each once
    [claim] = WarrantyClaim.objects.exclude(status="draft").select_related("record")
    _assert_portal_shows_pack_and_claim(client, server, claim, pack)
    download = client.get(f"/portal/packs/{pack.pk}/handover.pdf")
    assert download.status_code == 200
    assert b"".join(download.streaming_content).startswith(b"%PDF")
