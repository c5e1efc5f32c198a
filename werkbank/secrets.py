"""Secrets at rest: encrypt a value before it is stored, decrypt it only where it is used.

Fernet (the `cryptography` package: AES-128-CBC with an HMAC-SHA256, a timestamped token) with the keys in
`WERKBANK_SECRETS_KEYS`, newest first: the first key encrypts, every key decrypts, so a key is rotated by
putting a new one in front (and `MultiFernet.rotate` re-encrypts). Production refuses to start without keys
(settings); development derives one from SECRET_KEY so that `make demo` needs no set-up.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


class SecretUnreadable(Exception):
    """A stored token that none of the configured keys opens (a key was dropped, or the row was altered)."""


def _development_key() -> bytes:
    digest = hashlib.sha256(f"werkbank-secrets:{settings.SECRET_KEY}".encode()).digest()
    return base64.urlsafe_b64encode(digest)


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    try:
        return MultiFernet([Fernet(key.encode()) for key in keys] or [Fernet(_development_key())])
    except ValueError as error:
        raise ImproperlyConfigured(
            f"WERKBANK_SECRETS_KEYS must be Fernet keys (32 url-safe base64-encoded bytes): {error}"
        ) from None


def _keys() -> MultiFernet:
    return _fernet(tuple(getattr(settings, "WERKBANK_SECRETS_KEYS", ()) or ()))


def encrypt(plaintext: str) -> str:
    """The Fernet token of `plaintext`, as text for a TextField."""
    return _keys().encrypt(plaintext.encode()).decode("ascii")


def decrypt(token: str) -> str:
    """The plaintext of a token written by `encrypt`."""
    try:
        return _keys().decrypt(token.encode("ascii")).decode()
    except InvalidToken:
        raise SecretUnreadable("The stored secret cannot be decrypted with the configured keys.") from None
