"""Signed handover packs (issue 22, part 4): the ZIP's manifest.json is signed with Ed25519
(manifest.sig.json), and `manage.py verify-pack` checks the signature, against this installation's keys or
a key file saved from /verify/keys.json, as well as every file's SHA-256 and size, saying which failed.

A real pack is rendered by the task (pack_request, run eagerly on commit) for the warranty tests' deployed
server; the rotation cases sign small ZIPs with the real `pack_zip` under keys set by override_settings."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.core.management import call_command
from django.core.management.base import CommandError, SystemCheckError
from django.test import Client, override_settings

from tests.warranty.handover_rig import World
from tests.warranty.packs_rig import rehashed_forgery
from warranty.documents import check_pack, pack_zip
from warranty.models import HandoverPack
from warranty.services.packs import pack_request
from warranty.signing import (
    SignatureStatus,
    check_signing_keys,
    key_id,
    parse_keys_document,
    private_key_from_text,
    signing_keys,
)

K1 = base64.b64encode(bytes(range(32))).decode()  # the older key
K2 = base64.b64encode(bytes(range(100, 132))).decode()  # the newer key, put in front at rotation
AT = datetime(2026, 3, 2, 9, 30, tzinfo=UTC)


def _id(seed: str) -> str:
    return key_id(private_key_from_text(seed).public_key())


def _small_zip(*, revision: int = 1) -> bytes:
    """A pack ZIP of the real `pack_zip`, signed by the newest configured key, with small contents."""
    server = SimpleNamespace(asset_tag="WB-2026-0042-01", hostname="wb-2026-0042-01")
    return pack_zip(
        pdf=b"%PDF-1.7 a handover pack",
        telemetry_csv=b"gpu_index,at,temp_c\n0,2026-03-01T00:00:00Z,61.5\n",
        report=b'{"schema_version": "1.0.0"}',
        server=server,
        revision=revision,
        language="en",
        generated_at=AT,
    )


def _members(content: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _verify(path: Path, *args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("verify-pack", str(path), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _refused(path: Path, *args: str) -> tuple[str, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError) as refusal:
        call_command("verify-pack", str(path), *args, stdout=out, stderr=err)
    return str(refusal.value), out.getvalue(), err.getvalue()


def _write(tmp_path: Path, name: str, content: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(content)
    return path


@pytest.fixture
def real_pack(world: World, django_capture_on_commit_callbacks) -> tuple[HandoverPack, bytes]:
    """A pack rendered and stored by the task, with its ZIP's bytes."""
    with django_capture_on_commit_callbacks(execute=True):
        pack, _ = pack_request(server=world.server, actor=world.t.pm, language="en")
    pack.refresh_from_db()
    assert pack.status == "ready", pack.error
    return pack, pack.zip.read()


@pytest.mark.django_db
def test_a_real_pack_is_signed_and_verifies(real_pack, tmp_path):
    pack, content = real_pack
    members = _members(content)
    # This server has no burn-in run, so no raw report (the manifest says so under "missing").
    assert sorted(members) == ["handover.pdf", "manifest.json", "manifest.sig.json", "telemetry.csv"]
    # The manifest names the pack, so the signature binds the asset tag, revision and date too.
    manifest = json.loads(members["manifest.json"])
    assert (manifest["format"], manifest["issuer"], manifest["server"], manifest["revision"]) == (
        2,
        "Werkbank",
        pack.server.asset_tag,
        pack.revision,
    )
    assert datetime.fromisoformat(manifest["generated_at"]) <= pack.finished_at
    signature = json.loads(members["manifest.sig.json"])
    newest = signing_keys()[0].public
    assert set(signature) == {"algorithm", "key_id", "signature"}
    assert (signature["algorithm"], signature["key_id"]) == ("Ed25519", newest.key_id)
    # The key id: the first 16 hex digits of the SHA-256 of the raw 32-byte public key.
    assert newest.key_id == hashlib.sha256(newest.raw).hexdigest()[:16] and len(newest.raw) == 32
    # Over the exact bytes of manifest.json, checkable with nothing but the public key.
    newest.key.verify(base64.b64decode(signature["signature"]), members["manifest.json"])

    out, err = _verify(_write(tmp_path, "pack.zip", content))
    assert f"pack {pack.server.asset_tag} revision {pack.revision} (en)" in out
    assert f"signature: valid, by key {newest.key_id} (the current signing key)." in out
    assert "files: every file matches the manifest." in out
    assert "the pack verifies" in out and err == ""


@pytest.mark.django_db
def test_one_changed_byte_fails(real_pack, tmp_path):
    _, content = real_pack
    # A byte inside the stored PDF, past the ZIP's local header: zipfile's CRC or our SHA-256 catches it.
    offset = content.index(b"%PDF") + 200
    flipped = content[:offset] + bytes([content[offset] ^ 0x01]) + content[offset + 1 :]
    message, _, err = _refused(_write(tmp_path, "flipped.zip", flipped))
    assert "does not verify" in message and "file problem" in message
    assert "files: handover.pdf:" in err

    # One byte of a member, the ZIP written anew around it (CRC fine): the SHA-256 fails, the signature not.
    members = _members(content)
    csv = members["telemetry.csv"]
    members["telemetry.csv"] = csv[:-2] + bytes([csv[-2] ^ 0x01]) + csv[-1:]
    message, out, err = _refused(_write(tmp_path, "edited.zip", _zip(members)))
    assert "1 file problem(s)" in message and "signature failed" not in message
    assert "signature: valid" in out
    assert "files: telemetry.csv: SHA-256" in err


@pytest.mark.django_db
def test_a_changed_file_with_its_manifest_rehashed_fails_on_the_signature(real_pack, tmp_path):
    _, content = real_pack
    forged = b"gpu_index,at,temp_c\n0,2026-03-01T00:00:00Z,55.0\n"  # a cooler run than was measured
    path = _write(tmp_path, "rehashed.zip", rehashed_forgery(content, forged))

    message, out, err = _refused(path)
    assert "signature failed" in message and "file problem" not in message
    assert "files: every file matches the manifest." in out  # the hashes agree: only the signature tells
    assert "signature: FAILED: the signature by key" in err and "changed after signing" in err
    assert check_pack(path, keys=[signing_keys()[0].public]).signature.status == SignatureStatus.INVALID


@pytest.mark.django_db
def test_a_pack_signed_by_an_older_key_still_verifies_after_rotation(tmp_path):
    with override_settings(WERKBANK_SIGNING_KEYS=[K1]):
        old = _write(tmp_path, "old.zip", _small_zip())
        assert json.loads(_members(old.read_bytes())["manifest.sig.json"])["key_id"] == _id(K1)

    with override_settings(WERKBANK_SIGNING_KEYS=[K2, K1]):  # rotated: the new key in front
        new = _write(tmp_path, "new.zip", _small_zip(revision=2))
        assert json.loads(_members(new.read_bytes())["manifest.sig.json"])["key_id"] == _id(K2)
        out, _ = _verify(old)
        assert f"signature: valid, by key {_id(K1)} (an older key)." in out
        out, _ = _verify(new)
        assert f"signature: valid, by key {_id(K2)} (the current signing key)." in out
        # Offline: the key file saved from /verify/keys.json, no login needed.
        published = Client().get("/verify/keys.json?download=1")
        keyfile = _write(tmp_path, "werkbank-signing-keys.json", published.content)
        assert [key["key_id"] for key in json.loads(published.content)["keys"]] == [_id(K2), _id(K1)]

    with override_settings(WERKBANK_SIGNING_KEYS=[K2]):  # the old key dropped from this installation...
        message, _, err = _refused(old)
        assert "signature failed" in message and f"signed by key {_id(K1)}, which is not known" in err
        out, _ = _verify(old, "--keys", str(keyfile))  # ...the saved key file still has it
        assert "the pack verifies" in out

    # A key file without the signing key: refused, whatever this installation's keys are.
    only_new = _write(tmp_path, "only-new.json", json.dumps({"keys": [_key_entry(K2)]}).encode())
    with override_settings(WERKBANK_SIGNING_KEYS=[K2, K1]):
        message, _, err = _refused(old, "--keys", str(only_new))
    assert "signature failed" in message and "which is not known" in err


def _key_entry(seed: str) -> dict[str, str]:
    raw = private_key_from_text(seed).public_key().public_bytes_raw()
    return {"key_id": _id(seed), "algorithm": "Ed25519", "public_key": base64.b64encode(raw).decode()}


@pytest.mark.django_db
def test_an_old_unsigned_pack_says_not_signed_and_a_removed_signature_fails(tmp_path):
    with override_settings(WERKBANK_SIGNING_KEYS=[K1]):
        members = _members(_small_zip())
    stripped = {name: data for name, data in members.items() if name != "manifest.sig.json"}
    # A new pack whose signature was removed: its manifest's format is always signed.
    message, _, err = _refused(_write(tmp_path, "stripped.zip", _zip(stripped)))
    assert "signature failed" in message and "the signature was removed" in err

    # A pack from before signing: format 1, no signature file.
    manifest = json.loads(stripped["manifest.json"])
    manifest["format"] = 1
    del manifest["issuer"]
    stripped["manifest.json"] = json.dumps(manifest, indent=2).encode()
    old = _write(tmp_path, "unsigned.zip", _zip(stripped))
    message, out, err = _refused(old)
    assert "not signed" in message
    assert "signature: not signed" in err and "files: every file matches the manifest." in out
    out, _ = _verify(old, "--allow-unsigned")
    assert "the pack verifies" in out


@pytest.mark.django_db
def test_verify_pack_explains_a_file_that_is_not_a_pack_and_a_bad_key_file(tmp_path):
    message, _, err = _refused(_write(tmp_path, "not.zip", b"not a zip at all"))
    assert "not a readable handover pack" in message and "Not a readable ZIP file" in err
    with pytest.raises(CommandError, match="no such file"):
        call_command("verify-pack", str(tmp_path / "absent.zip"))
    pack = _write(tmp_path, "pack.zip", _small_zip())
    with pytest.raises(CommandError, match="not a key file"):
        call_command("verify-pack", str(pack), "--keys", str(_write(tmp_path, "k.json", b"[]")))
    # An entry whose id is not its key's cannot pass one key off as another.
    lying = {"keys": [{**_key_entry(K2), "key_id": _id(K1)}]}
    with pytest.raises(CommandError, match="is not its key's"):
        call_command(
            "verify-pack", str(pack), "--keys", str(_write(tmp_path, "l.json", json.dumps(lying).encode()))
        )


def test_the_keys_come_from_the_setting_newest_first_and_a_development_key_otherwise(caplog):
    with override_settings(WERKBANK_SIGNING_KEYS=[K2, K1]):
        assert [key.public.key_id for key in signing_keys()] == [_id(K2), _id(K1)]
    # No key: one derived from SECRET_KEY, the same every time, and the log says so.
    dev = override_settings(WERKBANK_SIGNING_KEYS=[], SECRET_KEY="another-dev-secret-for-this-test-only")
    with caplog.at_level(logging.WARNING, logger="warranty.signing"), dev:
        derived = signing_keys()
        assert len(derived) == 1 and signing_keys()[0].public == derived[0].public
    assert "WERKBANK_SIGNING_KEYS is not set" in caplog.text and "derived from SECRET_KEY" in caplog.text
    seed = hashlib.sha256(b"werkbank-signing:another-dev-secret-for-this-test-only").digest()
    assert derived[0].public.key_id == key_id(Ed25519PrivateKey.from_private_bytes(seed).public_key())
    # URL-safe base64 is taken as well; a key file round-trips.
    urlsafe = base64.urlsafe_b64encode(bytes(range(100, 132))).decode()
    assert _id(urlsafe) == _id(K2)
    assert [key.key_id for key in parse_keys_document(json.dumps({"keys": [_key_entry(K1)]}))] == [_id(K1)]


def test_production_without_a_key_or_with_a_malformed_one_is_a_system_check_error():
    with override_settings(PRODUCTION=True, WERKBANK_SIGNING_KEYS=[]):
        assert [error.id for error in check_signing_keys()] == ["warranty.E002"]
        with pytest.raises(SystemCheckError, match="WERKBANK_SIGNING_KEYS is required"):
            call_command("check")
    short = base64.b64encode(b"too short").decode()
    with override_settings(PRODUCTION=True, WERKBANK_SIGNING_KEYS=[K1, short]):
        errors = check_signing_keys()
        assert [error.id for error in errors] == ["warranty.E001"]
        assert "key 2 decodes to 9 bytes; an Ed25519 seed is 32" in errors[0].msg
    with override_settings(WERKBANK_SIGNING_KEYS=["not base64!"]):  # malformed fails in development too
        assert [error.id for error in check_signing_keys()] == ["warranty.E001"]
    with override_settings(PRODUCTION=True, WERKBANK_SIGNING_KEYS=[K2, K1]):
        assert check_signing_keys() == []
    with override_settings(PRODUCTION=False, WERKBANK_SIGNING_KEYS=[]):
        assert check_signing_keys() == []  # development derives its key
