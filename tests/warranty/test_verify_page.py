"""The public page /verify/ (issue 22, part 4): anyone, without a login, gives a pack's SHA-256 or its ZIP
and learns whether Werkbank issued it, and nothing but the asset tag, revision, date and language. The
public keys are at /verify/keys.json, without a login too.

The pack is real: rendered and stored by the task for the warranty tests' deployed server of customer A."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.utils import formats, timezone

from tests.builds.bench_rig import GPUS_L1
from tests.warranty.handover_rig import World
from tests.warranty.packs_rig import rehashed_forgery
from warranty.models import HandoverPack
from warranty.services.packs import pack_request
from warranty.signing import key_id, private_key_from_text

pytestmark = pytest.mark.django_db

K1 = base64.b64encode(bytes(range(32))).decode()
K2 = base64.b64encode(bytes(range(100, 132))).decode()
MADE_UP = hashlib.sha256(b"a pack nobody issued").hexdigest()


@pytest.fixture
def issued(world: World, django_capture_on_commit_callbacks) -> tuple[World, HandoverPack, bytes]:
    with django_capture_on_commit_callbacks(execute=True):
        pack, _ = pack_request(server=world.server, actor=world.t.pm, language="de")
    pack.refresh_from_db()
    assert pack.status == "ready", pack.error
    return world, pack, pack.zip.read()


def _upload(content: bytes, name: str = "pack.zip") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/zip")


def _html(response) -> str:
    return response.content.decode()


def _assert_only_the_pack_is_named(html: str, world: World, pack: HandoverPack) -> None:
    """The answer names the asset tag and revision; no customer, order, hostname or serial."""
    server, order = pack.server, pack.server.order
    assert server.asset_tag in html
    assert order.customer.name not in html
    # The asset tag starts with the order's reference (WB-2026-9000-01 of order WB-2026-9000): outside the
    # asset tag the reference appears nowhere.
    assert order.reference not in html.replace(server.asset_tag, "")
    assert server.hostname not in html
    for serial in GPUS_L1[:2]:
        assert serial not in html
    # The PM's username ("pm") is short enough to occur inside a random CSRF token: look for it as a word of
    # the page's text, outside the tags and their attributes.
    text = re.sub(r"<[^>]*>", " ", html)
    assert not re.search(rf"\b{re.escape(world.t.pm.username)}\b", text)


def test_the_page_and_the_keys_need_no_login():
    page = Client().get("/verify/")
    assert page.status_code == 200
    html = _html(page)
    assert "Verify a handover pack" in html and 'name="csrfmiddlewaretoken"' in html
    assert 'enctype="multipart/form-data"' in html and 'href="/verify/keys.json?download=1"' in html

    with override_settings(WERKBANK_SIGNING_KEYS=[K2, K1]):
        keys = Client().get("/verify/keys.json")
        download = Client().get("/verify/keys.json?download=1")
    assert keys.status_code == 200 and keys["Content-Type"] == "application/json"
    published = keys.json()["keys"]
    expected = [key_id(private_key_from_text(seed).public_key()) for seed in (K2, K1)]
    assert [key["key_id"] for key in published] == expected  # newest first
    assert {key["algorithm"] for key in published} == {"Ed25519"}
    first = private_key_from_text(K2).public_key().public_bytes_raw()
    assert base64.b64decode(published[0]["public_key"]) == first
    assert download["Content-Disposition"] == 'attachment; filename="werkbank-signing-keys.json"'
    assert download.json() == keys.json()
    assert Client().post("/verify/keys.json").status_code == 405


def test_a_real_pack_is_issued_by_its_hash_and_shows_only_tag_revision_and_date(issued):
    world, pack, _ = issued
    response = Client().post("/verify/", {"sha256": pack.zip_sha256.upper()})  # case does not matter
    assert response.status_code == 200
    html = _html(response)
    assert "Issued by Werkbank" in html and "Not issued" not in html
    assert f"<dd>{pack.revision}</dd>" in html
    assert f"<dd>{formats.date_format(timezone.localdate(pack.finished_at))}</dd>" in html
    assert "Deutsch" in html  # the pack's language
    _assert_only_the_pack_is_named(html, world, pack)

    # Pasted with spaces or a line break: the same answer.
    spaced = pack.zip_sha256[:32] + " \n" + pack.zip_sha256[32:]
    assert "Issued by Werkbank" in _html(Client().post("/verify/", {"sha256": spaced}))


def test_a_real_pack_is_issued_by_its_zip_with_the_signature_and_files_checked(issued):
    world, pack, content = issued
    response = Client().post("/verify/", {"pack": _upload(content)})
    assert response.status_code == 200
    html = _html(response)
    assert "Issued by Werkbank" in html
    assert "The manifest carries a valid Werkbank signature" in html
    assert "Every file matches the manifest" in html
    assert pack.zip_sha256 in html
    _assert_only_the_pack_is_named(html, world, pack)


def test_a_made_up_hash_and_a_forged_zip_are_not_issued_by_werkbank(issued):
    _, pack, content = issued
    html = _html(Client().post("/verify/", {"sha256": MADE_UP}))
    assert "Not issued by Werkbank" in html and "Issued by Werkbank" not in html
    assert pack.server.asset_tag not in html

    # A file changed and the manifest re-hashed by hand: the signature fails, so does the lookup.
    forgery = rehashed_forgery(content, b"gpu_index,at,temp_c\n")
    html = _html(Client().post("/verify/", {"pack": _upload(forgery)}))
    assert "Not issued by Werkbank" in html
    assert "signature does not match" in html
    assert "Every file matches the manifest" in html  # only the signature tells
    assert pack.server.asset_tag not in html  # a forged pack's manifest is not echoed


def test_a_repacked_zip_with_a_valid_signature_is_not_on_record(issued):
    _, pack, content = issued
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:  # the same files, packed again
        for name, data in members.items():
            archive.writestr(name, data)
    html = _html(Client().post("/verify/", {"pack": _upload(out.getvalue())}))
    assert "Not on Werkbank&#x27;s record" in html or "Not on Werkbank's record" in html
    assert "valid Werkbank signature" in html and "Issued by Werkbank" not in html
    assert pack.server.asset_tag not in html


def test_bad_input_gets_a_clear_form_error():
    client = Client()
    for value, expected in (
        ("xyz", "A SHA-256 is 64 hexadecimal characters (0–9, a–f); this has 3 characters."),
        ("g" * 64, "this has 64 characters"),
        ("", "Enter a pack&#x27;s SHA-256 or choose its ZIP file."),
    ):
        response = client.post("/verify/", {"sha256": value})
        assert response.status_code == 400
        assert expected in _html(response), value
    response = client.post("/verify/", {"pack": _upload(b"%PDF-1.7 not a zip", "handover.pdf")})
    assert response.status_code == 400 and "handover.pdf is not a ZIP file." in _html(response)
    response = client.post("/verify/", {"sha256": MADE_UP, "pack": _upload(b"PK")})
    assert response.status_code == 400


def test_an_upload_is_bounded_in_size_and_in_what_it_unpacks_to():
    small = io.BytesIO()
    with zipfile.ZipFile(small, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("manifest.json", json.dumps({"format": 2, "files": []}))
        archive.writestr("telemetry.csv", b"0" * 3_000_000)  # 3 MB of zeros deflate to a few kB
    content = small.getvalue()
    assert len(content) < 20_000
    with override_settings(WERKBANK_MAX_PACK_UPLOAD_BYTES=1_000):
        too_big = Client().post("/verify/", {"pack": _upload(content)})
    assert too_big.status_code == 400
    assert f"pack.zip is {len(content):,} bytes; a pack&#x27;s ZIP may have at most 1,000 bytes." in _html(
        too_big
    )
    with override_settings(WERKBANK_MAX_PACK_UPLOAD_BYTES=100_000, WERKBANK_MAX_REPORT_BYTES=1_000_000):
        bomb = Client().post("/verify/", {"pack": _upload(content)})  # unpacks past 100 kB + 2 × 1 MB
    html = _html(bomb)
    assert bomb.status_code == 200 and "Not issued by Werkbank" in html
    assert "it has no readable manifest" in html


def test_the_page_speaks_german():
    client = Client()
    client.cookies["django_language"] = "de"
    html = _html(client.post("/verify/", {"sha256": MADE_UP}))
    assert "Übergabepaket prüfen" in html and "Nicht von Werkbank ausgestellt" in html


def test_csrf_stays_on_and_the_post_is_rate_limited_per_address():
    strict = Client(enforce_csrf_checks=True)
    assert strict.post("/verify/", {"sha256": MADE_UP}).status_code == 403

    client = Client()
    with override_settings(WERKBANK_VERIFY_RATE="2/min"):
        for _ in range(2):
            assert client.post("/verify/", {"sha256": MADE_UP}).status_code == 200
        refused = client.post("/verify/", {"sha256": MADE_UP})
        assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
        assert "Too many checks from your address" in _html(refused)
        assert client.get("/verify/").status_code == 200  # the page itself stays readable
        other = Client(REMOTE_ADDR="203.0.113.9")
        assert other.post("/verify/", {"sha256": MADE_UP}).status_code == 200
