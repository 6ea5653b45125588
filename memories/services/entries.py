"""Writing entries: the row lock every write takes, appending entries (and the turns they
open) and the pipeline's commit-flag flips, with the memory's counters kept in step."""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass

import orjson
from django.db import connection
from django.db.models import F
from django.utils import timezone

from common.db import plain_cursor, sqlite_write_transaction
from memories import recall
from memories.embeddings import VectorStore
from memories.models import DEFAULT_THREAD, Entry, Memory, Outbox, Thread, Turn
from memories.selectors import MEMORY_COLUMNS, memory_fetch, memory_from_row, memory_missing
from memories.services.outbox import outbox_insert_sql

log = logging.getLogger("threadless.memories")


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


# The write path in plain statements: it is every write's hot spot (decorate's store, report,
# the pipeline's tasks), and the ORM's query compilation and bulk_create machinery cost more
# Python than the writes themselves. Same rows, same columns as the models say.
_ENTRY_COLUMNS = (
    "memory_id",
    "seq",
    "turn",
    "kind",
    "role",
    "content",
    "parts",
    "name",
    "tool_calls",
    "tool_call_id",
    "task_id",
    "key",
    "value",
    "committed",
    "tokens",
    "created_at",
)
_JSON_COLUMNS = frozenset({"parts", "tool_calls", "value"})
# The writes that name a thread (entries_append); the default thread's one-statement paths leave
# the column to its database default.
_THREAD_ENTRY_COLUMNS = (*_ENTRY_COLUMNS, "thread")
_ITEM_COLUMNS = _ENTRY_COLUMNS[3:-1]  # an entry's own columns: all but memory, seq, turn and the stamp
_ITEM_FIELDS = frozenset(_ITEM_COLUMNS)
_TURN_COLUMNS = (
    "memory_id",
    "number",
    "state",
    "input",
    "actions",
    "task_errors",
    "output",
    "attempt",
    "lease_expires_at",
    "created_at",
)
_THREAD_TURN_COLUMNS = (*_TURN_COLUMNS, "thread")
# Rows per INSERT statement: SQLite binds at most 32,766 parameters to one statement.
INSERT_CHUNK = 500


@functools.lru_cache(maxsize=256)
def _values_sql_for(
    vendor: str, table: str, columns: tuple[str, ...], json_columns: frozenset, rows: int, returning: str
) -> str:
    q = connection.ops.quote_name
    cast = "::jsonb" if vendor == "postgresql" else ""
    marks = "(" + ", ".join(f"%s{cast}" if c in json_columns else "%s" for c in columns) + ")"
    return (
        f"INSERT INTO {q(table)} ({', '.join(q(c) for c in columns)}) VALUES "
        + ", ".join([marks] * rows)
        + (f" RETURNING {returning}" if returning else "")
    )


def _values_sql(
    table: str, columns: tuple[str, ...], json_columns: frozenset, rows: int, returning: str = ""
) -> str:
    return _values_sql_for(connection.vendor, table, columns, json_columns, rows, returning)


def _json(value) -> str | None:
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # what orjson refuses (an integer beyond 64 bits) the ORM's json.dumps stores
        return json.dumps(value)


def _item_params(item: dict) -> list:
    """An entry's own columns (_ITEM_COLUMNS) for one item."""
    unknown = item.keys() - _ITEM_FIELDS
    if unknown:
        raise TypeError(f"Entry has no field {sorted(unknown)[0]!r}")
    return [
        item["kind"],
        item.get("role", ""),
        item.get("content", ""),
        _json(item.get("parts")),
        item.get("name", ""),
        _json(item.get("tool_calls")),
        item.get("tool_call_id", ""),
        item.get("task_id", ""),
        item.get("key", ""),
        _json(item.get("value")),
        item.get("committed", True),
        item.get("tokens", 0),
    ]


def _entry_params(memory_id: str, seq: int, turn: int, item: dict, stamp) -> list:
    return [memory_id, seq, turn, *_item_params(item), stamp]


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


_THREAD_FIELDS = Thread._meta.concrete_fields


@functools.lru_cache(maxsize=2)
def _thread_upsert_sql(vendor: str) -> str:
    """The named thread's row, inserted when missing (a no-op update otherwise), returned whole:
    one statement either way (SQLite 3.35+ and PostgreSQL both have ON CONFLICT … RETURNING)."""
    q = connection.ops.quote_name
    columns = [f.column for f in _THREAD_FIELDS if f.column != "id"]
    return (
        f"INSERT INTO {q(Thread._meta.db_table)} ({', '.join(map(q, columns))}) "
        f"VALUES ({', '.join(['%s'] * len(columns))}) "
        "ON CONFLICT (memory_id, name) DO UPDATE SET name = excluded.name "
        f"RETURNING {', '.join(q(f.column) for f in _THREAD_FIELDS)}"
    )


def thread_for_write(*, memory: Memory, name: str | None) -> Thread | None:
    """The named thread's row for a write to a locked memory, created on first use (None for the
    default thread, whose counters are the memory row's). The memory's row lock serialises every
    write to the memory, so two writers never both create it."""
    if name is None or name == DEFAULT_THREAD:
        return None
    now = timezone.now()
    fresh = Thread(memory_id=memory.pk, name=name, created_at=now, updated_at=now)
    values = [
        f.get_db_prep_save(getattr(fresh, f.attname), connection) for f in _THREAD_FIELDS if f.column != "id"
    ]
    with plain_cursor() as cursor:
        cursor.execute(_thread_upsert_sql(connection.vendor), values)
        return _thread_from_row(cursor.fetchone())


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
        cursor.execute(_values_sql(table, columns, json_columns, len(part) // len(columns)), part)


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
        entry_rows += _entry_params(memory.pk, seq, turn, item, at_db)
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
                _THREAD_TURN_COLUMNS,
                frozenset({"actions", "task_errors", "output"}),
                turn_rows,
            )
        ids: dict[int, int] = {}
        width = len(_THREAD_ENTRY_COLUMNS) * INSERT_CHUNK
        for at in range(0, len(entry_rows), width):
            part = entry_rows[at : at + width]
            cursor.execute(
                _values_sql(
                    Entry._meta.db_table,
                    _THREAD_ENTRY_COLUMNS,
                    _JSON_COLUMNS,
                    len(part) // len(_THREAD_ENTRY_COLUMNS),
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


# --- one statement per write on PostgreSQL --------------------------------------------------------
# There every statement is a round trip (and a transaction two more: BEGIN and COMMIT). A single
# statement is atomic on its own, so the hot writes below are one statement each, data-modifying
# CTEs numbered by the memory row's UPDATE … RETURNING (which takes the row lock, as `memory_lock`
# does), run in autocommit unless the caller holds a transaction. SQLite has no data-modifying
# CTEs (and no round trips): there the same rows are written by a few plain statements.


# decorate's store and report's common case are prepared on PostgreSQL (common.db.plain_cursor) for up
# to this many items, their common shapes (a user message, a reply and its tool calls): their text
# grows with the items, so this bounds what a connection prepares (store: 10 shapes of items and the
# turns they open, report: 4, each in the default thread or a named one and scoped or not: 56, the
# reads and lookups 11 more, under psycopg's prepared_max of 100, so none is ever evicted). Larger
# ones are planned each time, as before.
PREPARED_ROWS = 4


def _casts(model, columns: tuple[str, ...]) -> list[str]:
    by_column = {f.column: f for f in model._meta.concrete_fields}
    return [by_column[c].cast_db_type(connection) for c in columns]


@functools.lru_cache(maxsize=64)
def _item_values_sql(rows: int, lead: tuple[str, ...]) -> str:
    """`(VALUES (…), …) AS v(<lead>, <item columns>)`, every parameter cast to its column's type (a
    VALUES list in a SELECT has no target column to take its types from). `lead`: integer columns first."""
    casts = ["bigint"] * len(lead) + _casts(Entry, _ITEM_COLUMNS)
    row = "(" + ", ".join(f"%s::{c}" for c in casts) + ")"
    return f"(VALUES {', '.join([row] * rows)}) AS v({', '.join(lead + _ITEM_COLUMNS)})"


def _entries_insert_cte(rows: int, turn_expr: str, lead: tuple[str, ...], named: bool = False) -> str:
    """The entries' INSERT of a one-statement write; `named`: in the thread row `th` of the
    statement (its name in the thread column), else in the default thread (the column's default)."""
    entry = Entry._meta.db_table
    columns = _THREAD_ENTRY_COLUMNS if named else _ENTRY_COLUMNS
    return (
        f"INSERT INTO {entry} ({', '.join(columns)}) "
        f"SELECT m.id, m.last_seq - %s + v.ord, {turn_expr}, {', '.join('v.' + c for c in _ITEM_COLUMNS)}, "
        f"%s::timestamptz{', th.name' if named else ''} FROM m, {'th, ' if named else ''}"
        f"{_item_values_sql(rows, lead)}"
    )


@functools.lru_cache(maxsize=64)
def _report_sql(rows: int, scoped: bool) -> str:
    outbox = Outbox._meta.db_table
    return (
        f"WITH m AS ({_join_turn_update(scoped, 'id, project_id, last_seq, last_turn')} AS turn_start), "
        f"e AS ({_entries_insert_cte(rows, 'm.last_turn', ('ord',))}), "
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
        params += _item_params(item)
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
            params += _entry_params(memory_id, seq, turn, item, stamp)
        cursor.execute(_values_sql(Entry._meta.db_table, _ENTRY_COLUMNS, _JSON_COLUMNS, n), params)
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
        f"e AS ({_entries_insert_cte(rows, 'th.last_turn', ('ord',), named=True)}), "
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
            params += _item_params(item)
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
            params += _entry_params(memory_pk, seq, turn, item, stamp)
            params.append(name)
        cursor.execute(_values_sql(Entry._meta.db_table, _THREAD_ENTRY_COLUMNS, _JSON_COLUMNS, n), params)
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
    turn_cols = ", ".join(_TURN_COLUMNS)
    turns_values = ", ".join(["(%s::bigint, %s::text)"] * turns)
    return (
        f"WITH m AS ({update}), "
        f"t AS (INSERT INTO {turn} ({turn_cols}) SELECT m.id, m.last_turn - %s + v.u, %s, v.input, "
        "'[]'::jsonb, '[]'::jsonb, '[]'::jsonb, 1, NULL, %s::timestamptz "
        f"FROM m, (VALUES {turns_values}) AS v(u, input)), "
        f"e AS ({_entries_insert_cte(rows, 'm.last_turn - %s + v.u', ('ord', 'u'))}) "
        f"SELECT {', '.join(MEMORY_COLUMNS)} FROM m"
    )


def _new_turn_rows(memory_pk, before: int, opened: list, stamp, *thread) -> list:
    """The INSERT parameters of the turns a store opens, numbered after `before` (`_TURN_COLUMNS`,
    then the thread when one is given: `_THREAD_TURN_COLUMNS`)."""
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
                params += [ord_, offset, *_item_params(item)]
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
                        _values_sql(Turn._meta.db_table, _TURN_COLUMNS, frozenset(), len(opened)), turn_rows
                    )
                    entry_rows: list = []
                    for seq, (item, offset) in enumerate(
                        zip(items, users, strict=True), start=last_seq - n + 1
                    ):
                        entry_rows += _entry_params(memory.pk, seq, last_turn - count + offset, item, stamp)
                    cursor.execute(
                        _values_sql(Entry._meta.db_table, _ENTRY_COLUMNS, _JSON_COLUMNS, n), entry_rows
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

_THREAD_COLUMNS = tuple(f.column for f in _THREAD_FIELDS)


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
    turn_cols = ", ".join(_THREAD_TURN_COLUMNS)
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
        f"e AS ({_entries_insert_cte(rows, 'th.last_turn - %s + v.u', ('ord', 'u'), named=True)}) "
        f"SELECT {', '.join(['m.' + c for c in MEMORY_COLUMNS] + ['th.' + c for c in _THREAD_COLUMNS])} "
        "FROM m, th"
    )


def _thread_from_row(row) -> Thread:
    table = Thread._meta.db_table
    values = []
    for field, value in zip(_THREAD_FIELDS, row, strict=True):
        column = field.get_col(table)
        for convert in connection.ops.get_db_converters(column):
            value = convert(value, column, connection)
        values.append(value)
    return Thread.from_db(connection.alias, None, values)


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
                params += [ord_, offset, *_item_params(item)]
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
                        _values_sql(Turn._meta.db_table, _THREAD_TURN_COLUMNS, frozenset(), len(opened)),
                        turn_rows,
                    )
                    entry_rows: list = []
                    for seq, (item, offset) in enumerate(
                        zip(items, users, strict=True), start=last_seq - n + 1
                    ):
                        entry_rows += _entry_params(memory.pk, seq, last_turn - count + offset, item, stamp)
                        entry_rows.append(thread)
                    cursor.execute(
                        _values_sql(Entry._meta.db_table, _THREAD_ENTRY_COLUMNS, _JSON_COLUMNS, n), entry_rows
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
    return stored, _thread_from_row(found[1])
