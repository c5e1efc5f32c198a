"""Signed handover packs: Ed25519 over the exact bytes of a pack's `manifest.json`.

The manifest lists every file of the pack with its SHA-256 and size and names the pack (asset tag, revision,
language, generation time), so one signature over it binds all of them: whoever rewrites a file must rewrite
the manifest, and cannot sign the new one. The signature travels next to the manifest in the ZIP as
`manifest.sig.json` (`{"algorithm": "Ed25519", "key_id": ..., "signature": base64}`).

Keys come from `WERKBANK_SIGNING_KEYS`: comma-separated base64 Ed25519 private keys (the 32-byte raw seed),
newest first, as `WERKBANK_SECRETS_KEYS` does for Fernet: the first signs, every one verifies, so a key is
rotated by putting a new one in front and keeping the old ones for as long as their packs must verify.
Production without a key, or with one that is not a 32-byte seed, is a system check error
(`check_signing_keys`, registered by the app); development derives a key from SECRET_KEY, and logs so,
that `make demo` needs no set-up.

The public halves are published at `/verify/keys.json` (warranty/views.py) in the document `keys_document`
writes and `parse_keys_document` reads, so that anyone can check a pack offline (`manage.py verify-pack
--keys`). A key id is the first 16 hex digits of the SHA-256 of the raw 32-byte public key: short enough
to read out, long enough that two keys of one installation never share one.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger(__name__)

ALGORITHM = "Ed25519"
KEYS_SETTING = "WERKBANK_SIGNING_KEYS"
SEED_BYTES = 32


class SigningKeyError(ValueError):
    """A configured or published key that is not what it must be (the message says which and why)."""


@dataclass(frozen=True)
class PublicKey:
    """One verifying key, as published: its id and the raw 32-byte Ed25519 public key."""

    key_id: str
    key: Ed25519PublicKey

    @property
    def raw(self) -> bytes:
        return self.key.public_bytes(Encoding.Raw, PublicFormat.Raw)

    def as_json(self) -> dict[str, str]:
        return {
            "key_id": self.key_id,
            "algorithm": ALGORITHM,
            "public_key": base64.b64encode(self.raw).decode("ascii"),
        }


@dataclass(frozen=True)
class SigningKey:
    """One configured private key with its public half."""

    private: Ed25519PrivateKey
    public: PublicKey


class SignatureStatus(StrEnum):
    VALID = "valid"
    INVALID = "invalid"  # the signature does not match the manifest: one of them was changed
    UNKNOWN_KEY = "unknown_key"  # signed by a key that is not among the given ones
    MALFORMED = "malformed"  # the signature file cannot be read
    UNSIGNED = "unsigned"  # no signature file at all (packs made before packs were signed)


@dataclass(frozen=True)
class SignatureCheck:
    """The answer of `verify`: the status, the key id the signature names (when it names one), a sentence."""

    status: SignatureStatus
    key_id: str = ""
    message: str = ""

    @property
    def valid(self) -> bool:
        return self.status == SignatureStatus.VALID


def key_id(public: Ed25519PublicKey) -> str:
    """The first 16 hex digits of the SHA-256 of the raw public key."""
    return hashlib.sha256(public.public_bytes(Encoding.Raw, PublicFormat.Raw)).hexdigest()[:16]


def _public(public: Ed25519PublicKey) -> PublicKey:
    return PublicKey(key_id=key_id(public), key=public)


def _b64decode(value: str) -> bytes:
    """Standard or URL-safe base64, padding required: a typo fails here rather than yielding another key."""
    text = value.strip().replace("-", "+").replace("_", "/")
    return base64.b64decode(text.encode("ascii"), validate=True)


def private_key_from_text(value: str) -> Ed25519PrivateKey:
    """An Ed25519 private key from its base64 32-byte seed; `SigningKeyError` says what is wrong."""
    try:
        seed = _b64decode(value)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise SigningKeyError("is not base64") from None
    if len(seed) != SEED_BYTES:
        raise SigningKeyError(f"decodes to {len(seed)} bytes; an Ed25519 seed is {SEED_BYTES}")
    return Ed25519PrivateKey.from_private_bytes(seed)


def private_key_text(private: Ed25519PrivateKey) -> str:
    """The base64 seed of a private key, as `WERKBANK_SIGNING_KEYS` takes it (README says how to make one)."""
    raw = private.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    return base64.b64encode(raw).decode("ascii")


def _development_seed() -> bytes:
    return hashlib.sha256(f"werkbank-signing:{settings.SECRET_KEY}".encode()).digest()


@lru_cache(maxsize=4)
def _load(values: tuple[str, ...], secret_key: str, production: bool) -> tuple[SigningKey, ...]:
    privates: list[Ed25519PrivateKey] = []
    for position, value in enumerate(values, start=1):
        try:
            privates.append(private_key_from_text(value))
        except SigningKeyError as error:
            raise ImproperlyConfigured(f"{KEYS_SETTING}: key {position} {error}.") from None
    if not privates:
        if production:
            raise ImproperlyConfigured(f"{KEYS_SETTING} is required when WERKBANK_ENV=production.")
        privates = [Ed25519PrivateKey.from_private_bytes(_development_seed())]
        logger.warning(
            "%s is not set: handover packs are signed with a development key derived from SECRET_KEY "
            "(key id %s). Production needs keys of its own.",
            KEYS_SETTING,
            key_id(privates[0].public_key()),
        )
    return tuple(SigningKey(private=key, public=_public(key.public_key())) for key in privates)


def _configured_values() -> tuple[str, ...]:
    return tuple(getattr(settings, KEYS_SETTING, ()) or ())


def signing_keys() -> tuple[SigningKey, ...]:
    """This installation's keys, newest first; `ImproperlyConfigured` when one is malformed, or none is set
    in production (the system check reports the same before anything is signed)."""
    return _load(_configured_values(), settings.SECRET_KEY, bool(getattr(settings, "PRODUCTION", False)))


def public_keys() -> list[PublicKey]:
    """The verifying halves of this installation's keys, newest first (the first is the one that signs)."""
    return [key.public for key in signing_keys()]


def keys_document(keys: Sequence[PublicKey] | None = None) -> dict[str, Any]:
    """What `/verify/keys.json` answers and `parse_keys_document` reads back: every key, newest first."""
    return {"keys": [key.as_json() for key in (public_keys() if keys is None else keys)]}


def parse_keys_document(content: bytes | str) -> list[PublicKey]:
    """The keys of a saved `/verify/keys.json`. Each entry's key id must be the one its key gives, so a key
    file cannot pass one key off under another's id."""
    try:
        entries = json.loads(content)["keys"]
        if not isinstance(entries, list):
            raise TypeError("keys is not a list")
    except (ValueError, KeyError, TypeError) as error:
        raise SigningKeyError(f'not a key file (a JSON object with a "keys" list): {error}') from None
    keys: list[PublicKey] = []
    for position, entry in enumerate(entries, start=1):
        try:
            if entry["algorithm"] != ALGORITHM:
                raise SigningKeyError(f"key {position}: algorithm {entry['algorithm']!r}, not {ALGORITHM}")
            raw = _b64decode(entry["public_key"])
            public = _public(Ed25519PublicKey.from_public_bytes(raw))
        except SigningKeyError:
            raise
        except (KeyError, TypeError, AttributeError, ValueError, binascii.Error) as error:
            raise SigningKeyError(f"key {position} cannot be read: {error}") from None
        if entry.get("key_id") != public.key_id:
            raise SigningKeyError(
                f"key {position}: key id {entry.get('key_id')!r} is not its key's ({public.key_id})"
            )
        keys.append(public)
    if not keys:
        raise SigningKeyError("the key file lists no key")
    return keys


def sign(data: bytes) -> dict[str, str]:
    """The detached signature of `data` by the newest key: the content of `manifest.sig.json`."""
    key = signing_keys()[0]
    return {
        "algorithm": ALGORITHM,
        "key_id": key.public.key_id,
        "signature": base64.b64encode(key.private.sign(data)).decode("ascii"),
    }


def verify(*, data: bytes, signature: bytes | None, keys: Sequence[PublicKey]) -> SignatureCheck:
    """Check a detached signature (the bytes of `manifest.sig.json`, None when there is none) over `data`
    against `keys`. The key is chosen by the id the signature names; an id none of the keys has is its own
    answer, so "signed by a key you do not have" never reads as "forged"."""
    if signature is None:
        return SignatureCheck(SignatureStatus.UNSIGNED, message="not signed")
    try:
        document = json.loads(signature)
        algorithm, named, value = document["algorithm"], document["key_id"], document["signature"]
        if not isinstance(named, str):
            raise TypeError("key_id is not text")
        raw = _b64decode(value)
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as error:
        return SignatureCheck(
            SignatureStatus.MALFORMED, message=f"the signature file cannot be read: {error}"
        )
    if algorithm != ALGORITHM:
        return SignatureCheck(SignatureStatus.MALFORMED, named, f"algorithm {algorithm!r} is not {ALGORITHM}")
    key = next((key for key in keys if key.key_id == named), None)
    if key is None:
        return SignatureCheck(
            SignatureStatus.UNKNOWN_KEY, named, f"signed by key {named}, which is not known"
        )
    try:
        key.key.verify(raw, data)
    except InvalidSignature:
        return SignatureCheck(
            SignatureStatus.INVALID,
            named,
            f"the signature by key {named} does not match the manifest: it was changed after signing",
        )
    return SignatureCheck(SignatureStatus.VALID, named, f"valid, by key {named}")


def check_signing_keys(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """System check: every configured key is a base64 32-byte seed, and production has at least one."""
    values = _configured_values()
    errors: list[checks.CheckMessage] = []
    hint = (
        'Comma-separated base64 Ed25519 seeds, newest first. Make one with: python -c "import base64, os; '
        'print(base64.b64encode(os.urandom(32)).decode())"'
    )
    for position, value in enumerate(values, start=1):
        try:
            private_key_from_text(value)
        except SigningKeyError as error:
            errors.append(
                checks.Error(f"{KEYS_SETTING}: key {position} {error}.", hint=hint, id="warranty.E001")
            )
    if not values and getattr(settings, "PRODUCTION", False):
        errors.append(
            checks.Error(
                f"{KEYS_SETTING} is required when WERKBANK_ENV=production: it signs the handover packs.",
                hint=hint,
                id="warranty.E002",
            )
        )
    return errors
