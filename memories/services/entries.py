"""Writing entries: the row lock every write takes, appending entries (and the turns they
open) and the pipeline's commit-flag flips, with the memory's counters kept in step."""

from __future__ import annotations

import logging

from django.db.models import F
from django.utils import timezone

from memories import recall
from memories.embeddings import VectorStore
from memories.models import Entry, Memory, Turn

log = logging.getLogger("threadless.memories")


def memory_lock(memory: Memory) -> Memory:
    """The memory row, locked until the transaction ends: every write to a memory takes it first."""
    return Memory.objects.select_for_update().get(pk=memory.pk)


def entries_append(*, memory: Memory, items: list[dict], turn_input: str | None = None,
                   also_save: tuple[str, ...] = ()) -> list[Entry]:
    """Append entries to a locked memory (call inside a transaction, after `memory_lock`).

    Each user message opens a new turn; everything else joins the newest turn. Updates the
    memory's sequence, turn and count columns (and the caller's `also_save` fields, in the
    same UPDATE).
    """
    now = timezone.now()
    entries: list[Entry] = []
    new_turns: list[Turn] = []
    seq, turn = memory.last_seq, memory.last_turn
    messages = tokens = 0
    for item in items:
        if item.get("kind") == "message" and item.get("role") == "user" or turn == 0:
            turn += 1
            text = item.get("content", "") if item.get("role") == "user" else ""
            new_turns.append(Turn(memory=memory, number=turn, input=turn_input if turn_input is not None else text))
        seq += 1
        entry = Entry(memory=memory, seq=seq, turn=turn, created_at=now, **item)
        entries.append(entry)
        if entry.kind == "message" and entry.committed:
            messages += 1
            tokens += entry.tokens
    if new_turns:
        Turn.objects.bulk_create(new_turns)
    Entry.objects.bulk_create(entries)
    memory.last_seq, memory.last_turn = seq, turn
    memory.message_count += messages
    memory.token_count += tokens
    memory.last_used_at = now
    memory.save(update_fields=["last_seq", "last_turn", "message_count", "token_count", "last_used_at", "updated_at",
                               *also_save])
    return entries


def entries_set_committed(*, memory: Memory, entry_ids: list[int], committed: bool) -> int:
    """Flip commit flags (the pipeline's rollback) and keep the memory's counts in step."""
    rows = list(Entry.objects.filter(memory=memory, id__in=entry_ids).exclude(committed=committed)
                .values_list("id", "kind", "tokens"))
    if not rows:
        return 0
    Entry.objects.filter(id__in=[r[0] for r in rows]).update(committed=committed)
    # Keep the recall index in step: uncommitted messages must not be findable.
    recall.index_entries(memory_id=memory.id, entry_ids=[r[0] for r in rows if r[1] == "message"])
    if not committed:  # nor by meaning (a recommitted message gets its vector back from the backfill)
        VectorStore.remove(entry_ids=[r[0] for r in rows])
    sign = 1 if committed else -1
    msg = [r for r in rows if r[1] == "message"]
    if msg:
        Memory.objects.filter(pk=memory.pk).update(
            message_count=F("message_count") + sign * len(msg),
            token_count=F("token_count") + sign * sum(r[2] for r in msg),
        )
    return len(rows)
