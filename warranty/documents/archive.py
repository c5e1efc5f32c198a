"""The pack's ZIP: its files, the manifest with their SHA-256 and size, the manifest's signature, and the
checks of a ZIP against its manifest and signature.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zipfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from warranty.signing import PublicKey, SignatureCheck, SignatureStatus, sign, verify

PDF_NAME, CSV_NAME, REPORT_NAME, MANIFEST_NAME = (
    "handover.pdf",
    "telemetry.csv",
    "probe-report.json",
    "manifest.json",
)


SIGNATURE_NAME = "manifest.sig.json"


#: 2: the manifest is signed (SIGNATURE_NAME); 1: packs made before signing, which have no signature.
MANIFEST_FORMAT = 2


ISSUER = "Werkbank"


#: A manifest lists a handful of files: anything larger is not one, and is not parsed.
MAX_MANIFEST_BYTES = 1024 * 1024


def _sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def probe_report_json(run: Any) -> bytes | None:
    """The raw report the probe uploaded (stored gzip-compressed by burn-in), or None when it is missing."""
    if run is None or not run.report:
        return None
    try:
        with run.report.open("rb") as stored:
            raw = stored.read()
    except (FileNotFoundError, OSError):
        return None
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def pack_zip(
    *,
    pdf: bytes,
    telemetry_csv: bytes,
    report: bytes | None,
    server: Any,
    revision: int,
    language: str,
    generated_at: datetime,
) -> bytes:
    """The ZIP of a pack: the PDF, the telemetry CSV, the raw report (when stored), manifest.json, and the
    manifest's signature by this installation's newest key (manifest.sig.json)."""
    files = [(PDF_NAME, pdf), (CSV_NAME, telemetry_csv)]
    if report is not None:
        files.append((REPORT_NAME, report))
    manifest = {
        "format": MANIFEST_FORMAT,
        "issuer": ISSUER,
        "server": server.asset_tag,
        "hostname": server.hostname,
        "revision": revision,
        "language": language,
        "generated_at": generated_at.isoformat(),
        "files": [
            {"name": name, "sha256": _sha256(content), "size": len(content)} for name, content in files
        ],
    }
    if report is None:
        manifest["missing"] = {REPORT_NAME: "The probe's raw report is not stored for this run."}
    manifest_bytes = json.dumps(manifest, indent=2).encode()
    # Over the exact bytes stored: a verifier hashes what it reads, never a re-serialised manifest.
    signature = json.dumps(sign(manifest_bytes), indent=2).encode()
    buffer = io.BytesIO()
    stamp = generated_at.timetuple()[:6]
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in [*files, (MANIFEST_NAME, manifest_bytes), (SIGNATURE_NAME, signature)]:
            info = zipfile.ZipInfo(name, date_time=stamp)
            # The PDF's streams are compressed already; the CSV and JSON shrink about tenfold.
            info.compress_type = zipfile.ZIP_STORED if name == PDF_NAME else zipfile.ZIP_DEFLATED
            archive.writestr(info, content, compresslevel=6)
    return buffer.getvalue()


#: What reading a damaged or hostile member can raise: a bad CRC or header, a broken deflate stream, a
#: truncated file, an encrypted entry, a compression method zipfile lacks.
_UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError)


@dataclass(frozen=True)
class PackCheck:
    """What `check_pack` found: whether the ZIP and its manifest could be read, the manifest (when it could),
    each problem with the files against the manifest, and the signature's check.

    `verified` is the one answer that says "this pack is as Werkbank issued it": every file as the manifest
    says and the manifest signed by a given key.
    """

    readable: bool
    manifest: dict[str, Any] | None
    problems: list[str]
    signature: SignatureCheck

    @property
    def files_match(self) -> bool:
        return self.readable and not self.problems

    @property
    def verified(self) -> bool:
        return self.files_match and self.signature.valid


def _digest(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[str, int]:
    """SHA-256 and size of one member, read in chunks: a large telemetry CSV never sits whole in memory."""
    digest, size = hashlib.sha256(), 0
    with archive.open(info) as member:
        while chunk := member.read(1024 * 1024):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _unreadable(problem: str) -> PackCheck:
    return PackCheck(False, None, [problem], SignatureCheck(SignatureStatus.MALFORMED, message=problem))


def check_pack(
    source: str | Path | IO[bytes],
    *,
    keys: Sequence[PublicKey],
    max_unpacked_bytes: int | None = None,
) -> PackCheck:
    """Check a pack's ZIP: the manifest's signature against `keys`, and every file against the manifest.

    Every file the manifest lists must be there once with its SHA-256 and size, and nothing else may be but
    the manifest and its signature. A format-2 manifest without its signature fails (the signature was
    removed); a format-1 manifest is an old, unsigned pack. `max_unpacked_bytes` bounds what an untrusted
    upload may unpack to (by the sizes the ZIP declares, which zipfile never reads past), so that a small
    ZIP cannot make the server inflate gigabytes.
    """
    try:
        archive = zipfile.ZipFile(source)
    except (*_UNREADABLE, ValueError) as error:
        return _unreadable(f"Not a readable ZIP file: {error}")
    with archive:
        infos = archive.infolist()
        counts: dict[str, int] = {}
        for info in infos:
            counts[info.filename] = counts.get(info.filename, 0) + 1
        duplicated = sorted(name for name, count in counts.items() if count > 1)
        if duplicated:
            return _unreadable(f"{', '.join(duplicated)}: more than once in the ZIP.")
        unpacked = sum(info.file_size for info in infos)
        if max_unpacked_bytes is not None and unpacked > max_unpacked_bytes:
            return _unreadable(
                f"The ZIP unpacks to {unpacked:,} bytes, more than the {max_unpacked_bytes:,} a handover "
                "pack may have here."
            )
        by_name = {info.filename: info for info in infos}
        if MANIFEST_NAME not in by_name:
            return _unreadable(f"{MANIFEST_NAME} is missing.")
        if by_name[MANIFEST_NAME].file_size > MAX_MANIFEST_BYTES:
            return _unreadable(f"{MANIFEST_NAME} is larger than {MAX_MANIFEST_BYTES:,} bytes.")
        try:
            manifest_bytes = archive.read(MANIFEST_NAME)
            manifest = json.loads(manifest_bytes)
            listed = {entry["name"]: entry for entry in manifest["files"]}
            if not all(isinstance(name, str) and isinstance(entry, dict) for name, entry in listed.items()):
                raise TypeError("every file is an object with a name")
        except (*_UNREADABLE, ValueError, KeyError, TypeError) as error:
            return _unreadable(f"{MANIFEST_NAME} cannot be read: {error}")
        signature = _check_signature(archive, by_name, manifest_bytes, manifest, keys)
        problems = []
        for name, entry in sorted(listed.items()):
            if name not in by_name:
                problems.append(f"{name}: listed in the manifest but missing from the ZIP.")
                continue
            try:
                sha256, size = _digest(archive, by_name[name])
            except _UNREADABLE as error:
                problems.append(f"{name}: cannot be read from the ZIP: {error}")
                continue
            if size != entry.get("size"):
                problems.append(f"{name}: {size} bytes, the manifest says {entry.get('size')}.")
            if sha256 != entry.get("sha256"):
                problems.append(f"{name}: SHA-256 {sha256} does not match the manifest's.")
        for name in sorted(set(by_name) - set(listed) - {MANIFEST_NAME, SIGNATURE_NAME}):
            problems.append(f"{name}: not listed in the manifest.")
        return PackCheck(True, manifest, problems, signature)


def _check_signature(
    archive: zipfile.ZipFile,
    by_name: dict[str, zipfile.ZipInfo],
    manifest_bytes: bytes,
    manifest: Any,
    keys: Sequence[PublicKey],
) -> SignatureCheck:
    info = by_name.get(SIGNATURE_NAME)
    if info is None:
        signed_format = isinstance(manifest, dict) and manifest.get("format") != 1
        if signed_format:
            return SignatureCheck(
                SignatureStatus.INVALID,
                message=f"{SIGNATURE_NAME} is missing, but this manifest's format is always signed: "
                "the signature was removed",
            )
        return verify(data=manifest_bytes, signature=None, keys=keys)
    if info.file_size > MAX_MANIFEST_BYTES:
        return SignatureCheck(SignatureStatus.MALFORMED, message=f"{SIGNATURE_NAME} is too large")
    try:
        content = archive.read(info)
    except _UNREADABLE as error:
        return SignatureCheck(SignatureStatus.MALFORMED, message=f"{SIGNATURE_NAME} cannot be read: {error}")
    return verify(data=manifest_bytes, signature=content, keys=keys)


def verify_zip(source: str | Path | IO[bytes]) -> list[str]:
    """What is wrong with a pack ZIP's files against its manifest, one sentence per file; empty when they
    match. The signature is `check_pack`'s; this is the check that needs no key."""
    return check_pack(source, keys=()).problems
