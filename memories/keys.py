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


def hash_secret(secret: str) -> str:
    return hmac.new(settings.SECRET_KEY.encode(), secret.encode(), hashlib.sha256).hexdigest()


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


def matches(secret: str, hashed: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), hashed)
