"""Claims take attachments (issue #24, item 11): a customer attaches logs and photos to a claim, when filing
it in the portal and afterwards while it is in progress, through the portal or the API. Each file is checked
by its content as the bench photos are, stored after the commit through the core file helper, audited, and
served only after the access check; PMs see the files in the admin and the API, and an order's export
carries them."""

from __future__ import annotations

import gzip
import hashlib
import io
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from PIL import Image

from ops.backup import export_order
from tests import factories
from tests.builds.bench_rig import GPUS_L1, png
from tests.tenants_rig import api_client
from warranty.models import ClaimAttachment, WarrantyClaim, WarrantyRecord
from warranty.services import Upload, claim_attach, claim_open, claim_reject
from werkbank import exports
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

LOG = b"[ 4711.123] NVRM: Xid (PCI:0000:41:00): 79, pid=1234, GPU has fallen off the bus.\n"
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n"
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00" + b"\x00" * 200


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Runs what waits for the commit (files are written then), as the end of a real request would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _record() -> WarrantyRecord:
    return WarrantyRecord.objects.get(serial=GPUS_L1[0])


def _claim(handed: Any) -> WarrantyClaim:
    return claim_open(record=_record(), actor=handed.t.user_a, description="Xid 79 under load")


def _file(name: str, data: bytes) -> SimpleUploadedFile:
    # The browser's content type says nothing: the content decides.
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def _attach(user: Any, claim: WarrantyClaim, name: str, data: bytes) -> Any:
    url = f"/api/v1/warranty/claims/{claim.pk}/attachments/"
    return api_client(user).post(url, {"file": _file(name, data)}, format="multipart")


def _webp() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (3, 2), (20, 120, 220)).save(out, format="WEBP", lossless=True)
    return out.getvalue()


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=method) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _stored(media: Any) -> list[Any]:
    folder = media / "claim-attachments"
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


def _login(client: Any, user: Any) -> Any:
    client.force_login(user)
    return client


# --- filing in the portal, attaching afterwards ---------------------------------------------------------


def test_a_claim_filed_in_the_portal_carries_its_log_and_photo(client, handed, settings, committed):
    url = f"/portal/warranty/records/{_record().pk}/"
    _login(client, handed.t.user_a)
    with committed():
        response = client.post(
            url,
            {
                "description": "The card drops off the bus",
                "attachments": [_file("dmesg.txt", LOG), _file("IMG_0042.png", png())],
            },
        )
        assert response.status_code == 302, response.content.decode()[:2000]
        assert _stored(settings.MEDIA_ROOT) == []  # not before the commit

    claim = WarrantyClaim.objects.get(record=_record())
    log, photo = claim.attachments.order_by("kind")
    assert (log.kind, log.content_type, log.original_name, log.size_bytes) == (
        "log", "text/plain", "dmesg.txt", len(LOG),
    )  # fmt: skip
    assert (photo.kind, photo.content_type, photo.original_name) == ("photo", "image/png", "IMG_0042.png")
    assert photo.file.name.startswith(f"claim-attachments/{claim.pk}/") and "IMG_0042" not in photo.file.name
    assert log.sha256 == hashlib.sha256(LOG).hexdigest() and log.file.read() == LOG
    assert len(_stored(settings.MEDIA_ROOT)) == 2
    assert [event.after["name"] for event in AuditEvent.objects.filter(verb="warranty.claim_attach")] == [
        "dmesg.txt",
        "IMG_0042.png",
    ]
    page = client.get(url).content.decode()
    assert "dmesg.txt" in page and f'href="/api/v1/warranty/claim-attachments/{log.pk}/download/"' in page
    assert "Attach a log or a photo" in page  # the claim is in progress: more may follow


def test_a_bad_file_at_filing_files_nothing(client, handed, settings, committed):
    _login(client, handed.t.user_a)
    with committed():
        response = client.post(
            f"/portal/warranty/records/{_record().pk}/",
            {"description": "x", "attachments": [_file("dmesg.txt", LOG), _file("report.pdf", PDF)]},
        )
    assert response.status_code == 400
    form = response.context["form"]
    assert "report.pdf: is not plain text: byte 10 is not UTF-8." in form.errors["attachments"][0]
    assert not WarrantyClaim.objects.exists() and not ClaimAttachment.objects.exists()
    assert _stored(settings.MEDIA_ROOT) == []


def test_the_customer_attaches_a_photo_afterwards_in_the_portal(client, handed, committed):
    claim = _claim(handed)
    _login(client, handed.t.user_a)
    with committed():
        response = client.post(
            f"/portal/warranty/claims/{claim.pk}/attachments/",
            {f"claim-{claim.pk}-file": _file("a.webp", _webp())},
        )
    assert response.status_code == 302 and response["Location"] == f"/portal/warranty/records/{_record().pk}/"
    attachment = claim.attachments.get()
    assert (attachment.kind, attachment.content_type) == ("photo", "image/webp")
    with Image.open(io.BytesIO(attachment.file.read())) as stored:  # re-encoded, still the same picture
        assert (stored.format, stored.size) == ("WEBP", (3, 2))

    refused = client.post(
        f"/portal/warranty/claims/{claim.pk}/attachments/", {f"claim-{claim.pk}-file": _file("x.bin", ELF)}
    )
    assert refused.status_code == 400  # the record's page again, the refusal on the claim's form
    [errors] = [row["attach_form"].errors for row in refused.context["claims"] if row["attach_form"].errors]
    assert "is not plain text: it holds NUL bytes (a binary file)." in errors["file"][0]
    assert claim.attachments.count() == 1


# --- the API ----------------------------------------------------------------------------------------------


def test_a_log_attached_through_the_api_is_audited_and_listed(handed, committed):
    claim = _claim(handed)
    with committed():
        response = _attach(handed.t.user_a, claim, "nvidia-bug-report.log.gz", gzip.compress(LOG * 100))
    assert response.status_code == 201, response.json()
    [listed] = response.json()["attachments"]
    attachment = ClaimAttachment.objects.get(pk=listed["id"])
    assert listed["kind"] == "log" and listed["content_type"] == "application/gzip"
    assert (
        listed["download_url"]
        == f"http://testserver/api/v1/warranty/claim-attachments/{attachment.pk}/download/"
    )
    assert "uploaded_by" not in listed  # a login name: PMs only
    as_pm = api_client(handed.t.pm).get(f"/api/v1/warranty/claims/{claim.pk}/").json()["attachments"]
    assert as_pm[0]["uploaded_by"] == handed.t.user_a.username

    event = AuditEvent.objects.for_object(claim).get(verb="warranty.claim_attach")
    assert event.actor == handed.t.user_a
    assert event.after == {
        "attachment": attachment.pk,
        "kind": "log",
        "name": "nvidia-bug-report.log.gz",
        "type": "application/gzip",
        "bytes": attachment.size_bytes,
        "uploaded_bytes": attachment.size_bytes,
        "sha256": attachment.sha256,
        "detail": f"{len(LOG) * 100:,} bytes unpacked",
    }


@pytest.mark.parametrize(
    "name, data, rule",
    [
        ("report.pdf", PDF, "is not plain text: byte 10 is not UTF-8."),
        ("photo.jpg", ELF, "is not plain text: it holds NUL bytes (a binary file)."),
        (
            "bench.png",
            png() + b"<html><script>alert(1)</script></html>",
            "bytes after the end of its image data",
        ),
        ("broken.gz", gzip.compress(LOG)[:-6], "is not a gzip file that unpacks in full"),
        ("broken.zip", _zip({"dmesg.txt": LOG})[:-30], "is not a ZIP file that unpacks in full"),
        ("logs.zip", _zip({"dmesg.txt": LOG}, zipfile.ZIP_BZIP2), "uses a compression other than deflate"),
        ("empty.log", b"", "The submitted file is empty."),
    ],
)
def test_a_bad_type_is_a_400_naming_the_field_and_the_rule(handed, settings, committed, name, data, rule):
    claim = _claim(handed)
    events = AuditEvent.objects.count()
    with committed():
        response = _attach(handed.t.user_a, claim, name, data)
    assert response.status_code == 400
    assert rule in response.json()["file"][0]
    assert not ClaimAttachment.objects.exists() and AuditEvent.objects.count() == events
    assert _stored(settings.MEDIA_ROOT) == []


def test_the_content_decides_not_the_name(handed, committed):
    """A text file called photo.jpg is a log, and downloads as text; a PNG called dmesg.log is a photo."""
    claim = _claim(handed)
    with committed():
        assert _attach(handed.t.user_a, claim, "photo.jpg", LOG).status_code == 201
        assert _attach(handed.t.user_a, claim, "dmesg.log", png()).status_code == 201
    text, image = claim.attachments.order_by("pk")
    assert (text.kind, text.content_type, image.kind, image.content_type) == (
        "log", "text/plain", "photo", "image/png",
    )  # fmt: skip
    response = api_client(handed.t.user_a).get(f"/api/v1/warranty/claim-attachments/{text.pk}/download/")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert 'filename="photo.jpg.txt"' in response["Content-Disposition"]


def test_too_big_is_a_400_to_the_byte(handed, settings, committed):
    settings.WERKBANK_MAX_CLAIM_LOG_BYTES = 1000
    settings.WERKBANK_MAX_PHOTO_BYTES = 1000
    claim = _claim(handed)
    log = b"x" * 999 + b"\n"
    too_big = _attach(handed.t.user_a, claim, "big.log", log + b"x")
    assert too_big.status_code == 400
    assert "is 1,001 bytes; a log may have at most 1,000 bytes" in too_big.json()["file"][0]
    photo = _attach(handed.t.user_a, claim, "big.png", png(size=1001))
    assert photo.status_code == 400 and "a photo may have at most 1,000 bytes" in photo.json()["file"][0]
    with committed():
        assert _attach(handed.t.user_a, claim, "exact.log", log).status_code == 201
    assert claim.attachments.get().size_bytes == 1000


def test_a_compressed_log_is_inflated_only_to_its_bound(handed, settings):
    settings.WERKBANK_MAX_CLAIM_LOG_UNPACKED_BYTES = 10_000
    claim = _claim(handed)
    for name, data in (
        ("bomb.gz", gzip.compress(b"\x00" * 10_001)),
        ("bomb.zip", _zip({"a.log": b"a" * 6000, "b.log": b"b" * 6000})),
    ):
        response = _attach(handed.t.user_a, claim, name, data)
        assert response.status_code == 400, name
        assert "unpacks to more than 10,000 bytes" in response.json()["file"][0]
    fine = _attach(handed.t.user_a, claim, "logs.zip", _zip({"a.log": b"a" * 6000, "b.log": b"b" * 4000}))
    assert fine.status_code == 201 and fine.json()["attachments"][0]["content_type"] == "application/zip"


def test_the_same_file_twice_and_a_decided_claim_are_refused(handed, committed):
    claim = _claim(handed)
    with committed():
        assert _attach(handed.t.user_a, claim, "dmesg.txt", LOG).status_code == 201
    again = _attach(handed.t.user_a, claim, "copy.txt", LOG)
    assert again.status_code == 409 and again.json()["code"] == "attachment_duplicate"
    assert "already attached" in again.json()["detail"] and "dmesg.txt" in again.json()["detail"]
    claim_reject(claim=claim, actor=handed.t.pm, note="Within specification.")
    late = _attach(handed.t.user_a, claim, "more.txt", b"more\n")
    assert late.status_code == 409 and late.json()["code"] == "claim_not_in_progress"
    assert claim.attachments.count() == 1


# --- who may: attach, see, download ----------------------------------------------------------------------


@pytest.mark.parametrize("who", ["user_b", "user_p", "outsider"])  # another customer, the partner, nobody's
def test_another_tenant_gets_a_404_and_writes_nothing(client, handed, committed, who):
    claim = _claim(handed)
    with committed():
        assert _attach(handed.t.user_a, claim, "dmesg.txt", LOG).status_code == 201
    attachment = claim.attachments.get()
    user = getattr(handed.t, who)
    events = AuditEvent.objects.count()
    assert _attach(user, claim, "mine.txt", b"mine\n").status_code == 404
    portal = _login(client, user).post(
        f"/portal/warranty/claims/{claim.pk}/attachments/", {f"claim-{claim.pk}-file": _file("m.txt", b"m\n")}
    )
    assert portal.status_code == 404
    assert (
        api_client(user).get(f"/api/v1/warranty/claim-attachments/{attachment.pk}/download/").status_code
        == 404
    )
    assert claim.attachments.count() == 1 and AuditEvent.objects.count() == events


def test_the_download_is_served_only_after_the_access_check(client, handed, committed):
    claim = _claim(handed)
    with committed():
        _attach(handed.t.user_a, claim, "dmesg", LOG)
    attachment = claim.attachments.get()
    url = f"/api/v1/warranty/claim-attachments/{attachment.pk}/download/"

    colleague = factories.make_member(handed.t.customer_a, username="carol")
    for user in (handed.t.user_a, colleague, handed.t.pm):
        response = api_client(user).get(url)
        assert response.status_code == 200, user.username
        assert b"".join(response.streaming_content) == LOG
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Disposition"] == 'attachment; filename="dmesg.txt"'
    # The portal's link works with the browser's session.
    assert _login(client, handed.t.user_a).get(url).status_code == 200
    for user in (handed.t.user_b, handed.t.user_p, handed.t.user_q, handed.t.outsider):
        assert api_client(user).get(url).status_code == 404, user.username
    assert api_client(None).get(url).status_code in {401, 403}


# --- files follow the transaction ---------------------------------------------------------------------------


def test_the_file_is_written_after_the_commit_and_never_on_a_rollback(handed, settings, committed):
    claim = _claim(handed)
    with committed(), pytest.raises(RuntimeError), transaction.atomic():
        claim_attach(claim=claim, actor=handed.t.user_a, upload=Upload("dmesg.txt", LOG))
        raise RuntimeError("the page refused the request after the service returned")
    assert not ClaimAttachment.objects.exists() and _stored(settings.MEDIA_ROOT) == []
    assert not AuditEvent.objects.filter(verb="warranty.claim_attach").exists()

    with committed():
        attachment = claim_attach(claim=claim, actor=handed.t.user_a, upload=Upload("dmesg.txt", LOG))
        assert _stored(settings.MEDIA_ROOT) == []
    assert [path.read_bytes() for path in _stored(settings.MEDIA_ROOT)] == [LOG]
    assert attachment.file.name.endswith(".txt")


# --- PMs: the admin, the export ----------------------------------------------------------------------------


def test_pms_see_the_files_in_the_admin_with_their_downloads(client, handed, committed):
    claim = _claim(handed)
    with committed():
        _attach(handed.t.user_a, claim, "dmesg.txt", LOG)
    attachment = claim.attachments.get()
    page = (
        _login(client, handed.t.pm).get(f"/admin/warranty/warrantyclaim/{claim.pk}/change/").content.decode()
    )
    assert "Logs and photos" in page and "dmesg.txt" in page
    assert f'href="/api/v1/warranty/claim-attachments/{attachment.pk}/download/"' in page
    assert attachment.sha256 in page
    # A decision posted from the change page still goes through (the inline only shows).
    response = client.post(
        f"/admin/warranty/warrantyclaim/{claim.pk}/change/",
        {"decision": "approve", "note": "", "replacement_serial": ""},
    )
    assert response.status_code == 302
    claim.refresh_from_db()
    assert claim.status == "approved"


def test_the_orders_export_carries_the_attachments_with_their_files(handed, committed):
    claim = _claim(handed)
    with committed():
        _attach(handed.t.user_a, claim, "dmesg.txt", LOG)
    attachment = claim.attachments.get()
    declaration = exports.declaration_for(ClaimAttachment)
    assert declaration is not None and declaration.carried
    bundle = export_order(claim.record.order.reference)
    assert any(item["model"] == "warranty.claimattachment" for item in bundle["objects"])
    [carried] = [item for item in bundle["files"] if item["model"] == "warranty.claimattachment"]
    assert (carried["pk"], carried["sha256"], carried["size"]) == (attachment.pk, attachment.sha256, len(LOG))
