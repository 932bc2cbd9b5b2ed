"""Endpoint signing secrets: generated here, stored encrypted, decrypted only to sign a delivery.

HMAC needs the secret itself on the platform's side, so unlike API keys it cannot be kept as a
hash. It is encrypted with Fernet (AES-128-CBC + HMAC-SHA256, from the ``cryptography`` package)
under keys from HINDSIGHT_ENDPOINT_SECRET_KEYS (the first encrypts; every key decrypts, so keys can
be rotated), or, when that is unset, a key derived from DJANGO_SECRET_KEY and its fallbacks. A copy
of the database alone therefore reveals no secret.
"""

from __future__ import annotations

import base64
import secrets

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

SECRET_PREFIX = "whsec_"
# Shown beside an endpoint so a team can tell which secret it holds (prefix plus 6 characters).
SHOWN_PREFIX_LENGTH = len(SECRET_PREFIX) + 6


class SecretUnavailable(Exception):
    """The stored secret cannot be decrypted with the configured keys."""


def _derived_key(secret_key: str) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"hindsight.endpoint-secrets")
    return base64.urlsafe_b64encode(hkdf.derive(secret_key.encode()))


def _box() -> MultiFernet:
    configured: list[str] = list(getattr(settings, "HINDSIGHT_ENDPOINT_SECRET_KEYS", []))
    try:
        if configured:
            return MultiFernet([Fernet(key.strip()) for key in configured])
        keys = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
        return MultiFernet([Fernet(_derived_key(key)) for key in keys])
    except ValueError as exc:
        raise ImproperlyConfigured(
            "HINDSIGHT_ENDPOINT_SECRET_KEYS must hold Fernet keys (32 url-safe base64-encoded bytes each), "
            "comma-separated"
        ) from exc


def secret_generate() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def secret_encrypt(secret: str) -> str:
    return _box().encrypt(secret.encode()).decode()


def secret_decrypt(ciphertext: str) -> str:
    try:
        return _box().decrypt(ciphertext.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnavailable(
            "the endpoint's signing secret cannot be decrypted with the configured keys "
            "(HINDSIGHT_ENDPOINT_SECRET_KEYS or DJANGO_SECRET_KEY changed); rotate the secret on the agent's page"
        ) from exc
