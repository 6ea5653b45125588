"""Memories: create, update, delete (with a receipt) and retention."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import orjson
from django.db import IntegrityError, transaction
from django.utils import timezone

from common.errors import InvalidRequest, QuotaExceeded
from memories import events, recall
from memories.models import (
    Entry,
    ErrorDigest,
    Fact,
    FactTombstone,
    Memory,
    MemoryFile,
    MemoryFileVersion,
    Outbox,
    RecallVector,
    Turn,
)
from memories.policy import policy_parse
from memories.selectors import memory_by_external_id, memory_list
from projects.models import Project

log = logging.getLogger("threadless.memories")

_UNSET: Any = object()


def metadata_check(metadata: Any, *, field: str = "metadata") -> dict:
    """A memory's metadata: an object of at most 16 KiB of JSON (None is {})."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidRequest(f"{field}: must be an object.")
    if len(orjson.dumps(metadata)) > 16_384:
        raise InvalidRequest(f"{field}: at most 16 KiB of JSON.")
    return metadata


def printable(text: str) -> bool:
    """The character rule of names that people and models read back (external ids, memory file
    paths): Unicode's printable characters only, so no newline, NUL, line or paragraph separator,
    bidi override, zero-width or other control/format character can hide or reorder a name."""
    return text.isprintable()


def external_id_check(external_id: str, *, field: str = "external_id") -> str:
    """An end user's id as the external-id routes take it: 1 to 200 `printable` characters."""
    if (
        not isinstance(external_id, str)
        or not external_id
        or len(external_id) > 200
        or not printable(external_id)
    ):
        raise InvalidRequest(f"{field}: 1 to 200 printable characters.")
    return external_id


def memory_allowance_check(*, project: Project) -> None:
    """429 when the project already holds as many memories as its plan allows (None: no limit).
    Every way a memory comes into being checks it: create, an external id's first use, import."""
    if project.allowance_memories is not None:
        if Memory.objects.filter(project=project).count() >= project.allowance_memories:
            raise QuotaExceeded(f"The plan's allowance of {project.allowance_memories} memories is used up.")


def memory_create(
    *,
    project: Project,
    metadata: dict | None = None,
    external_id: str | None = None,
    instructions: str = "",
    policy: dict | None = None,
) -> tuple[Memory, bool]:
    """Create a memory, or return the existing one for an `external_id` (get-or-create; its
    project is the one given, not read again)."""
    if external_id is not None:
        existing = memory_by_external_id(project=project, external_id=external_id)
        if existing is not None:
            return existing, False
    metadata = metadata_check(metadata)
    parsed = policy_parse(policy)
    memory_allowance_check(project=project)
    try:
        with transaction.atomic():
            memory = Memory.objects.create(
                project=project,
                metadata=metadata,
                external_id=external_id,
                instructions=instructions or "",
                policy=parsed.as_json(),
            )
    except IntegrityError:
        existing = memory_by_external_id(project=project, external_id=external_id) if external_id else None
        if existing is None:
            raise
        return existing, False
    return memory, True


def memory_update(
    *, memory: Memory, metadata: Any = _UNSET, instructions: Any = _UNSET, policy: Any = _UNSET
) -> Memory:
    fields = ["updated_at"]
    if metadata is not _UNSET:
        memory.metadata = metadata_check(metadata)
        fields.append("metadata")
    if instructions is not _UNSET:
        memory.instructions = instructions or ""
        fields.append("instructions")
    if policy is not _UNSET:
        memory.policy = policy_parse(policy).as_json()
        fields.append("policy")
    memory.save(update_fields=fields)
    return memory


def _receipt_for(memory_ids: list[str]) -> dict[str, int]:
    receipt = {
        "memories": len(memory_ids),
        "entries": Entry.objects.filter(memory_id__in=memory_ids).count(),
        "turns": Turn.objects.filter(memory_id__in=memory_ids).count(),
        "facts": Fact.objects.filter(memory_id__in=memory_ids).count(),
        "digests": ErrorDigest.objects.filter(memory_id__in=memory_ids).count(),
        "summaries": Memory.objects.filter(id__in=memory_ids).exclude(summary="").count(),
        "outbox": Outbox.objects.filter(memory_id__in=memory_ids).count(),
        "fact_tombstones": FactTombstone.objects.filter(memory_id__in=memory_ids).count(),
        "files": MemoryFile.objects.filter(memory_id__in=memory_ids).count(),
        "file_versions": MemoryFileVersion.objects.filter(memory_id__in=memory_ids).count(),
        "index_rows": 0,
    }
    for memory_id in memory_ids:
        receipt["index_rows"] += recall.forget_memory(memory_id=memory_id)
    # Recall's vectors (memories/embeddings/search.py) are index rows too.
    deleted, _ = RecallVector.objects.filter(memory_id__in=memory_ids).delete()
    receipt["index_rows"] += deleted
    return receipt


def memory_delete_many(*, memory_ids: list[str]) -> dict[str, int]:
    with transaction.atomic():
        # Lock the rows first, so background work on them waits and then finds them gone.
        memory_ids = list(
            Memory.objects.select_for_update().filter(id__in=memory_ids).values_list("id", flat=True)
        )
        receipt = _receipt_for(memory_ids)
        events.memories_deleted(memory_ids, receipt)
        # Children first, in bulk: a memory can have many entries.
        ErrorDigest.objects.filter(memory_id__in=memory_ids).delete()
        Entry.objects.filter(memory_id__in=memory_ids).delete()
        Fact.objects.filter(memory_id__in=memory_ids).update(superseded_by=None)
        for model in (Turn, Fact, FactTombstone, Outbox, MemoryFile, MemoryFileVersion):
            model.objects.filter(memory_id__in=memory_ids).delete()
        Memory.objects.filter(id__in=memory_ids).delete()
    log.info("deleted memories %s: %s", ",".join(memory_ids[:20]), receipt)
    return receipt


def memory_delete(*, memory: Memory) -> dict[str, int]:
    return memory_delete_many(memory_ids=[memory.id])


def memory_delete_matching(
    *, project: Project, metadata: dict | None = None, external_id: str | None = None
) -> dict[str, int]:
    if not metadata and external_id is None:
        raise InvalidRequest("filter: give at least one metadata.<key>=<value> or external_id.")
    ids = list(
        memory_list(project=project, external_id=external_id, metadata=metadata).values_list("id", flat=True)
    )
    return (
        memory_delete_many(memory_ids=ids)
        if ids
        else {
            "memories": 0,
            "entries": 0,
            "turns": 0,
            "facts": 0,
            "digests": 0,
            "summaries": 0,
            "outbox": 0,
            "fact_tombstones": 0,
            "files": 0,
            "file_versions": 0,
            "index_rows": 0,
        }
    )


def retention_enforce() -> dict[str, int]:
    """Forget memories unused for longer than their project's `retention_days` (periodic task)."""
    totals: dict[str, int] = {}
    now = timezone.now()
    for project_id, days in Project.objects.filter(retention_days__gt=0).values_list("id", "retention_days"):
        cutoff = now - timedelta(days=days)
        while True:
            ids = list(
                Memory.objects.filter(project_id=project_id, last_used_at__lt=cutoff)
                .order_by("last_used_at")
                .values_list("id", flat=True)[:200]
            )
            if not ids:
                break
            for kind, n in memory_delete_many(memory_ids=ids).items():
                totals[kind] = totals.get(kind, 0) + n
    if totals:
        log.info("retention forgot %s", totals)
    return totals
