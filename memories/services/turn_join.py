"""report's write: committed non-user messages joining the newest turn of the memory's default
thread or of a named thread, with the outbox row over the turn queued, atomically and without a
lock read. PostgreSQL: one statement (a data-modifying CTE numbered by the memory row's UPDATE …
RETURNING, which takes the row lock as `memory_lock` does); SQLite: a few plain statements in one
write transaction."""

from __future__ import annotations

import functools

import orjson
from django.db import connection
from django.utils import timezone

from common.db import plain_cursor, sqlite_write_transaction
from memories.models import Entry, Memory, Outbox, Thread
from memories.services.outbox import outbox_insert_sql
from memories.services.statements import (
    ENTRY_COLUMNS,
    JSON_COLUMNS,
    PREPARED_ROWS,
    THREAD_ENTRY_COLUMNS,
    entries_insert_cte,
    entry_params,
    item_params,
    values_sql,
)


# The report's common case (assistant messages, tool calls and results joining the newest turn):
# the memory row's UPDATE also locks it and returns the turn's start, so there is no lock read.
def _join_turn_update(scoped: bool, returning: str) -> str:
    """The memory row's UPDATE for messages joining its newest turn (parameters: the rows, the
    rows, their tokens, the time twice, the memory id and, `scoped`, its project), returning
    `returning` and the turn's first seq (the memory's `turn_start_seq`; NULL when not known):
    SQLite's report runs it alone (`_sqlite_join_turn_enqueue`), PostgreSQL's one-statement report
    as its first CTE. The start is the memory row's own column rather than a read of the turn's
    entries: that subquery cost report about 0.1 ms of PostgreSQL's CPU (docs/tuning/serving.md)."""
    memory = Memory._meta.db_table
    return (
        f"UPDATE {memory} SET last_seq = last_seq + %s, message_count = message_count + %s, "
        "token_count = token_count + %s, last_used_at = %s, updated_at = %s "
        f"WHERE id = %s {'AND project_id = %s ' if scoped else ''}AND last_turn > 0 RETURNING {returning}, "
        "NULLIF(turn_start_seq, 0)"
    )


def _join_turn_params(memory_id: str, project_id: str | None, rows: int, tokens: int, stamp) -> list:
    return [rows, rows, tokens, stamp, stamp, memory_id, *([] if project_id is None else [project_id])]


@functools.lru_cache(maxsize=2)
def _join_turn_sql(scoped: bool) -> str:
    return _join_turn_update(scoped, "last_seq, last_turn, project_id")


@functools.lru_cache(maxsize=64)
def _report_sql(rows: int, scoped: bool) -> str:
    outbox = Outbox._meta.db_table
    return (
        f"WITH m AS ({_join_turn_update(scoped, 'id, project_id, last_seq, last_turn')} AS turn_start), "
        f"e AS ({entries_insert_cte(rows, 'm.last_turn', ('ord',))}), "
        f"o AS (INSERT INTO {outbox} (memory_id, project_id, kind, payload, created_at, attempts, "
        "last_error) SELECT m.id, m.project_id, %s, jsonb_build_object('from_seq', "
        "COALESCE(m.turn_start, m.last_seq - %s + 1), 'to_seq', m.last_seq), %s::timestamptz, 0, '' "
        "FROM m RETURNING id) "
        "SELECT o.id, m.last_seq, m.last_turn, m.turn_start FROM m, o"
    )


def messages_join_turn_enqueue(
    *, memory_id: str, items: list[dict], kind: str = "report", project_id: str | None = None
) -> tuple[int, int, int, int] | None:
    """Append committed non-user messages (`entry_fields`) to the memory's newest turn and queue
    the outbox row (payload from the turn's start to the new last seq), atomically: the memory
    row's UPDATE (which also locks it, as `memory_lock` does) numbers the rows and finds the
    turn's first seq; same rows and counters as `entries_append`.

    Returns (outbox_id, last_seq, turn, turn_start_seq), or None when the memory has no turn yet
    (nothing was written). The caller hands the outbox id to the publisher once it commits
    (`outbox_on_commit`). `project_id`: only a memory of that project (None as well when it is
    not there: the caller tells the two apart with `memory_lock(scoped=True)`).

    PostgreSQL: one statement. SQLite: the UPDATE and the two INSERTs on one cursor, in the
    caller's transaction, or (autocommit) in one of its own: see `_sqlite_join_turn_enqueue`."""
    assert items and all(
        i["kind"] == "message" and i["role"] != "user" and i.get("committed", True) for i in items
    )
    if connection.vendor != "postgresql":
        return _sqlite_join_turn_enqueue(memory_id, items, kind, project_id)
    stamp = timezone.now()
    n = len(items)
    params = [*_join_turn_params(memory_id, project_id, n, sum(i["tokens"] for i in items), stamp), n, stamp]
    for ord_, item in enumerate(items, start=1):
        params.append(ord_)
        params += item_params(item)
    params += [kind, n, stamp]
    with plain_cursor(prepare=n <= PREPARED_ROWS) as cursor:
        cursor.execute(_report_sql(n, project_id is not None), params)
        found = cursor.fetchone()
    if found is None:
        return None
    outbox_id, last_seq, turn, turn_start = found
    return outbox_id, last_seq, turn, turn_start if turn_start is not None else last_seq - n + 1


def _sqlite_join_turn_enqueue(
    memory_id: str, items: list[dict], kind: str, project_id: str | None
) -> tuple[int, int, int, int] | None:
    """SQLite's report: three statements, one write transaction (`sqlite_write_transaction`: its
    own outside a caller's transaction, BEGIN IMMEDIATE … COMMIT on the driver's connection rather
    than `transaction.atomic`, whose bookkeeping cost report more Python than its statements)."""
    db = connection
    stamp = db.ops.adapt_datetimefield_value(timezone.now())
    n = len(items)
    with plain_cursor() as cursor, sqlite_write_transaction(cursor):
        cursor.execute(
            _join_turn_sql(project_id is not None),
            _join_turn_params(memory_id, project_id, n, sum(i["tokens"] for i in items), stamp),
        )
        found = cursor.fetchone()
        if found is None:
            return None
        last_seq, turn, project, turn_start = found
        first = last_seq - n + 1
        params: list = []
        for seq, item in enumerate(items, start=first):
            params += entry_params(memory_id, seq, turn, item, stamp)
        cursor.execute(values_sql(Entry._meta.db_table, ENTRY_COLUMNS, JSON_COLUMNS, n), params)
        turn_start = turn_start if turn_start is not None else first
        cursor.execute(
            outbox_insert_sql(),
            [
                memory_id,
                project,
                kind,
                orjson.dumps({"from_seq": turn_start, "to_seq": last_seq}).decode(),
                stamp,
            ],
        )
        return cursor.fetchone()[0], last_seq, turn, turn_start


# A named thread's report: the same write, the thread's row holding the turn the messages join.


def _thread_join_update(scoped: bool) -> str:
    """The memory row's UPDATE for messages joining a named thread's newest turn (parameters: the
    rows, the rows, their tokens, the rows, their tokens, the time twice, the memory id, `scoped`
    its project, the thread), only when that thread has a turn; returning its id, project and
    last seq."""
    memory, thread = Memory._meta.db_table, Thread._meta.db_table
    return (
        f"UPDATE {memory} SET last_seq = last_seq + %s, message_count = message_count + %s, "
        "token_count = token_count + %s, threads_message_count = threads_message_count + %s, "
        "threads_token_count = threads_token_count + %s, last_used_at = %s, updated_at = %s "
        f"WHERE id = %s {'AND project_id = %s ' if scoped else ''}"
        f"AND EXISTS (SELECT 1 FROM {thread} t WHERE t.memory_id = {memory}.id AND t.name = %s "
        "AND t.last_turn > 0) RETURNING id, project_id, last_seq"
    )


def _thread_join_params(memory_id: str, project_id: str | None, thread: str, rows: int, tokens: int, stamp):
    return [
        rows,
        rows,
        tokens,
        rows,
        tokens,
        stamp,
        stamp,
        memory_id,
        *([] if project_id is None else [project_id]),
        thread,
    ]


def _thread_counters_update(where: str, returning: str) -> str:
    """The thread's counters (parameters: the rows, their tokens, the time, then `where`'s),
    returning `returning`: its name, newest turn and that turn's first seq (NULL when not known)."""
    return (
        f"UPDATE {Thread._meta.db_table} SET message_count = message_count + %s, "
        f"token_count = token_count + %s, updated_at = %s {where} RETURNING {returning}"
    )


_THREAD_COUNTERS_WHERE = "WHERE memory_id = %s AND name = %s"
_THREAD_COUNTERS_RETURNING = "name, last_turn, NULLIF(turn_start_seq, 0)"


@functools.lru_cache(maxsize=64)
def _thread_report_sql(vendor: str, rows: int, scoped: bool) -> str:
    if vendor != "postgresql":
        return _thread_join_update(scoped)
    outbox, thread = Outbox._meta.db_table, Thread._meta.db_table
    counters = _thread_counters_update(
        f"FROM m WHERE {thread}.memory_id = m.id AND {thread}.name = %s",
        f"{thread}.name, {thread}.last_turn, NULLIF({thread}.turn_start_seq, 0) AS turn_start",
    )
    return (
        f"WITH m AS ({_thread_join_update(scoped)}), th AS ({counters}), "
        f"e AS ({entries_insert_cte(rows, 'th.last_turn', ('ord',), named=True)}), "
        f"o AS (INSERT INTO {outbox} (memory_id, project_id, kind, payload, created_at, attempts, "
        "last_error) SELECT m.id, m.project_id, %s, jsonb_build_object('from_seq', "
        "COALESCE(th.turn_start, m.last_seq - %s + 1), 'to_seq', m.last_seq), %s::timestamptz, 0, '' "
        "FROM m, th RETURNING id) "
        "SELECT o.id, m.last_seq, th.last_turn, th.turn_start FROM m, th, o"
    )


def messages_join_thread_turn_enqueue(
    *, memory_id: str, thread: str, items: list[dict], kind: str = "report", project_id: str | None = None
) -> tuple[int, int, int, int] | None:
    """`messages_join_turn_enqueue` for a named thread: the messages join the thread's newest turn,
    the memory's and the thread's counters advance, the outbox row is queued, atomically and
    without a lock read (the memory row's UPDATE takes its lock first, as `memory_lock` does).
    None when the thread has no turn yet (nothing was written: the caller's locked path creates
    it). PostgreSQL: one statement; SQLite: four in one write transaction."""
    assert items and all(
        i["kind"] == "message" and i["role"] != "user" and i.get("committed", True) for i in items
    )
    vendor = connection.vendor
    now = timezone.now()
    stamp = now if vendor == "postgresql" else connection.ops.adapt_datetimefield_value(now)
    n, tokens = len(items), sum(i["tokens"] for i in items)
    joined = _thread_join_params(memory_id, project_id, thread, n, tokens, stamp)
    sql = _thread_report_sql(vendor, n, project_id is not None)
    if vendor == "postgresql":
        params = [*joined, n, tokens, stamp, thread, n, stamp]
        for ord_, item in enumerate(items, start=1):
            params.append(ord_)
            params += item_params(item)
        params += [kind, n, stamp]
        with plain_cursor(prepare=n <= PREPARED_ROWS) as cursor:
            cursor.execute(sql, params)
            found = cursor.fetchone()
        if found is None:
            return None
        outbox_id, last_seq, turn, turn_start = found
        return outbox_id, last_seq, turn, turn_start if turn_start is not None else last_seq - n + 1
    with plain_cursor() as cursor, sqlite_write_transaction(cursor):
        cursor.execute(sql, joined)
        found = cursor.fetchone()
        if found is None:
            return None
        memory_pk, project, last_seq = found
        cursor.execute(
            _thread_counters_update(_THREAD_COUNTERS_WHERE, _THREAD_COUNTERS_RETURNING),
            [n, tokens, stamp, memory_pk, thread],
        )
        name, turn, turn_start = cursor.fetchone()
        first = last_seq - n + 1
        params: list = []
        for seq, item in enumerate(items, start=first):
            params += entry_params(memory_pk, seq, turn, item, stamp)
            params.append(name)
        cursor.execute(values_sql(Entry._meta.db_table, THREAD_ENTRY_COLUMNS, JSON_COLUMNS, n), params)
        turn_start = turn_start if turn_start is not None else first
        cursor.execute(
            outbox_insert_sql(),
            [
                memory_pk,
                project,
                kind,
                orjson.dumps({"from_seq": turn_start, "to_seq": last_seq}).decode(),
                stamp,
            ],
        )
        return cursor.fetchone()[0], last_seq, turn, turn_start
