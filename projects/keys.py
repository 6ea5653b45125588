"""API key format and hashing (visible prefix, lookup prefix in clear, HMAC of the rest)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import string

from django.conf import settings

_ALPHABET = string.ascii_letters + string.digits
KIND_PREFIX = {"project": "tl_proj_", "publishable": "tl_pub_"}
LOOKUP_LEN = 10
SECRET_LEN = 32


def _random(n: int) -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(n))


def hash_secret(secret: str, secret_key: str | None = None) -> str:
    key = settings.SECRET_KEY if secret_key is None else secret_key
    return hmac.new(key.encode(), secret.encode(), hashlib.sha256).hexdigest()


def generate(kind: str) -> tuple[str, str, str, str]:
    """(plaintext, visible prefix, lookup, hashed)."""
    lookup = _random(LOOKUP_LEN)
    secret = _random(SECRET_LEN)
    visible = KIND_PREFIX[kind] + lookup
    return visible + secret, visible, lookup, hash_secret(secret)


def split(plaintext: str) -> tuple[str, str, str] | None:
    """(kind, lookup, secret) of a well-formed key, else None."""
    for kind, prefix in KIND_PREFIX.items():
        if plaintext.startswith(prefix):
            rest = plaintext[len(prefix) :]
            if len(rest) != LOOKUP_LEN + SECRET_LEN or not rest.isalnum():
                return None
            return kind, rest[:LOOKUP_LEN], rest[LOOKUP_LEN:]
    return None


def check(secret: str, hashed: str) -> tuple[bool, str]:
    """(whether the hash was made with SECRET_KEY or one of SECRET_KEY_FALLBACKS — a rotation —,
    the hash under the current SECRET_KEY): the caller stores the latter when a fallback matched,
    without hashing the secret a second time."""
    current = hash_secret(secret)
    found = hmac.compare_digest(current, hashed)
    for secret_key in settings.SECRET_KEY_FALLBACKS:
        found |= hmac.compare_digest(hash_secret(secret, secret_key), hashed)
    return found, current
