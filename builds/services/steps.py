"""Build steps and their photos, decoded in full and re-encoded before anything is stored."""

from __future__ import annotations

import io
import struct
import warnings
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from PIL import Image, ImageOps

from builds.choices import (
    BuildStepKind,
)
from builds.models import (
    BuildPhoto,
    BuildStep,
    Server,
)
from builds.services.servers import lock_server
from builds.steps import clean_step_data
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput
from werkbank.files import save_with_file
from werkbank.types import Actor

#: What a bench photo may be, by its decoded content; the stored file is re-encoded in the same format.
PHOTO_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png"}
#: What a customer's photo of a fault may also be (warranty claim attachments): WebP, as phones share it.
PHOTO_FORMATS_WITH_WEBP = {**PHOTO_FORMATS, "WEBP": "image/webp"}
#: What Pillow may call a JPEG it opened: a multi-picture JPEG is "MPO"; its first picture is kept.
DECODED_AS = {"JPEG": "JPEG", "MPO": "JPEG", "PNG": "PNG", "WEBP": "WEBP"}
FORMAT_NAMES = {"JPEG": "JPEG", "PNG": "PNG", "WEBP": "WebP"}
HEIC_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}
JPEG_QUALITY = 90


@dataclass(frozen=True)
class CheckedPhoto:
    """A photo that decoded in full, re-encoded: only its pixels survive (no metadata, nothing appended)."""

    content_type: str
    data: bytes
    width: int
    height: int


def _refused(field: str, which: str, message: str) -> InvalidInput:
    return InvalidInput(field, f"{which}{message}")


def accepted_formats(formats: Mapping[str, str]) -> str:
    """The formats in words, as a refusal names them: "a JPEG or PNG image", "a JPEG, PNG or WebP image"."""
    names = [FORMAT_NAMES[name] for name in formats]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    return f"a {listed} image"


def photo_check(
    data: bytes, *, field: str = "photo", which: str = "", formats: Mapping[str, str] = PHOTO_FORMATS
) -> CheckedPhoto:
    """Decode a photo in full with Pillow and re-encode it; else a 400 naming the field (and `which` photo).

    Refused: more than WERKBANK_MAX_PHOTO_BYTES bytes; anything Pillow cannot decode as a JPEG or PNG
    (a HEIC file is named as such: Pillow has no HEIC decoder here); more than WERKBANK_MAX_PHOTO_PIXELS
    pixels, checked from the header before a pixel is decoded; a truncated or corrupt image. The photo
    is then turned upright by its EXIF orientation and written anew in its own format, so that nothing
    of the upload but its pixels is kept: no EXIF (GPS), no text chunks, no bytes after the image data.
    `formats` (Pillow's format names to content types) says what is accepted: the bench's JPEG and PNG, or
    those and WebP (`PHOTO_FORMATS_WITH_WEBP`, for a warranty claim's photo).
    """
    accepted = accepted_formats(formats)
    limit = settings.WERKBANK_MAX_PHOTO_BYTES
    if len(data) > limit:
        raise _refused(field, which, f"is {len(data):,} bytes; a photo may have at most {limit:,} bytes.")
    if data[4:8] == b"ftyp" and data[8:12] in HEIC_BRANDS:
        raise _refused(
            field,
            which,
            f"has a HEIC header; Werkbank accepts only {accepted} (set the camera to 'Most Compatible', "
            "or export the photo as JPEG).",
        )
    max_pixels = settings.WERKBANK_MAX_PHOTO_PIXELS
    too_many = f"has more than {max_pixels:,} pixels; take the photo at a lower resolution."
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=tuple(formats)) as image:
                width, height = image.size
                if width * height > max_pixels:
                    raise _refused(field, which, too_many)
                source_format = image.format
                assert source_format is not None  # opened with `formats`: it names the one it decoded
                image.load()
                upright = ImageOps.exif_transpose(image)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise _refused(field, which, too_many) from exc
    except InvalidInput:
        raise
    except (OSError, SyntaxError, ValueError, EOFError, struct.error, zlib.error) as exc:
        # UnidentifiedImageError (an OSError): not a JPEG or PNG at all; others: truncated or corrupt.
        raise _refused(
            field, which, f"is not {accepted} that decodes in full (checked by its content)."
        ) from exc
    extra = len(data) - _image_end(data, source_format)
    if extra:
        raise _refused(
            field,
            which,
            f"has {extra:,} bytes after the end of its image data; only the image itself is accepted.",
        )
    stored_format = DECODED_AS[source_format]
    return CheckedPhoto(
        content_type=formats[stored_format],
        data=_reencode(upright, stored_format),
        width=upright.width,
        height=upright.height,
    )


def _image_end(data: bytes, source_format: str) -> int:
    """Where the image data ends, by the file's structure (trailing zero bytes, as some cameras pad, count
    as part of it). Pillow stops reading at the end of the image: whatever follows (a web page, a script,
    an archive) would pass a decode, so it is measured here and refused."""
    if source_format == "PNG":
        end = _png_end(data)
    elif source_format == "WEBP":
        end = _webp_end(data)
    else:
        end = _jpeg_end(data)
        # A multi-picture JPEG (MPO: a phone's depth map, a stereo pair) is JPEG frames one after another.
        while source_format == "MPO" and data[end : end + 2] == b"\xff\xd8":
            end += _jpeg_end(data[end:])
    return len(data) if not data[end:].strip(b"\x00") else end


def _png_end(data: bytes) -> int:
    """The offset just past the IEND chunk (a PNG is its signature, then length-prefixed chunks)."""
    position = 8
    while position + 12 <= len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind = data[position + 4 : position + 8]
        position += 12 + length
        if kind == b"IEND":
            return min(position, len(data))
    return len(data)  # no IEND: Pillow decoded it in full, nothing follows it


def _webp_end(data: bytes) -> int:
    """The offset just past the RIFF container: a WebP is "RIFF", its size after these 8 bytes, "WEBP"…"""
    (size,) = struct.unpack("<I", data[4:8])
    return min(8 + size, len(data))


def _jpeg_end(data: bytes) -> int:
    """The offset just past the EOI marker that ends the image, walking the marker segments; the entropy-coded
    data after each SOS is skipped to its next marker (FF 00 is a stuffed byte, FF D0–D7 a restart)."""
    position = 2  # after SOI
    while position + 2 <= len(data):
        if data[position] != 0xFF:
            return position
        marker = data[position + 1]
        if marker == 0xFF:  # fill byte
            position += 1
            continue
        if marker == 0xD9:  # EOI
            return position + 2
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:  # no length
            position += 2
            continue
        if position + 4 > len(data):
            return len(data)
        (length,) = struct.unpack(">H", data[position + 2 : position + 4])
        position += 2 + length
        if marker == 0xDA:  # SOS: entropy-coded data follows up to the next real marker
            while position + 1 < len(data):
                if (
                    data[position] == 0xFF
                    and data[position + 1] != 0x00
                    and not 0xD0 <= data[position + 1] <= 0xD7
                ):
                    break
                position += 1
    return len(data)


def _reencode(image: Image.Image, source_format: str) -> bytes:
    """The pixels written anew, with no metadata: JPEG as baseline RGB (or grey), PNG keeping transparency."""
    out = io.BytesIO()
    if source_format == "JPEG":
        if image.mode not in {"RGB", "L"}:
            image = image.convert("RGB")
        image.save(out, format="JPEG", quality=JPEG_QUALITY)
    elif source_format == "WEBP":
        if image.mode not in {"RGB", "RGBA"}:
            image = image.convert("RGBA" if "A" in image.mode or "transparency" in image.info else "RGB")
        image.save(out, format="WEBP", quality=JPEG_QUALITY)
    else:
        if image.mode not in {"1", "L", "LA", "RGB", "RGBA", "I;16"}:
            image = image.convert(
                "RGBA" if "transparency" in image.info or image.mode.endswith("A") else "RGB"
            )
        image.save(out, format="PNG", optimize=False)
    return out.getvalue()


@transaction.atomic
def photo_upload(*, server: Server, actor: Actor, data: bytes, step: BuildStep | None = None) -> BuildPhoto:
    """Store a bench photo under a generated name: decoded in full, bounded and re-encoded (`photo_check`).

    What is stored is the re-encoded image, never the upload's bytes. The file is written once the
    transaction commits, through `save_with_file`: a rolled-back upload leaves no file behind.
    """
    photo_data = photo_check(data)
    if step is not None and step.server_id != server.pk:
        raise InvalidInput("step", "the step belongs to another server.")
    photo = save_with_file(
        BuildPhoto(
            server=server,
            step=step,
            content_type=photo_data.content_type,
            size_bytes=len(photo_data.data),
            uploaded_by=user_or_none(actor),
        ),
        field="file",
        content=photo_data.data,
        filename="upload",
    )
    audit(
        actor=actor,
        verb="server.photo",
        obj=server,
        after={
            "photo": photo.pk,
            "type": photo_data.content_type,
            "bytes": len(photo_data.data),
            "uploaded_bytes": len(data),
            "pixels": f"{photo_data.width}×{photo_data.height}",
        },
    )
    return photo


@transaction.atomic
def step_log(
    *,
    server: Server,
    actor: Actor,
    kind: str,
    notes: str = "",
    data: dict | None = None,
    photos: Iterable[bytes] = (),
) -> BuildStep:
    """Log one build step with its measurements (`data`) and photos, each checked before anything is saved.

    `data` holds the fields the step kind defines (builds.steps.STEP_FIELDS): a key it does not define, a
    value of the wrong type or outside its range, or a required field left out is a 400 naming the field
    (`data.<name>`) and the rule.
    """
    if kind not in BuildStepKind.values:
        raise InvalidInput("kind", f"unknown step {kind!r}; one of {', '.join(BuildStepKind.values)}.")
    data = clean_step_data(kind, data)
    photos = list(photos)
    for number, photo in enumerate(photos, start=1):
        photo_check(photo, field="photos", which=f"photo {number} of {len(photos)} ")
    locked = lock_server(server)
    step = BuildStep.objects.create(
        server=locked, kind=kind, actor=user_or_none(actor), notes=notes, data=data
    )
    for photo in photos:
        photo_upload(server=locked, actor=actor, data=photo, step=step)
    audit(actor=actor, verb="server.step", obj=locked, after={"kind": kind, "data": data}, note=notes)
    return step
