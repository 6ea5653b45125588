"""Idempotency-Key replays for the /v1 writes (decorate, report): one record per key and scope."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from common.errors import InvalidRequest
from memories.models import IdempotencyRecord, Memory
from memories.services.entries import memory_lock
from projects.models import Project

log = logging.getLogger("threadless.memories")


def idempotent_replay(*, project: Project, scope: str, key: str | None) -> tuple[int, bytes] | None:
    if not key:
        return None
    cutoff = timezone.now() - timedelta(hours=settings.THREADLESS_IDEMPOTENCY_HOURS)
    record = IdempotencyRecord.objects.filter(
        project=project, scope=scope, key=key, created_at__gte=cutoff
    ).first()
    return (record.status, bytes(record.body)) if record else None


def idempotent_store(*, project: Project, scope: str, key: str | None, status: int, body: bytes) -> None:
    if not key:
        return
    cutoff = timezone.now() - timedelta(hours=settings.THREADLESS_IDEMPOTENCY_HOURS)
    IdempotencyRecord.objects.filter(project=project, scope=scope, key=key, created_at__lt=cutoff).delete()
    IdempotencyRecord.objects.create(project=project, scope=scope, key=key, status=status, body=body)


def idempotent_call(
    *,
    project: Project,
    memory: Memory,
    scope: str,
    key: str | None,
    run: Callable[[], tuple[int, bytes, bool]],
) -> tuple[int, bytes]:
    """Run a write once per Idempotency-Key: the replay check, the write and the record are one
    transaction on the locked memory, so a retry racing the first call waits for it and replays
    its answer instead of storing twice. `run` returns (status, body, record?)."""
    if not key:
        status, body, _record = run()
        return status, body
    with transaction.atomic():
        memory_lock(memory)
        replay = idempotent_replay(project=project, scope=scope, key=key)
        if replay:
            return replay
        status, body, record = run()
        if record:
            idempotent_store(project=project, scope=scope, key=key, status=status, body=body)
        return status, body


def check_idempotency_key(key: str | None) -> str | None:
    if key is None:
        return None
    if not (1 <= len(key) <= 200) or not key.isprintable():
        raise InvalidRequest("Idempotency-Key: 1 to 200 printable characters.")
    return key
