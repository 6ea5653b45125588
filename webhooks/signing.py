"""Signing secrets and the Standard Webhooks headers (https://www.standardwebhooks.com/).

`webhook-signature` is `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, made by the
`standardwebhooks` library itself so any receiver's verifier agrees; during a rotation's grace
period the header carries one signature per valid secret, space-separated, as the convention allows.
"""

from __future__ import annotations

import base64
import secrets
from datetime import datetime

from standardwebhooks import Webhook

PREFIX = "whsec_"


def secret_new() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def signed_headers(*, event_id: str, at: datetime, body: bytes, secrets_: list[str]) -> dict[str, str]:
    return {
        "webhook-id": event_id,
        "webhook-timestamp": str(int(at.timestamp())),
        "webhook-signature": " ".join(Webhook(s).sign(event_id, at, body) for s in secrets_),
    }
