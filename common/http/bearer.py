"""`Authorization: Bearer <token>` parsing, the one place /v1 reads a key from a header."""

from __future__ import annotations

from common.errors import Unauthorized


def bearer_token(header: str) -> str | None:
    """The token of a Bearer header; None when there is no header; 401 when it is malformed."""
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Use 'Authorization: Bearer <key>'.")
    return token
