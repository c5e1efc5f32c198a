"""Files attached to a warranty claim: the logs and photos a customer sends with a claim, when filing it
(`claim_open(..., attachments=...)`) or afterwards while it is in progress (`claim_attach`).

Each file is checked by its content, never by its name, as the bench's photos are
(`builds.services.photo_check`):

- An image header (JPEG, PNG, WebP; HEIC is named as such) makes it a photo: decoded in full, bounded by
  WERKBANK_MAX_PHOTO_BYTES and WERKBANK_MAX_PHOTO_PIXELS, and stored re-encoded (no EXIF, nothing appended).
- Anything else is a log, refused above WERKBANK_MAX_CLAIM_LOG_BYTES: gzip (inflated in full, its CRC
  checked), ZIP (every member read and CRC-checked; none encrypted), both bounded by
  WERKBANK_MAX_CLAIM_LOG_UNPACKED_BYTES so that a small bomb stops there, or plain text (UTF-8 without a
  NUL byte). A log is stored as it came.

A file that passes neither is a 400 naming the field and the rule. The stored file has a generated name
with the extension of its detected type (`warranty.models.attachment_upload_to`) and is written only after
the commit (`werkbank.files.save_with_file`); the uploader's file name is kept as text, for the download.
The same bytes twice on one claim, a claim no longer in progress (rejected, dismissed, closed), and a claim
holding WERKBANK_MAX_CLAIM_ATTACHMENTS files already are refused with a 409.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import re
import unicodedata
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from django.conf import settings
from django.db import transaction
from django.utils.translation import gettext as _

from builds.services.steps import HEIC_BRANDS, PHOTO_FORMATS_WITH_WEBP, photo_check
from warranty.choices import CLAIM_OPEN, AttachmentKind, ClaimStatus
from warranty.models import ClaimAttachment, WarrantyClaim
from werkbank.audit import audit, user_or_none
from werkbank.errors import InvalidInput, RuleViolation, UnknownObject
from werkbank.files import save_with_file
from werkbank.types import Actor

#: A ZIP of logs holds a few dozen files; a ZIP of many thousands is no log bundle.
MAX_ZIP_MEMBERS = 1000
ZIP_METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
#: What zipfile raises for a damaged archive: a bad CRC or header, a truncated member, an unknown method.
UNREADABLE_ZIP = (
    zipfile.BadZipFile,
    OSError,
    EOFError,
    zlib.error,
    NotImplementedError,
    RuntimeError,
    ValueError,
)
NAME_LENGTH = 200
CHUNK = 1 << 20


def attachment_limit() -> int:
    """The most bytes any attachment may have: a photo's limit or a log's, whichever is larger."""
    return max(settings.WERKBANK_MAX_PHOTO_BYTES, settings.WERKBANK_MAX_CLAIM_LOG_BYTES)


class Upload(NamedTuple):
    """A file as it came: the name the uploader gave it (kept as text only) and its bytes."""

    name: str
    data: bytes

    @classmethod
    def of(cls, upload: Any) -> Upload:
        """An uploaded file (a form's or the API's) as the services take it: read to one byte past the
        largest limit, which is enough to refuse it, whatever the request claims its size is."""
        return cls(name=getattr(upload, "name", "") or "", data=upload.read(attachment_limit() + 1))


@dataclass(frozen=True)
class CheckedAttachment:
    """An upload that passed the check: what it is and the bytes to store (a photo's re-encoded)."""

    kind: str
    content_type: str
    data: bytes
    detail: str  # for the audit row: a photo's pixels, a compressed log's unpacked size


def _accepted() -> str:
    return _("Werkbank accepts logs as plain text (UTF-8), gzip or ZIP, and photos as JPEG, PNG or WebP.")


def _refused(field: str, which: str, message: str) -> InvalidInput:
    return InvalidInput(field, f"{which}{message}")


def _looks_like_image(data: bytes) -> bool:
    return (
        data.startswith((b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n"))
        or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")
        or (data[4:8] == b"ftyp" and data[8:12] in HEIC_BRANDS)
    )


def _too_big_unpacked(field: str, which: str) -> InvalidInput:
    bound = settings.WERKBANK_MAX_CLAIM_LOG_UNPACKED_BYTES
    return _refused(
        field,
        which,
        _("unpacks to more than %(limit)s bytes; a compressed log may unpack to at most that.")
        % {"limit": f"{bound:,}"},
    )


def _counted(chunks: Iterator[bytes], *, field: str, which: str) -> int:
    """Read a stream to its end, refusing it past the unpacked bound; returns the bytes it gave."""
    bound, total = settings.WERKBANK_MAX_CLAIM_LOG_UNPACKED_BYTES, 0
    for chunk in chunks:
        total += len(chunk)
        if total > bound:
            raise _too_big_unpacked(field, which)
    return total


def _chunks(stream: Any) -> Iterator[bytes]:
    while chunk := stream.read(CHUNK):
        yield chunk


def _check_gzip(data: bytes, *, field: str, which: str) -> int:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as stream:
            return _counted(_chunks(stream), field=field, which=which)
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise _refused(
            field, which, _("is not a gzip file that unpacks in full (checked by its content).")
        ) from exc


def _check_zip(data: bytes, *, field: str, which: str) -> int:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if len(members) > MAX_ZIP_MEMBERS:
                raise _refused(
                    field,
                    which,
                    _("holds %(count)s files; a ZIP of logs may hold at most %(limit)s.")
                    % {"count": f"{len(members):,}", "limit": f"{MAX_ZIP_MEMBERS:,}"},
                )
            if any(member.flag_bits & 0x1 for member in members):
                raise _refused(
                    field, which, _("holds an encrypted file; attach the logs without a password.")
                )
            # bzip2 and LZMA inflate a whole chunk at once, unbounded: only what zip tools write by default.
            if any(member.compress_type not in ZIP_METHODS for member in members):
                raise _refused(
                    field, which, _("uses a compression other than deflate; zip the logs with the defaults.")
                )
            # Each member is read at most to its declared size (zipfile cuts it there, then checks its CRC),
            # so the declared sizes bound what is inflated.
            if sum(member.file_size for member in members) > settings.WERKBANK_MAX_CLAIM_LOG_UNPACKED_BYTES:
                raise _too_big_unpacked(field, which)
            total = 0
            for member in members:
                with archive.open(member) as stream:
                    total += _counted(_chunks(stream), field=field, which=which)
            return total
    except UNREADABLE_ZIP as exc:
        raise _refused(
            field, which, _("is not a ZIP file that unpacks in full (checked by its content).")
        ) from exc


def _check_text(data: bytes, *, field: str, which: str) -> None:
    if b"\x00" in data:
        rule = _("is not plain text: it holds NUL bytes (a binary file).")
        raise _refused(field, which, f"{rule} {_accepted()}")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        rule = _("is not plain text: byte %(offset)s is not UTF-8.") % {"offset": f"{exc.start:,}"}
        raise _refused(field, which, f"{rule} {_accepted()}") from exc


def attachment_check(data: bytes, *, field: str = "file", which: str = "") -> CheckedAttachment:
    """What an upload is, by its content, and what to store of it; else a 400 naming `field` (and `which`
    file) and the rule it broke. See the module's docstring for the rules."""
    if not data:
        raise _refused(field, which, _("is empty."))
    if _looks_like_image(data):
        photo = photo_check(data, field=field, which=which, formats=PHOTO_FORMATS_WITH_WEBP)
        return CheckedAttachment(
            AttachmentKind.PHOTO, photo.content_type, photo.data, f"{photo.width}×{photo.height}"
        )
    limit = settings.WERKBANK_MAX_CLAIM_LOG_BYTES
    if len(data) > limit:
        raise _refused(
            field,
            which,
            _("is %(size)s bytes; a log may have at most %(limit)s bytes (compress it with gzip or ZIP).")
            % {"size": f"{len(data):,}", "limit": f"{limit:,}"},
        )
    if data.startswith(b"\x1f\x8b"):
        unpacked = _check_gzip(data, field=field, which=which)
        return CheckedAttachment(AttachmentKind.LOG, "application/gzip", data, f"{unpacked:,} bytes unpacked")
    if data.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        unpacked = _check_zip(data, field=field, which=which)
        return CheckedAttachment(AttachmentKind.LOG, "application/zip", data, f"{unpacked:,} bytes unpacked")
    _check_text(data, field=field, which=which)
    return CheckedAttachment(AttachmentKind.LOG, "text/plain", data, "text")


def clean_name(name: str) -> str:
    """The uploader's file name as text to show: its last path part, without control or format characters
    (a right-to-left override would disguise its extension), at most 200 characters with its extension."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C").strip()
    if len(base) > NAME_LENGTH:
        _stem, dot, suffix = base.rpartition(".")
        tail = f".{suffix}" if dot and len(suffix) < 20 else ""
        base = base[: NAME_LENGTH - len(tail)] + tail
    return base or "attachment"


def _lock_visible(claim: WarrantyClaim, actor: Actor) -> WarrantyClaim:
    locked = (
        WarrantyClaim.objects.visible_to(actor).select_for_update(of=("self",)).filter(pk=claim.pk).first()
    )
    if locked is None:
        raise UnknownObject("claim", "no claim with this id.")
    return locked


def attachment_store(
    *, claim: WarrantyClaim, actor: Actor, name: str, checked: CheckedAttachment, uploaded_bytes: int
) -> ClaimAttachment:
    """Store one checked file on a claim the caller has locked and found in progress: refused (409) for
    bytes the claim holds already and past the claim's cap. Audited (`warranty.claim_attach`)."""
    existing = ClaimAttachment.objects.filter(claim=claim)
    digest = hashlib.sha256(checked.data).hexdigest()
    same = existing.filter(sha256=digest).values_list("original_name", flat=True).first()
    if same is not None:
        raise RuleViolation(
            _("This file is already attached to claim %(number)s, as %(name)s.")
            % {"number": claim.number, "name": same},
            code="attachment_duplicate",
        )
    cap = settings.WERKBANK_MAX_CLAIM_ATTACHMENTS
    if existing.count() >= cap:
        raise RuleViolation(
            _("Claim %(number)s holds %(count)s files already, the most a claim takes.")
            % {"number": claim.number, "count": cap},
            code="attachments_full",
        )
    attachment = save_with_file(
        ClaimAttachment(
            claim=claim,
            kind=checked.kind,
            content_type=checked.content_type,
            original_name=clean_name(name),
            size_bytes=len(checked.data),
            sha256=digest,
            uploaded_by=user_or_none(actor),
        ),
        field="file",
        content=checked.data,
        filename="upload",
    )
    audit(
        actor=actor,
        verb="warranty.claim_attach",
        obj=claim,
        after={
            "attachment": attachment.pk,
            "kind": checked.kind,
            "name": attachment.original_name,
            "type": checked.content_type,
            "bytes": attachment.size_bytes,
            "uploaded_bytes": uploaded_bytes,
            "sha256": digest,
            "detail": checked.detail,
        },
    )
    return attachment


@transaction.atomic
def claim_attach(
    *, claim: WarrantyClaim, actor: Actor, upload: Upload, field: str = "file"
) -> ClaimAttachment:
    """Attach a log or a photo to a claim in progress (draft, open, approved, replacement shipped) that the
    actor sees: its customer's members and PMs; anyone else gets a 404. The file is checked by its content
    first (400 naming `field`), then stored after the commit and audited (`warranty.claim_attach`)."""
    checked = attachment_check(upload.data, field=field)
    locked = _lock_visible(claim, actor)
    if locked.status not in CLAIM_OPEN:
        raise RuleViolation(
            _("Claim %(number)s is %(status)s: files are attached only while a claim is in progress.")
            % {"number": locked.number, "status": ClaimStatus(locked.status).label},
            code="claim_not_in_progress",
        )
    return attachment_store(
        claim=locked, actor=actor, name=upload.name, checked=checked, uploaded_bytes=len(upload.data)
    )
