"""Endpoint secrets at rest: encrypted under configured Fernet keys, which can be rotated; a bad
key setting is a clear configuration error. No database needed."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from endpoints.secret_box import SecretUnavailable, secret_decrypt, secret_encrypt, secret_generate

pytestmark = pytest.mark.dual_db


def test_secrets_survive_a_key_rotation_and_not_a_lost_key(settings: Any) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    settings.HINDSIGHT_ENDPOINT_SECRET_KEYS = [old]
    secret = secret_generate()
    stored = secret_encrypt(secret)
    assert secret not in stored and secret.startswith("whsec_")
    settings.HINDSIGHT_ENDPOINT_SECRET_KEYS = [new, old]
    assert secret_decrypt(stored) == secret
    settings.HINDSIGHT_ENDPOINT_SECRET_KEYS = [new]
    with pytest.raises(SecretUnavailable, match="rotate the secret on the agent's page"):
        secret_decrypt(stored)


def test_without_configured_keys_the_site_secret_key_is_used(settings: Any) -> None:
    settings.HINDSIGHT_ENDPOINT_SECRET_KEYS = []
    settings.SECRET_KEY = "first-key"
    stored = secret_encrypt("whsec_abc")
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = "second-key", ["first-key"]
    assert secret_decrypt(stored) == "whsec_abc"


def test_a_malformed_key_is_a_configuration_error(settings: Any) -> None:
    settings.HINDSIGHT_ENDPOINT_SECRET_KEYS = ["not-a-fernet-key"]
    with pytest.raises(ImproperlyConfigured, match="HINDSIGHT_ENDPOINT_SECRET_KEYS must hold Fernet keys"):
        secret_encrypt("whsec_abc")
