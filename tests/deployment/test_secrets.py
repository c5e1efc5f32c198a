"""Secrets at rest (`werkbank.secrets`): Fernet round trip, key rotation, tampering, bad keys, and the
production profile that refuses to start without keys."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from werkbank.secrets import SecretUnreadable, decrypt, encrypt

K1 = Fernet.generate_key().decode()
K2 = Fernet.generate_key().decode()
ROOT = Path(__file__).resolve().parents[2]


def test_round_trip(settings):
    settings.WERKBANK_SECRETS_KEYS = [K1]
    token = encrypt("ADMIN:hunter2 ünïcode")

    assert token != "ADMIN:hunter2 ünïcode"
    assert "hunter2" not in token
    assert decrypt(token) == "ADMIN:hunter2 ünïcode"
    # Fernet tokens carry a random IV: the same plaintext encrypts differently each time.
    assert encrypt("ADMIN:hunter2 ünïcode") != token


def test_without_keys_development_derives_one_from_secret_key(settings):
    settings.WERKBANK_SECRETS_KEYS = []
    token = encrypt("dev secret")

    assert decrypt(token) == "dev secret"
    derived = base64.urlsafe_b64encode(
        hashlib.sha256(f"werkbank-secrets:{settings.SECRET_KEY}".encode()).digest()
    )
    assert Fernet(derived).decrypt(token.encode()) == b"dev secret"
    settings.WERKBANK_SECRETS_KEYS = [K1]
    with pytest.raises(SecretUnreadable):
        decrypt(token)


def test_a_rotated_key_still_opens_old_tokens(settings):
    settings.WERKBANK_SECRETS_KEYS = [K1]
    old = encrypt("written under K1")

    settings.WERKBANK_SECRETS_KEYS = [K2, K1]
    new = encrypt("written under K2")

    assert decrypt(old) == "written under K1"
    assert decrypt(new) == "written under K2"
    # The newest key encrypts: K2 alone opens the new token, not the old one.
    assert Fernet(K2.encode()).decrypt(new.encode()) == b"written under K2"
    settings.WERKBANK_SECRETS_KEYS = [K2]
    assert decrypt(new) == "written under K2"
    with pytest.raises(SecretUnreadable):
        decrypt(old)


def test_a_tampered_token_is_unreadable(settings):
    settings.WERKBANK_SECRETS_KEYS = [K1]
    token = encrypt("ipmi password")
    middle = len(token) // 2
    tampered = token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]

    with pytest.raises(SecretUnreadable) as unreadable:
        decrypt(tampered)
    assert str(unreadable.value) == "The stored secret cannot be decrypted with the configured keys."
    with pytest.raises(SecretUnreadable):
        decrypt("not-a-token-at-all")


@pytest.mark.parametrize("key", ["not-a-fernet-key", "c2hvcnQ="])
def test_an_invalid_key_is_a_configuration_error(settings, key):
    settings.WERKBANK_SECRETS_KEYS = [K1, key]
    with pytest.raises(ImproperlyConfigured) as error:
        encrypt("anything")
    assert "WERKBANK_SECRETS_KEYS must be Fernet keys" in str(error.value)


def _start_production(**extra: str) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"WERKBANK_SECRETS_KEYS", "DJANGO_SETTINGS_MODULE", "DEBUG"}
    }
    env.update(
        WERKBANK_ENV="production",
        SECRET_KEY="x" * 60,
        ALLOWED_HOSTS="h",
        DJANGO_SETTINGS_MODULE="werkbank.settings",
        **extra,
    )
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_production_refuses_to_start_without_keys():
    refused = _start_production()
    assert refused.returncode != 0
    assert "ImproperlyConfigured" in refused.stderr
    assert "WERKBANK_SECRETS_KEYS is required when WERKBANK_ENV=production" in refused.stderr

    started = _start_production(WERKBANK_SECRETS_KEYS=f"{K2},{K1}")
    assert started.returncode == 0, started.stderr
