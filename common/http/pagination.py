"""Cursor pagination for /v1 lists: `?limit=` and an opaque `?cursor=` (newest first)."""

from __future__ import annotations

import base64
from datetime import datetime

from django.db.models import Q
from rest_framework.response import Response

from common.errors import InvalidRequest

NOT_A_CURSOR = "cursor: not a cursor this API returned."


def limit_param(request, default: int = 20, maximum: int = 100) -> int:
    raw = request.query_params.get("limit")
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InvalidRequest("limit: must be an integer.")
    if not 1 <= value <= maximum:
        raise InvalidRequest(f"limit: must be from 1 to {maximum}.")
    return value


def encode_cursor(*parts) -> str:
    return base64.urlsafe_b64encode("|".join(str(p) for p in parts).encode()).decode().rstrip("=")


def decode_cursor(raw: str | None, n: int) -> list[str] | None:
    if not raw:
        return None
    try:
        parts = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode().split("|")
    except (ValueError, UnicodeDecodeError):
        raise InvalidRequest(NOT_A_CURSOR)
    if len(parts) != n:
        raise InvalidRequest(NOT_A_CURSOR)
    return parts


def page_by_time(qs, request, field: str, render, default: int = 20) -> Response:
    """Newest first by (field, id), cursor-paginated: {"data": [...], "next_cursor": str | None}."""
    limit = limit_param(request, default)
    cursor = decode_cursor(request.query_params.get("cursor"), 2)
    if cursor:
        try:
            at = datetime.fromisoformat(cursor[0])
        except ValueError:
            raise InvalidRequest(NOT_A_CURSOR)
        qs = qs.filter(Q(**{f"{field}__lt": at}) | Q(**{field: at, "id__lt": cursor[1]}))
    rows = list(qs[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    next_cursor = encode_cursor(getattr(rows[-1], field).isoformat(), rows[-1].id) if more else None
    return Response({"data": [render(r) for r in rows], "next_cursor": next_cursor})
