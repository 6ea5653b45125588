"""Writing entries: the row lock every write takes, appending entries (and the turns they
open) and the pipeline's commit-flag flips, with the memory's counters kept in step."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import F
from django.utils import timezone

from common.db import plain_cursor
from memories import recall
from memories.embeddings import VectorStore
from memories.models import DEFAULT_THREAD, Entry, Memory, Thread, Turn
from memories.selectors import memory_fetch, memory_missing
from memories.services.statements import (
    INSERT_CHUNK,
    JSON_COLUMNS,
    THREAD_ENTRY_COLUMNS,
    THREAD_FIELDS,
    THREAD_TURN_COLUMNS,
    entry_params,
    thread_from_row,
    values_sql,
)


def memory_lock(memory: Memory, *, scoped: bool = False) -> Memory:
    """The memory row, locked until the transaction ends: every write to a memory takes it first.

    A memory deleted since the caller read it is the API's 404 (`memory_missing`), as if it had
    never been there. `scoped`: `memory` is only an id and its project (not read yet: the hot
    decorate route, memories.api.hot), so the locked read is also the project scoping."""
    locked = memory_fetch(memory_id=memory.pk, project_id=memory.project_id if scoped else None, lock=True)
    if locked is None:
        raise memory_missing(memory.pk)
    project_field = Memory.project.field
    if project_field.is_cached(memory) and locked.project_id == memory.project_id:
        # The project row the caller was scoped by (memory_get): reading `locked.project` (the
        # embeddings switch in context_build) would otherwise cost decorate another query.
        project_field.set_cached_value(locked, project_field.get_cached_value(memory))
    return locked


_saves: dict[tuple, tuple[str, list]] = {}


def _memory_save(memory: Memory, names: tuple[str, ...]) -> None:
    """`memory.save(update_fields=names)` as one plain UPDATE (the caller sets updated_at)."""
    key = (connection.vendor, names)
    if key not in _saves:
        q = connection.ops.quote_name
        fields = [Memory._meta.get_field(n) for n in names]
        _saves[key] = (
            f"UPDATE {q(Memory._meta.db_table)} SET {', '.join(f'{q(f.column)} = %s' for f in fields)} "
            f"WHERE {q('id')} = %s",
            fields,
        )
    sql, fields = _saves[key]
    with plain_cursor() as cursor:
        cursor.execute(
            sql, [f.get_db_prep_save(getattr(memory, f.attname), connection) for f in fields] + [memory.pk]
        )


@functools.lru_cache(maxsize=2)
def _thread_upsert_sql(vendor: str) -> str:
    """The named thread's row, inserted when missing (a no-op update otherwise), returned whole:
    one statement either way (SQLite 3.35+ and PostgreSQL both have ON CONFLICT … RETURNING)."""
    q = connection.ops.quote_name
    columns = [f.column for f in THREAD_FIELDS if f.column != "id"]
    return (
        f"INSERT INTO {q(Thread._meta.db_table)} ({', '.join(map(q, columns))}) "
        f"VALUES ({', '.join(['%s'] * len(columns))}) "
        "ON CONFLICT (memory_id, name) DO UPDATE SET name = excluded.name "
        f"RETURNING {', '.join(q(f.column) for f in THREAD_FIELDS)}"
    )


def thread_for_write(*, memory: Memory, name: str | None, began_at: datetime | None = None) -> Thread | None:
    """The named thread's row for a write to a locked memory, created on first use (None for the
    default thread, whose counters are the memory row's). The memory's row lock serialises every
    write to the memory, so two writers never both create it. `began_at`: when a thread created
    here began (imported history's first message; default now)."""
    if name is None or name == DEFAULT_THREAD:
        return None
    now = timezone.now()
    began = began_at or now
    fresh = Thread(memory_id=memory.pk, name=name, created_at=began, updated_at=began)
    values = [
        f.get_db_prep_save(getattr(fresh, f.attname), connection) for f in THREAD_FIELDS if f.column != "id"
    ]
    with plain_cursor() as cursor:
        cursor.execute(_thread_upsert_sql(connection.vendor), values)
        return thread_from_row(cursor.fetchone())


_THREAD_COUNTERS = (
    "last_turn",
    "turn_start_seq",
    "message_count",
    "token_count",
    "updated_at",
    "last_budget_tokens",
)


@functools.lru_cache(maxsize=2)
def _thread_save_sql(vendor: str) -> str:
    q = connection.ops.quote_name
    return (
        f"UPDATE {q(Thread._meta.db_table)} SET {', '.join(f'{q(c)} = %s' for c in _THREAD_COUNTERS)} "
        f"WHERE {q('id')} = %s"
    )


def _thread_save(cursor, thread: Thread) -> None:
    """`thread.save(update_fields=_THREAD_COUNTERS)` as one plain UPDATE."""
    fields = [Thread._meta.get_field(n) for n in _THREAD_COUNTERS]
    cursor.execute(
        _thread_save_sql(connection.vendor),
        [f.get_db_prep_save(getattr(thread, f.attname), connection) for f in fields] + [thread.pk],
    )


def _insert_chunked(
    cursor, table: str, columns: tuple[str, ...], json_columns: frozenset, rows: list
) -> None:
    """INSERT `rows` (a flat parameter list, len(columns) a row) INSERT_CHUNK rows a statement."""
    width = len(columns) * INSERT_CHUNK
    for at in range(0, len(rows), width):
        part = rows[at : at + width]
        cursor.execute(values_sql(table, columns, json_columns, len(part) // len(columns)), part)


@dataclass(frozen=True)
class Appended:
    """Where a write's entries went: their seqs and the turns of the first and the last."""

    first_seq: int
    last_seq: int
    first_turn: int
    last_turn: int


def entries_append(
    *,
    memory: Memory,
    items: list[dict],
    turn_input: str | None = None,
    also_save: tuple[str, ...] = (),
    turn_state: dict | None = None,
    thread: Thread | None = None,
) -> list[Entry]:
    """Append entries to a locked memory (call inside a transaction, after `memory_lock`).

    Each user message opens a new turn of the thread (`thread`: a named thread's row from
    `thread_for_write`; None, the default thread, whose counters are the memory row's); everything
    else joins the thread's newest turn. Updates the memory's sequence and count columns, the
    thread's turn counter and the newest turn's first seq when one opens (and the caller's
    `also_save` fields, in the same UPDATE). `turn_state` (state, attempt, lease_expires_at) is
    what a turn it opens starts with (the pipeline opens its turns IN_PROGRESS); by default READY.
    """
    return _entries_write(memory, items, turn_input, also_save, turn_state, thread, None, instances=True)[0]


def entries_import(*, memory: Memory, items: list[dict], thread: Thread | None, stamps: list) -> Appended:
    """`entries_append` for the history import: each item said at its `stamps` time, and no
    model instances made (an import is up to thousands of rows: they cost more than the INSERTs)."""
    return _entries_write(memory, items, None, (), None, thread, stamps, instances=False)[1]


def _entries_write(
    memory: Memory,
    items: list[dict],
    turn_input: str | None,
    also_save: tuple[str, ...],
    turn_state: dict | None,
    thread: Thread | None,
    stamps: list | None,
    *,
    instances: bool,
) -> tuple[list[Entry], Appended]:
    now = timezone.now()
    adapt = connection.ops.adapt_datetimefield_value
    stamp = adapt(now)
    opened = {"state": Turn.State.READY, "attempt": 1, "lease_expires_at": None, **(turn_state or {})}
    lease = adapt(opened["lease_expires_at"])
    holder = memory if thread is None else thread  # whose turn counters these items follow
    name = DEFAULT_THREAD if thread is None else thread.name
    entries: list[Entry] = []
    turn_rows: list = []
    entry_rows: list = []
    seq, turn = memory.last_seq, holder.last_turn
    first_turn = turn + 1 if turn == 0 or items and items[0].get("role") == "user" else turn
    messages = tokens = 0
    opened_at = None  # the first seq of the newest turn these items open
    for position, item in enumerate(items):
        at = now if stamps is None else stamps[position]
        at_db = stamp if stamps is None else adapt(at)
        if item.get("kind") == "message" and item.get("role") == "user" or turn == 0:
            turn += 1
            opened_at = seq + 1
            text = item.get("content", "") if item.get("role") == "user" else ""
            turn_rows += [
                memory.pk,
                turn,
                opened["state"],
                turn_input if turn_input is not None else text,
                "[]",
                "[]",
                "[]",
                opened["attempt"],
                lease,
                at_db,
                name,
            ]
        seq += 1
        entry_rows += entry_params(memory.pk, seq, turn, item, at_db)
        entry_rows.append(name)
        if instances:
            entries.append(Entry(memory=memory, thread=name, seq=seq, turn=turn, created_at=at, **item))
        if item["kind"] == "message" and item.get("committed", True):
            messages += 1
            tokens += item.get("tokens", 0)
    with plain_cursor() as cursor:
        if turn_rows:
            _insert_chunked(
                cursor,
                Turn._meta.db_table,
                THREAD_TURN_COLUMNS,
                frozenset({"actions", "task_errors", "output"}),
                turn_rows,
            )
        ids: dict[int, int] = {}
        width = len(THREAD_ENTRY_COLUMNS) * INSERT_CHUNK
        for at in range(0, len(entry_rows), width):
            part = entry_rows[at : at + width]
            cursor.execute(
                values_sql(
                    Entry._meta.db_table,
                    THREAD_ENTRY_COLUMNS,
                    JSON_COLUMNS,
                    len(part) // len(THREAD_ENTRY_COLUMNS),
                    "id, seq" if instances else "",
                ),
                part,
            )
            if instances:
                ids.update((s, i) for i, s in cursor.fetchall())  # RETURNING's row order is not promised
        for entry in entries:
            entry.id = ids[entry.seq]
            entry._state.adding, entry._state.db = False, connection.alias
    memory.last_seq = seq
    memory.message_count += messages
    memory.token_count += tokens
    memory.last_used_at = memory.updated_at = now
    names = ("last_seq", "message_count", "token_count", "last_used_at", "updated_at", *also_save)
    holder.last_turn = turn
    if opened_at is not None:
        holder.turn_start_seq = opened_at
    if thread is None:
        names += ("last_turn",) + (("turn_start_seq",) if opened_at is not None else ())
    else:
        memory.threads_message_count += messages
        memory.threads_token_count += tokens
        names += ("threads_message_count", "threads_token_count")
        thread.message_count += messages
        thread.token_count += tokens
        if items:  # its activity: when its newest entry was said
            thread.updated_at = now if stamps is None else stamps[-1]
        with plain_cursor() as cursor:
            _thread_save(cursor, thread)
    _memory_save(memory, tuple(dict.fromkeys(names)))
    return entries, Appended(memory.last_seq - len(items) + 1, memory.last_seq, first_turn, turn)


def entries_set_committed(*, memory: Memory, entry_ids: list[int], committed: bool) -> int:
    """Flip commit flags (the pipeline's rollback) and keep the memory's counts in step."""
    rows = list(
        Entry.objects.filter(memory=memory, id__in=entry_ids)
        .exclude(committed=committed)
        .values_list("id", "kind", "tokens", "thread")
    )
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
        named: dict[str, list] = {}
        for row in msg:
            if row[3] != DEFAULT_THREAD:
                named.setdefault(row[3], []).append(row)
        for name, found in named.items():
            count, tokens = sign * len(found), sign * sum(r[2] for r in found)
            Thread.objects.filter(memory=memory, name=name).update(
                message_count=F("message_count") + count, token_count=F("token_count") + tokens
            )
            Memory.objects.filter(pk=memory.pk).update(
                threads_message_count=F("threads_message_count") + count,
                threads_token_count=F("threads_token_count") + tokens,
            )
    return len(rows)
