"""Build steps and their photos, checked by content before anything is stored."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction

from builds.choices import (
    BuildStepKind,
)
from builds.models import (
    BuildPhoto,
    BuildStep,
    Server,
)
from builds.services.servers import lock_server
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput
from werkbank.files import save_with_file

JPEG_MAGIC = b"\xff\xd8\xff"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HEIC_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}


def detect_image_type(data: bytes) -> str | None:
    """The image type by content, not by name: a JPEG, PNG or HEIC file, else None."""
    if data.startswith(JPEG_MAGIC) and data.rstrip(b"\x00").endswith(b"\xff\xd9"):
        return "image/jpeg"
    if data.startswith(PNG_MAGIC) and data[12:16] == b"IHDR" and data[-8:-4] == b"IEND":
        return "image/png"
    if data[4:8] == b"ftyp" and data[8:12] in HEIC_BRANDS:
        return "image/heic"
    return None


def _check_photo(data: bytes, *, field: str = "photo", which: str = "") -> str:
    """The content type of an acceptable photo; else a 400 naming the field, and `which` photo it was."""
    limit = settings.WERKBANK_MAX_PHOTO_BYTES
    if len(data) > limit:
        raise InvalidInput(field, f"{which}is {len(data):,} bytes; a photo may have at most {limit:,} bytes.")
    content_type = detect_image_type(data)
    if content_type is None:
        raise InvalidInput(field, f"{which}is not a JPEG, PNG or HEIC image (checked by its content).")
    return content_type


@transaction.atomic
def photo_upload(*, server: Server, actor: Any, data: bytes, step: BuildStep | None = None) -> BuildPhoto:
    """Store a bench photo under a generated name after checking its content and size.

    The file is written once the transaction commits, through `save_with_file`: a rolled-back upload leaves
    no file behind.
    """
    content_type = _check_photo(data)
    if step is not None and step.server_id != server.pk:
        raise InvalidInput("step", "the step belongs to another server.")
    photo = save_with_file(
        BuildPhoto(
            server=server,
            step=step,
            content_type=content_type,
            size_bytes=len(data),
            uploaded_by=user_or_none(actor),
        ),
        field="file",
        content=data,
        filename="upload",
    )
    audit(
        actor=actor,
        verb="server.photo",
        obj=server,
        after={"photo": photo.pk, "type": content_type, "bytes": len(data)},
    )
    return photo


@transaction.atomic
def step_log(
    *,
    server: Server,
    actor: Any,
    kind: str,
    notes: str = "",
    data: dict | None = None,
    photos: Iterable[bytes] = (),
) -> BuildStep:
    """Log one build step, with optional measurements (`data`) and photos, each checked before anything is
    saved."""
    if kind not in BuildStepKind.values:
        raise InvalidInput("kind", f"unknown step {kind!r}; one of {', '.join(BuildStepKind.values)}.")
    photos = list(photos)
    for number, photo in enumerate(photos, start=1):
        _check_photo(photo, field="photos", which=f"photo {number} of {len(photos)} ")
    locked = lock_server(server)
    step = BuildStep.objects.create(
        server=locked, kind=kind, actor=user_or_none(actor), notes=notes, data=data or {}
    )
    for photo in photos:
        photo_upload(server=locked, actor=actor, data=photo, step=step)
    audit(actor=actor, verb="server.step", obj=locked, after={"kind": kind}, note=notes)
    return step
