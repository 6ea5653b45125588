"""Writing entries: the row lock every write takes, appending entries (and the turns they
open) and the pipeline's commit-flag flips, with the memory's counters kept in step."""

from __future__ import annotations

import functools
import json
import logging

import orjson
from django.db import connection
from django.db.models import F
from django.utils import timezone

from common.db import plain_cursor, sqlite_write_transaction
from memories import recall
from memories.embeddings import VectorStore
from memories.models import Entry, Memory, Outbox, Turn
from memories.selectors import MEMORY_COLUMNS, memory_fetch, memory_from_row, memory_missing
from memories.services.outbox import outbox_insert_sql

log = logging.getLogger("threadless.memories")


def memory_lock(memory: Memory, *, scoped: bool = False) -> Memory:
    """The memory row, locked until the transaction ends: every write to a memory takes it first.

    `scoped`: `memory` is only an id and its project (not read yet: the hot decorate route,
    memories.api.hot), so the locked read is also the project scoping, a 404 when it is not there."""
    locked = memory_fetch(memory_id=memory.pk, project_id=memory.project_id if scoped else None, lock=True)
    if locked is None:
        if scoped:
            raise memory_missing(memory.pk)
        raise Memory.DoesNotExist(f"Memory {memory.pk} does not exist.")
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


def entries_append(
    *,
    memory: Memory,
    items: list[dict],
    turn_input: str | None = None,
    also_save: tuple[str, ...] = (),
    turn_state: dict | None = None,
) -> list[Entry]:
    """Append entries to a locked memory (call inside a transaction, after `memory_lock`).

    Each user message opens a new turn; everything else joins the newest turn. Updates the
    memory's sequence, turn and count columns, the newest turn's first seq when one opens (and
    the caller's `also_save` fields, in the same UPDATE). `turn_state` (state, attempt,
    lease_expires_at) is what a turn it opens starts with (the pipeline opens its turns
    IN_PROGRESS); by default READY.
    """
    now = timezone.now()
    stamp = connection.ops.adapt_datetimefield_value(now)
    opened = {"state": Turn.State.READY, "attempt": 1, "lease_expires_at": None, **(turn_state or {})}
    lease = connection.ops.adapt_datetimefield_value(opened["lease_expires_at"])
    entries: list[Entry] = []
    turn_rows: list = []
    entry_rows: list = []
    seq, turn = memory.last_seq, memory.last_turn
    messages = tokens = 0
    opened_at = None  # the first seq of the newest turn these items open
    for item in items:
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
                stamp,
            ]
        seq += 1
        entry_rows += _entry_params(memory.pk, seq, turn, item, stamp)
        entry = Entry(memory=memory, seq=seq, turn=turn, created_at=now, **item)
        entries.append(entry)
        if entry.kind == "message" and entry.committed:
            messages += 1
            tokens += entry.tokens
    with plain_cursor() as cursor:
        if turn_rows:
            cursor.execute(
                _values_sql(
                    Turn._meta.db_table,
                    _TURN_COLUMNS,
                    frozenset({"actions", "task_errors", "output"}),
                    len(turn_rows) // len(_TURN_COLUMNS),
                ),
                turn_rows,
            )
        if entries:
            cursor.execute(
                _values_sql(Entry._meta.db_table, _ENTRY_COLUMNS, _JSON_COLUMNS, len(entries), "id, seq"),
                entry_rows,
            )
            ids = dict((s, i) for i, s in cursor.fetchall())  # RETURNING's row order is not promised
            for entry in entries:
                entry.id = ids[entry.seq]
                entry._state.adding, entry._state.db = False, connection.alias
    memory.last_seq, memory.last_turn = seq, turn
    memory.message_count += messages
    memory.token_count += tokens
    memory.last_used_at = memory.updated_at = now
    names = (
        "last_seq",
        "last_turn",
        "message_count",
        "token_count",
        "last_used_at",
        "updated_at",
        *also_save,
    )
    if opened_at is not None:
        memory.turn_start_seq = opened_at
        names += ("turn_start_seq",)
    _memory_save(memory, tuple(dict.fromkeys(names)))
    return entries


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
        .values_list("id", "kind", "tokens")
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
# turns they open, report: 4, each scoped or not: 28, the reads and lookups 11 more, under psycopg's
# prepared_max of 100, so none is ever evicted). Larger ones are planned each time, as before.
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


def _entries_insert_cte(rows: int, turn_expr: str, lead: tuple[str, ...]) -> str:
    entry = Entry._meta.db_table
    return (
        f"INSERT INTO {entry} ({', '.join(_ENTRY_COLUMNS)}) "
        f"SELECT m.id, m.last_seq - %s + v.ord, {turn_expr}, {', '.join('v.' + c for c in _ITEM_COLUMNS)}, "
        f"%s::timestamptz FROM m, {_item_values_sql(rows, lead)}"
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
    a 404 (`memory_missing`) when the memory is not in that project."""
    first = items[0]
    assert first.get("kind") == "message" and first.get("role") == "user"
    now = timezone.now()
    vendor = connection.vendor
    n = len(items)
    users: list[int] = []  # per item: how many user messages up to and including it (its turn's offset)
    opened: list = []  # (offset, input) of each turn it opens
    count = messages = tokens = 0
    newest_at = 1  # the position (from 1) of the item opening the newest turn
    for position, item in enumerate(items, start=1):
        if item.get("kind") == "message" and item.get("role") == "user":
            count += 1
            newest_at = position
            opened.append((count, item.get("content", "")))
        users.append(count)
        if item.get("kind") == "message" and item.get("committed", True):
            messages += 1
            tokens += item.get("tokens", 0)
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
                    turn_rows: list = []
                    for offset, text in opened:
                        turn_rows += [
                            memory.pk,
                            last_turn - count + offset,
                            Turn.State.READY,
                            text,
                            "[]",
                            "[]",
                            "[]",
                            1,
                            None,
                            stamp,
                        ]
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
        if scoped:
            raise memory_missing(memory.pk)
        raise Memory.DoesNotExist(f"Memory {memory.pk} does not exist.")
    stored = memory_from_row(row)
    project_field = Memory.project.field
    if project_field.is_cached(memory) and stored.project_id == memory.project_id:
        project_field.set_cached_value(stored, project_field.get_cached_value(memory))
    return stored
