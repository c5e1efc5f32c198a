"""Bench photos are decoded in full and re-encoded before they are stored (issue #16, defect 8).

Before, a photo was checked by its first and last bytes only: a PNG followed by an HTML page, or an ELF
binary called photo.heic, was stored as it came and served back. Now each is a 400 naming the field, on
the API and on the bench page alike, and what is stored is the image written anew: nothing that followed
the image data, and no metadata, survives.
"""

from __future__ import annotations

import io
import random
import struct
import zlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from builds.models import BuildPhoto
from tests.builds.bench_rig import pixels, png, post, snapshot
from werkbank.models import AuditEvent

pytestmark = pytest.mark.django_db

POLYGLOT_TAIL = (
    b"<html><body><script>fetch('/api/v1/auth/tokens/').then(r => r.text())</script></body></html>"
)
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 8 + b"\x02\x00\x3e\x00" + b"\x00" * 200


@pytest.fixture(autouse=True)
def _media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_declaring(width: int, height: int) -> bytes:
    """A tiny PNG whose header declares `width` × `height` pixels, with one row of data only."""
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
        + _chunk(b"IDAT", zlib.compress(b"\x00" * (width + 1)))
        + _chunk(b"IEND", b"")
    )


def _photo_with_exif() -> bytes:
    """A 40×20 JPEG with EXIF: a GPS-looking maker note and orientation 6 (rotate 90° to show upright)."""
    image = Image.new("RGB", (40, 20), (200, 30, 30))
    exif = Image.Exif()
    exif[0x0112] = 6  # Orientation: rotated 90° clockwise
    exif[0x010E] = "GPS 52.5200N 13.4050E secret-site"  # ImageDescription
    out = io.BytesIO()
    image.save(out, format="JPEG", exif=exif.tobytes(), quality=95)
    return out.getvalue()


def _jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 200, 10)).save(out, format="JPEG")
    return out.getvalue()


def _noise(image_format: str) -> bytes:
    """A 64×64 image of random pixels: its compressed data is long, so a cut lands inside it."""
    out = io.BytesIO()
    Image.frombytes("RGB", (64, 64), random.Random(16).randbytes(64 * 64 * 3)).save(out, format=image_format)
    return out.getvalue()


def _stored(media) -> list[bytes]:
    return [path.read_bytes() for path in media.rglob("*") if path.is_file()] if media.exists() else []


def _api_upload(bench, data: bytes, name: str, content_type: str, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return post(
            bench.t.user_p,
            bench.url("photos/"),
            {"photo": SimpleUploadedFile(name, data, content_type=content_type)},
            format="multipart",
        )


REFUSED = {
    "polyglot": (png() + POLYGLOT_TAIL, "photo.png", "image/png", "has 92 bytes after the end of its image"),
    "jpeg_polyglot": (
        _jpeg() + POLYGLOT_TAIL + b"\xff\xd9",
        "photo.jpg",
        "image/jpeg",
        "has 94 bytes after the end of its image",
    ),
    "elf_as_heic": (ELF, "IMG_0001.HEIC", "image/heic", "is not a JPEG or PNG image"),
    "elf_behind_a_heic_header": (
        b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + ELF,
        "IMG_0002.HEIC",
        "image/heic",
        "has a HEIC header; Werkbank accepts only a JPEG or PNG image",
    ),
    "truncated_jpeg": (_noise("JPEG")[:-400], "cut.jpg", "image/jpeg", "is not a JPEG or PNG image"),
    "truncated_png": (_noise("PNG")[:-400], "cut.png", "image/png", "is not a JPEG or PNG image"),
    "pixel_bomb_over_the_setting": (
        _png_declaring(8000, 8000),
        "big.png",
        "image/png",
        "has more than 50,000,000 pixels",
    ),
    "pixel_bomb_over_pillows_limit": (
        _png_declaring(100_000, 100_000),
        "bomb.png",
        "image/png",
        "has more than 50,000,000 pixels",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_api_refuses_what_does_not_decode_in_full(
    bench, _media, django_capture_on_commit_callbacks, case
):
    data, name, content_type, message = REFUSED[case]
    before = snapshot()

    response = _api_upload(bench, data, name, content_type, django_capture_on_commit_callbacks)

    assert response.status_code == 400, response.content
    assert list(response.json()) == ["photo"]
    assert message in response.json()["photo"][0]
    assert snapshot() == before
    assert _stored(_media) == []


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_bench_page_refuses_the_same_with_the_files_name(
    bench, _media, client, django_capture_on_commit_callbacks, case
):
    data, name, content_type, message = REFUSED[case]
    client.force_login(bench.t.user_p)
    before = snapshot()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/bench/servers/{bench.server.pk}/steps/",
            {"kind": "note", "photos": [SimpleUploadedFile(name, data, content_type=content_type)]},
        )

    assert response.status_code == 400
    assert f"{name} {message}" in response.content.decode()
    assert snapshot() == before
    assert _stored(_media) == []


def test_a_valid_photo_is_stored_re_encoded_upright_and_without_metadata(
    bench, _media, django_capture_on_commit_callbacks
):
    data = _photo_with_exif()

    response = _api_upload(bench, data, "bench.jpg", "image/jpeg", django_capture_on_commit_callbacks)

    assert response.status_code == 201, response.json()
    [stored] = _stored(_media)
    assert stored != data
    with Image.open(io.BytesIO(stored)) as image:
        image.load()
        assert (image.format, image.size) == ("JPEG", (20, 40))  # orientation applied: now upright
        assert not image.getexif()
        assert "exif" not in image.info and "icc_profile" not in image.info
        red, green, blue = image.getpixel((10, 20))
        assert red > 180 and green < 60 and blue < 60
    assert b"secret-site" not in stored
    photo = BuildPhoto.objects.get()
    assert (photo.content_type, photo.size_bytes) == ("image/jpeg", len(stored))
    event = AuditEvent.objects.get(verb="server.photo")
    assert event.after["uploaded_bytes"] == len(data) and event.after["pixels"] == "20×40"


def test_a_png_with_data_after_its_end_is_stored_without_it_when_the_tail_is_inside_a_chunk(
    bench, _media, django_capture_on_commit_callbacks
):
    """A payload hidden in a text chunk is valid PNG: it is accepted, and the re-encoded file drops it."""
    head, tail = png()[:33], png()[33:]  # after the IHDR chunk
    data = head + _chunk(b"tEXt", b"Comment\x00" + POLYGLOT_TAIL) + tail

    response = _api_upload(bench, data, "bench.png", "image/png", django_capture_on_commit_callbacks)

    assert response.status_code == 201, response.json()
    [stored] = _stored(_media)
    assert pixels(stored) == pixels(png())
    assert b"<script>" not in stored and b"<html>" not in stored


def test_the_pixel_limit_is_a_setting(bench, settings, _media, django_capture_on_commit_callbacks):
    settings.WERKBANK_MAX_PHOTO_PIXELS = 100
    image = Image.new("L", (11, 10), 128)
    out = io.BytesIO()
    image.save(out, format="PNG")

    refused = _api_upload(bench, out.getvalue(), "a.png", "image/png", django_capture_on_commit_callbacks)
    assert refused.status_code == 400
    assert refused.json()["photo"] == ["has more than 100 pixels; take the photo at a lower resolution."]

    out = io.BytesIO()
    image.crop((0, 0, 10, 10)).save(out, format="PNG")
    accepted = _api_upload(bench, out.getvalue(), "b.png", "image/png", django_capture_on_commit_callbacks)
    assert accepted.status_code == 201


def test_a_multi_picture_jpeg_is_a_photo_and_only_its_first_picture_is_stored(
    bench, _media, django_capture_on_commit_callbacks
):
    """Some phones write MPO (JPEG pictures one after another): accepted; anything after the last is not."""
    first, second = Image.new("RGB", (16, 8), (0, 0, 250)), Image.new("RGB", (8, 16), (250, 0, 0))
    out = io.BytesIO()
    first.save(out, format="MPO", save_all=True, append_images=[second])

    tailed = _api_upload(
        bench, out.getvalue() + POLYGLOT_TAIL, "a.jpg", "image/jpeg", django_capture_on_commit_callbacks
    )
    accepted = _api_upload(bench, out.getvalue(), "b.jpg", "image/jpeg", django_capture_on_commit_callbacks)

    assert tailed.status_code == 400 and "after the end of its image" in tailed.json()["photo"][0]
    assert accepted.status_code == 201, accepted.json()
    [stored] = _stored(_media)
    assert pixels(stored)[:2] == ("JPEG", (16, 8))
