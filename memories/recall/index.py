"""Index maintenance: the full-text rows of committed user/assistant messages.

SQLite FTS5 on the embedded default, PostgreSQL full-text (tsvector + GIN) in production; both
tables are created by migration `0002_recall_index`, and carry each message's thread since
`0014_recall_thread`. Rows are keyed by the entry id, so indexing is idempotent (a re-run
replaces the same rows)."""

from __future__ import annotations

import re

from django.db import connection, transaction

from common.messages import text_of
from memories.models import Entry, Memory

TABLE = "memories_recall"
INDEXED_ROLES = ("user", "assistant")
_DELETE_CHUNK = 500  # entry ids per DELETE statement


def is_postgresql() -> bool:
    return connection.vendor == "postgresql"


def memory_key(memory_id: str) -> str:
    """One FTS token naming the memory, so a search touches only that memory's postings."""
    return "k" + re.sub(r"[^0-9A-Za-z]", "", memory_id).lower()


def thread_key(thread: str) -> str:
    """One FTS token naming a thread (its UTF-8 bytes in hex: letters and digits only, whatever
    the name), so a search of one thread reads only that thread's postings. Migration
    `0014_recall_thread` writes the same token in SQL (`'t' || lower(hex(thread))`)."""
    return "t" + thread.encode().hex()


def entry_text(content: str, parts) -> str:
    """The text an entry says: its parts' text when it has parts, else its content."""
    return text_of(parts) if parts else content or ""


def index_entries(*, memory_id: str, entry_ids: list[int]) -> int:
    """Bring these entries' index rows in step: committed user/assistant messages are (re)indexed,
    anything else among them is removed. Returns how many rows were indexed."""
    if not entry_ids:
        return 0
    with transaction.atomic():
        # Under the memory's row lock: a memory deleted meanwhile gets no index rows back.
        if not Memory.objects.select_for_update().filter(pk=memory_id).exists():
            return 0
        return _index_locked(memory_id, entry_ids)


def _index_locked(memory_id: str, entry_ids: list[int]) -> int:
    rows = list(
        Entry.objects.filter(memory_id=memory_id, id__in=entry_ids).values_list(
            "id", "seq", "turn", "kind", "role", "committed", "content", "parts", "created_at", "thread"
        )
    )
    keep = []
    for entry_id, seq, turn, kind, role, committed, content, parts, created_at, thread in rows:
        text = entry_text(content, parts).strip()
        if kind == "message" and committed and role in INDEXED_ROLES and text:
            keep.append((entry_id, seq, turn, role, created_at, text, thread))
    unindex_entries(entry_ids=list(entry_ids))
    if not keep:
        return 0
    with connection.cursor() as cursor:
        if is_postgresql():
            cursor.executemany(
                f"INSERT INTO {TABLE} (entry_id, memory_id, seq, turn, role, created_at, body, thread) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (entry_id) DO NOTHING",
                [(e, memory_id, s, t, r, c, x, th) for e, s, t, r, c, x, th in keep],
            )
        else:
            key = memory_key(memory_id)
            cursor.executemany(
                f"INSERT INTO {TABLE} (rowid, body, mkey, memory_id, seq, turn, role, created_at, thread) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (e, x, f"{key} {thread_key(th)}", memory_id, s, t, r, c.isoformat(), th)
                    for e, s, t, r, c, x, th in keep
                ],
            )
    return len(keep)


def unindex_entries(*, entry_ids: list[int]) -> int:
    """Remove these entries' index rows (an entry was uncommitted or deleted)."""
    removed = 0
    column = "entry_id" if is_postgresql() else "rowid"
    with connection.cursor() as cursor:
        for i in range(0, len(entry_ids), _DELETE_CHUNK):
            chunk = [int(x) for x in entry_ids[i : i + _DELETE_CHUNK]]
            marks = ",".join(["%s"] * len(chunk))
            cursor.execute(f"DELETE FROM {TABLE} WHERE {column} IN ({marks})", chunk)
            removed += max(cursor.rowcount, 0)
    return removed


def forget_memory(*, memory_id: str) -> int:
    """Remove a memory's index rows. Returns how many were removed."""
    with connection.cursor() as cursor:
        if is_postgresql():
            cursor.execute(f"DELETE FROM {TABLE} WHERE memory_id = %s", [memory_id])
        else:
            cursor.execute(
                f"DELETE FROM {TABLE} WHERE rowid IN (SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH %s "
                "AND memory_id = %s)",
                [f'mkey:"{memory_key(memory_id)}"', memory_id],
            )
        return max(cursor.rowcount, 0)


def count_rows(*, memory_id: str) -> int:
    """How many index rows a memory has (tests, console)."""
    with connection.cursor() as cursor:
        if is_postgresql():
            cursor.execute(f"SELECT count(*) FROM {TABLE} WHERE memory_id = %s", [memory_id])
        else:
            cursor.execute(
                f"SELECT count(*) FROM {TABLE} WHERE {TABLE} MATCH %s AND memory_id = %s",
                [f'mkey:"{memory_key(memory_id)}"', memory_id],
            )
        return cursor.fetchone()[0]
