"""The secret store's encryption: MultiFernet over THREADLESS_SECRET_STORE_KEYS (newest first).

New values are encrypted with the newest key. Older keys, then the keys earlier releases derived
from SECRET_KEY (and its fallbacks), still decrypt, so an upgrade or a key rotation loses
nothing; `manage.py rotate_secrets` re-encrypts every stored value with the newest key.
"""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

__all__ = ["InvalidToken", "decrypt", "encrypt", "multifernet", "rotate"]


def legacy_key(secret_key: str) -> bytes:
    """The key earlier releases derived from SECRET_KEY (decrypt-only now)."""
    digest = hashlib.sha256(b"threadless-secret-store:" + secret_key.encode()).digest()
    return base64.urlsafe_b64encode(digest)


def multifernet() -> MultiFernet:
    keys = [Fernet(key) for key in settings.THREADLESS_SECRET_STORE_KEYS]
    for secret_key in [settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS]:
        keys.append(Fernet(legacy_key(secret_key)))
    return MultiFernet(keys)


def encrypt(value: str) -> str:
    return multifernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    """The plaintext; InvalidToken when no configured key opens it."""
    return multifernet().decrypt(token.encode()).decode()


def rotate(token: str) -> str:
    """The same plaintext encrypted with the newest key; InvalidToken when no key opens it."""
    return multifernet().rotate(token.encode()).decode()
