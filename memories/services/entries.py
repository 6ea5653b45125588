"""Writing entries: the row lock every write takes, appending entries (and the turns they
open) and the pipeline's commit-flag flips, with the memory's counters kept in step."""

from __future__ import annotations

import json
import logging

import orjson
from django.db import connection
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


# The report's common case (assistant messages, tool calls and results joining the newest turn)
# as three plain statements: it is the write path's hot spot, and the ORM's query compilation,
# model instances and the separate lock read cost more than the writes themselves.
_ENTRY_COLUMNS = ("memory_id", "seq", "turn", "kind", "role", "content", "parts", "name", "tool_calls",
                  "tool_call_id", "task_id", "key", "value", "committed", "tokens", "created_at")
_JSON_COLUMNS = frozenset({"parts", "tool_calls", "value"})


def _join_turn_sql() -> str:
    memory, entry = Memory._meta.db_table, Entry._meta.db_table
    return (f"UPDATE {memory} SET last_seq = last_seq + %s, message_count = message_count + %s, "
            "token_count = token_count + %s, last_used_at = %s, updated_at = %s "
            f"WHERE id = %s AND last_turn > 0 RETURNING last_seq, last_turn, "
            f"(SELECT MIN(seq) FROM {entry} WHERE {entry}.memory_id = {memory}.id AND {entry}.turn = {memory}.last_turn)")


def _insert_sql(rows: int) -> str:
    q = connection.ops.quote_name
    cast = "::jsonb" if connection.vendor == "postgresql" else ""
    marks = "(" + ", ".join(f"%s{cast}" if c in _JSON_COLUMNS else "%s" for c in _ENTRY_COLUMNS) + ")"
    return (f"INSERT INTO {q(Entry._meta.db_table)} ({', '.join(q(c) for c in _ENTRY_COLUMNS)}) VALUES "
            + ", ".join([marks] * rows))


def _json(value) -> str | None:
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # what orjson refuses (an integer beyond 64 bits) the ORM's json.dumps stores
        return json.dumps(value)


def messages_join_turn(*, memory_id: str, items: list[dict]) -> tuple[int, int, int] | None:
    """Append committed non-user messages (`entry_fields`) to the memory's newest turn, inside the
    caller's transaction: one UPDATE of the memory row (which also locks it, as `memory_lock`
    does) returning the new sequence, the turn and the turn's first seq, then one multi-row INSERT.

    Returns (last_seq, turn, turn_start_seq), or None when the memory has no turn yet (the
    first entry opens one: use `entries_append`). Same rows and counters as `entries_append`.
    """
    assert items and all(i["kind"] == "message" and i["role"] != "user" for i in items)
    now = timezone.now()
    stamp = connection.ops.adapt_datetimefield_value(now)
    tokens = sum(i["tokens"] for i in items)
    with connection.cursor() as cursor:
        cursor.execute(_join_turn_sql(), [len(items), len(items), tokens, stamp, stamp, memory_id])
        found = cursor.fetchone()
        if found is None:
            return None
        last_seq, turn, turn_start = found
        first = last_seq - len(items) + 1
        params: list = []
        for seq, item in enumerate(items, start=first):
            params += [memory_id, seq, turn, "message", item["role"], item["content"], _json(item["parts"]),
                       item["name"], _json(item["tool_calls"]), item["tool_call_id"], "", "", None, True,
                       item["tokens"], stamp]
        cursor.execute(_insert_sql(len(items)), params)
    return last_seq, turn, turn_start if turn_start is not None else first


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
