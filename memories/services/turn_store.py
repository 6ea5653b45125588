"""decorate's store: a user message (and what follows it) opening turns of the memory's default
thread or of a named thread, with the memory's budget and instructions set, without a separate
lock read. PostgreSQL: one statement (a data-modifying CTE numbered by the memory row's UPDATE …
RETURNING, which takes the row lock as `memory_lock` does); SQLite: a few plain statements in one
write transaction."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from django.db import connection
from django.utils import timezone

from common.db import plain_cursor, sqlite_write_transaction
from memories.models import Entry, Memory, Thread, Turn
from memories.selectors import MEMORY_COLUMNS, memory_from_row, memory_missing
from memories.services.statements import (
    ENTRY_COLUMNS,
    JSON_COLUMNS,
    PREPARED_ROWS,
    THREAD_ENTRY_COLUMNS,
    THREAD_FIELDS,
    THREAD_TURN_COLUMNS,
    TURN_COLUMNS,
    entries_insert_cte,
    entry_params,
    item_params,
    thread_from_row,
    values_sql,
)

_LAST_SEQ, _LAST_TURN = MEMORY_COLUMNS.index("last_seq"), MEMORY_COLUMNS.index("last_turn")


@functools.lru_cache(maxsize=64)
def _store_turn_sql(vendor: str, rows: int, turns: int, scoped: bool) -> str:
    memory = Memory._meta.db_table
    update = (
        f"UPDATE {memory} SET last_seq = last_seq + %s, last_turn = last_turn + %s, "
        "turn_start_seq = last_seq + %s, message_count = message_count + %s, "
        "token_count = token_count + %s, last_used_at = %s, "
        "updated_at = %s, last_budget_tokens = %s, instructions = COALESCE(%s, instructions) "
        "WHERE id = %s "
        + ("AND project_id = %s " if scoped else "")
        + f"RETURNING {', '.join(MEMORY_COLUMNS)}"
    )
    if vendor != "postgresql":
        return update
    turn = Turn._meta.db_table
    turn_cols = ", ".join(TURN_COLUMNS)
    turns_values = ", ".join(["(%s::bigint, %s::text)"] * turns)
    return (
        f"WITH m AS ({update}), "
        f"t AS (INSERT INTO {turn} ({turn_cols}) SELECT m.id, m.last_turn - %s + v.u, %s, v.input, "
        "'[]'::jsonb, '[]'::jsonb, '[]'::jsonb, 1, NULL, %s::timestamptz "
        f"FROM m, (VALUES {turns_values}) AS v(u, input)), "
        f"e AS ({entries_insert_cte(rows, 'm.last_turn - %s + v.u', ('ord', 'u'))}) "
        f"SELECT {', '.join(MEMORY_COLUMNS)} FROM m"
    )


def _new_turn_rows(memory_pk, before: int, opened: list, stamp, *thread) -> list:
    """The INSERT parameters of the turns a store opens, numbered after `before` (`TURN_COLUMNS`,
    then the thread when one is given: `THREAD_TURN_COLUMNS`)."""
    rows: list = []
    for offset, text in opened:
        rows += [memory_pk, before + offset, Turn.State.READY, text, "[]", "[]", "[]"]
        rows += [1, None, stamp, *thread]
    return rows


@dataclass(frozen=True)
class _TurnCounts:
    """What a run of new entries does to the turn and message counters."""

    users: list[int]  # per item: how many user messages up to and including it (its turn's offset)
    opened: list  # (offset, input) of each turn it opens
    count: int  # user messages
    newest_at: int  # the position (from 1) of the item opening the newest turn
    messages: int  # committed messages
    tokens: int  # their tokens

    @classmethod
    def of(cls, items: list[dict]) -> _TurnCounts:
        users: list[int] = []
        opened: list = []
        count = messages = tokens = 0
        newest_at = 1
        for position, item in enumerate(items, start=1):
            if item.get("kind") == "message" and item.get("role") == "user":
                count += 1
                newest_at = position
                opened.append((count, item.get("content", "")))
            users.append(count)
            if item.get("kind") == "message" and item.get("committed", True):
                messages += 1
                tokens += item.get("tokens", 0)
        return cls(users, opened, count, newest_at, messages, tokens)


def entries_store_turn(
    *,
    memory: Memory,
    items: list[dict],
    budget_tokens: int,
    instructions: str | None = None,
    scoped: bool = False,
) -> Memory:
    """decorate's store: append `items` (the first a user message, so it opens a turn, as does
    every later user message) and set the memory's last budget (and its instructions, when given),
    without a separate lock read: the memory row's UPDATE … RETURNING takes the lock and numbers
    the rows. Same rows and counters as `memory_lock` + `entries_append(also_save=…)`; returns the
    memory as it now is (the caller's cached project kept). PostgreSQL: one statement (atomic in
    itself); SQLite: three, in one write transaction (`sqlite_write_transaction`: the caller's, or
    in autocommit one of its own).
    `scoped`: `memory` is an unread stub (id and project): the UPDATE is also the project scoping,
    a 404 (`memory_missing`) when the memory is not in that project (a deleted one is that 404
    either way, as in `memory_lock`)."""
    first = items[0]
    assert first.get("kind") == "message" and first.get("role") == "user"
    now = timezone.now()
    vendor = connection.vendor
    n = len(items)
    turns = _TurnCounts.of(items)
    users, opened, count, newest_at = turns.users, turns.opened, turns.count, turns.newest_at
    messages, tokens = turns.messages, turns.tokens
    stamp = now if vendor == "postgresql" else connection.ops.adapt_datetimefield_value(now)
    params: list = [
        n,
        count,
        newest_at,
        messages,
        tokens,
        stamp,
        stamp,
        budget_tokens,
        instructions,
        memory.pk,
        *([memory.project_id] if scoped else []),
    ]
    with plain_cursor(prepare=n <= PREPARED_ROWS) as cursor:
        if vendor == "postgresql":
            params += [count, Turn.State.READY, stamp]
            for offset, text in opened:
                params += [offset, text]
            params += [n, count, stamp]
            for ord_, (item, offset) in enumerate(zip(items, users, strict=True), start=1):
                params += [ord_, offset, *item_params(item)]
            cursor.execute(_store_turn_sql(vendor, n, len(opened), scoped), params)
            row = cursor.fetchone()
        else:
            with sqlite_write_transaction(cursor):
                cursor.execute(_store_turn_sql(vendor, n, len(opened), scoped), params)
                row = cursor.fetchone()
                if row is not None:
                    last_seq, last_turn = row[_LAST_SEQ], row[_LAST_TURN]
                    turn_rows = _new_turn_rows(memory.pk, last_turn - count, opened, stamp)
                    cursor.execute(
                        values_sql(Turn._meta.db_table, TURN_COLUMNS, frozenset(), len(opened)), turn_rows
                    )
                    entry_rows: list = []
                    for seq, (item, offset) in enumerate(
                        zip(items, users, strict=True), start=last_seq - n + 1
                    ):
                        entry_rows += entry_params(memory.pk, seq, last_turn - count + offset, item, stamp)
                    cursor.execute(
                        values_sql(Entry._meta.db_table, ENTRY_COLUMNS, JSON_COLUMNS, n), entry_rows
                    )
    if row is None:
        raise memory_missing(memory.pk)
    stored = memory_from_row(row)
    project_field = Memory.project.field
    if project_field.is_cached(memory) and stored.project_id == memory.project_id:
        project_field.set_cached_value(stored, project_field.get_cached_value(memory))
    return stored


# --- a named thread's decorate store ---------------------------------------------------------------
# The same write as `entries_store_turn`, with the thread's row found or created and its counters
# advanced in the same statement (PostgreSQL) or write transaction (SQLite): a decorate in one of a
# memory's threads costs the default thread's one statement, whatever the number of threads.

_THREAD_COLUMNS = tuple(f.column for f in THREAD_FIELDS)


def _thread_store_update(scoped: bool) -> str:
    memory = Memory._meta.db_table
    return (
        f"UPDATE {memory} SET last_seq = last_seq + %s, message_count = message_count + %s, "
        "token_count = token_count + %s, threads_message_count = threads_message_count + %s, "
        "threads_token_count = threads_token_count + %s, last_used_at = %s, updated_at = %s, "
        "instructions = COALESCE(%s, instructions) WHERE id = %s "
        + ("AND project_id = %s " if scoped else "")
        + f"RETURNING {', '.join(MEMORY_COLUMNS)}"
    )


def _thread_upsert(values: str) -> str:
    """The thread's row with `values` (memory_id, name, the turns opened, the newest turn's first
    seq, messages, tokens, the time twice, the budget), added to it when it exists, returned whole."""
    thread = Thread._meta.db_table
    return (
        f"INSERT INTO {thread} (memory_id, name, last_turn, turn_start_seq, message_count, token_count, "
        f"created_at, updated_at, last_budget_tokens, summary, summary_upto_seq) {values} "
        f"ON CONFLICT (memory_id, name) DO UPDATE SET last_turn = {thread}.last_turn + excluded.last_turn, "
        "turn_start_seq = excluded.turn_start_seq, last_budget_tokens = excluded.last_budget_tokens, "
        f"message_count = {thread}.message_count + excluded.message_count, "
        f"token_count = {thread}.token_count + excluded.token_count, updated_at = excluded.updated_at "
        f"RETURNING {', '.join(_THREAD_COLUMNS)}"
    )


@functools.lru_cache(maxsize=64)
def _thread_store_sql(vendor: str, rows: int, turns: int, scoped: bool) -> str:
    if vendor != "postgresql":
        return _thread_store_update(scoped)
    turn = Turn._meta.db_table
    turn_cols = ", ".join(THREAD_TURN_COLUMNS)
    turns_values = ", ".join(["(%s::bigint, %s::text)"] * turns)
    upsert = _thread_upsert(
        "SELECT m.id, %s, %s, m.last_seq - %s + %s, %s, %s, %s::timestamptz, %s::timestamptz, %s, '', 0 "
        "FROM m"
    )
    return (
        f"WITH m AS ({_thread_store_update(scoped)}), th AS ({upsert}), "
        f"t AS (INSERT INTO {turn} ({turn_cols}) SELECT m.id, th.last_turn - %s + v.u, %s, v.input, "
        "'[]'::jsonb, '[]'::jsonb, '[]'::jsonb, 1, NULL, %s::timestamptz, th.name "
        f"FROM m, th, (VALUES {turns_values}) AS v(u, input)), "
        f"e AS ({entries_insert_cte(rows, 'th.last_turn - %s + v.u', ('ord', 'u'), named=True)}) "
        f"SELECT {', '.join(['m.' + c for c in MEMORY_COLUMNS] + ['th.' + c for c in _THREAD_COLUMNS])} "
        "FROM m, th"
    )


def entries_store_thread_turn(
    *,
    memory: Memory,
    thread: str,
    items: list[dict],
    budget_tokens: int,
    instructions: str | None = None,
    scoped: bool = False,
) -> tuple[Memory, Thread]:
    """decorate's store in a named thread: `entries_store_turn`'s write (the first item a user
    message; every user message opens a turn of the thread), the thread's row created on first
    use and its counters advanced with the memory's. PostgreSQL: one statement; SQLite: four in
    one write transaction. Returns the memory and the thread as they now are. `scoped` as there."""
    first = items[0]
    assert first.get("kind") == "message" and first.get("role") == "user"
    now = timezone.now()
    vendor = connection.vendor
    n = len(items)
    turns = _TurnCounts.of(items)
    users, opened, count, newest_at = turns.users, turns.opened, turns.count, turns.newest_at
    messages, tokens = turns.messages, turns.tokens
    stamp = now if vendor == "postgresql" else connection.ops.adapt_datetimefield_value(now)
    params: list = [
        *(n, messages, tokens, messages, tokens, stamp, stamp, instructions, memory.pk),
        *([memory.project_id] if scoped else []),
    ]
    with plain_cursor(prepare=n <= PREPARED_ROWS) as cursor:
        if vendor == "postgresql":
            params += [thread, count, n, newest_at, messages, tokens, stamp, stamp, budget_tokens]
            params += [count, Turn.State.READY, stamp]
            for offset, text in opened:
                params += [offset, text]
            params += [n, count, stamp]
            for ord_, (item, offset) in enumerate(zip(items, users, strict=True), start=1):
                params += [ord_, offset, *item_params(item)]
            cursor.execute(_thread_store_sql(vendor, n, len(opened), scoped), params)
            row = cursor.fetchone()
            found = None if row is None else (row[: len(MEMORY_COLUMNS)], row[len(MEMORY_COLUMNS) :])
        else:
            found = None
            with sqlite_write_transaction(cursor):
                cursor.execute(_thread_store_sql(vendor, n, len(opened), scoped), params)
                row = cursor.fetchone()
                if row is not None:
                    last_seq = row[_LAST_SEQ]
                    cursor.execute(
                        _thread_upsert("VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, '', 0)"),
                        [
                            *(memory.pk, thread, count, last_seq - n + newest_at, messages, tokens),
                            *(stamp, stamp, budget_tokens),
                        ],
                    )
                    thread_row = cursor.fetchone()
                    last_turn = thread_row[_THREAD_COLUMNS.index("last_turn")]
                    turn_rows = _new_turn_rows(memory.pk, last_turn - count, opened, stamp, thread)
                    cursor.execute(
                        values_sql(Turn._meta.db_table, THREAD_TURN_COLUMNS, frozenset(), len(opened)),
                        turn_rows,
                    )
                    entry_rows: list = []
                    for seq, (item, offset) in enumerate(
                        zip(items, users, strict=True), start=last_seq - n + 1
                    ):
                        entry_rows += entry_params(memory.pk, seq, last_turn - count + offset, item, stamp)
                        entry_rows.append(thread)
                    cursor.execute(
                        values_sql(Entry._meta.db_table, THREAD_ENTRY_COLUMNS, JSON_COLUMNS, n), entry_rows
                    )
                    found = (row, thread_row)
    if found is None:
        if scoped:
            raise memory_missing(memory.pk)
        raise Memory.DoesNotExist(f"Memory {memory.pk} does not exist.")
    stored = memory_from_row(found[0])
    project_field = Memory.project.field
    if project_field.is_cached(memory) and stored.project_id == memory.project_id:
        project_field.set_cached_value(stored, project_field.get_cached_value(memory))
    return stored, thread_from_row(found[1])
