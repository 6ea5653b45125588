"""The pieces of the entry writes' plain statements, shared by `entries`, `turn_store` and
`turn_join`: the columns they write, a VALUES statement for any number of rows, an entry's
parameters, and the data-modifying CTE that inserts entries in PostgreSQL's one-statement
writes.

The write path is in plain statements because it is every write's hot spot (decorate's store,
report, the pipeline's tasks), and the ORM's query compilation and bulk_create machinery cost
more Python than the writes themselves. Same rows, same columns as the models say."""

from __future__ import annotations

import functools
import json

import orjson
from django.db import connection

from memories.models import Entry, Thread

ENTRY_COLUMNS = (
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
JSON_COLUMNS = frozenset({"parts", "tool_calls", "value"})
# The writes that name a thread (entries_append); the default thread's one-statement paths leave
# the column to its database default.
THREAD_ENTRY_COLUMNS = (*ENTRY_COLUMNS, "thread")
ITEM_COLUMNS = ENTRY_COLUMNS[3:-1]  # an entry's own columns: all but memory, seq, turn and the stamp
_ITEM_FIELDS = frozenset(ITEM_COLUMNS)
TURN_COLUMNS = (
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
THREAD_TURN_COLUMNS = (*TURN_COLUMNS, "thread")
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


def values_sql(
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


def item_params(item: dict) -> list:
    """An entry's own columns (ITEM_COLUMNS) for one item."""
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


def entry_params(memory_id: str, seq: int, turn: int, item: dict, stamp) -> list:
    return [memory_id, seq, turn, *item_params(item), stamp]


THREAD_FIELDS = Thread._meta.concrete_fields


def thread_from_row(row) -> Thread:
    table = Thread._meta.db_table
    values = []
    for field, value in zip(THREAD_FIELDS, row, strict=True):
        column = field.get_col(table)
        for convert in connection.ops.get_db_converters(column):
            value = convert(value, column, connection)
        values.append(value)
    return Thread.from_db(connection.alias, None, values)


# --- one statement per write on PostgreSQL --------------------------------------------------------
# There every statement is a round trip (and a transaction two more: BEGIN and COMMIT). A single
# statement is atomic on its own, so the hot writes (`turn_store`, `turn_join`) are one statement
# each, data-modifying CTEs numbered by the memory row's UPDATE … RETURNING (which takes the row
# lock, as `memory_lock` does), run in autocommit unless the caller holds a transaction. SQLite has
# no data-modifying CTEs (and no round trips): there the same rows are written by a few plain
# statements.


# decorate's store and report's common case are prepared on PostgreSQL (common.db.plain_cursor) for up
# to this many items, their common shapes (a user message, a reply and its tool calls): their text
# grows with the items, so this bounds what a connection prepares (store: 10 shapes of items and the
# turns they open, report: 4, each in the default thread or a named one and scoped or not: 56, the
# reads and lookups 11 more, under psycopg's prepared_max of 100, so none is ever evicted). Larger
# ones are planned each time.
PREPARED_ROWS = 4


def _casts(model, columns: tuple[str, ...]) -> list[str]:
    by_column = {f.column: f for f in model._meta.concrete_fields}
    return [by_column[c].cast_db_type(connection) for c in columns]


@functools.lru_cache(maxsize=64)
def _item_values_sql(rows: int, lead: tuple[str, ...]) -> str:
    """`(VALUES (…), …) AS v(<lead>, <item columns>)`, every parameter cast to its column's type (a
    VALUES list in a SELECT has no target column to take its types from). `lead`: integer columns first."""
    casts = ["bigint"] * len(lead) + _casts(Entry, ITEM_COLUMNS)
    row = "(" + ", ".join(f"%s::{c}" for c in casts) + ")"
    return f"(VALUES {', '.join([row] * rows)}) AS v({', '.join(lead + ITEM_COLUMNS)})"


def entries_insert_cte(rows: int, turn_expr: str, lead: tuple[str, ...], named: bool = False) -> str:
    """The entries' INSERT of a one-statement write; `named`: in the thread row `th` of the
    statement (its name in the thread column), else in the default thread (the column's default)."""
    entry = Entry._meta.db_table
    columns = THREAD_ENTRY_COLUMNS if named else ENTRY_COLUMNS
    return (
        f"INSERT INTO {entry} ({', '.join(columns)}) "
        f"SELECT m.id, m.last_seq - %s + v.ord, {turn_expr}, {', '.join('v.' + c for c in ITEM_COLUMNS)}, "
        f"%s::timestamptz{', th.name' if named else ''} FROM m, {'th, ' if named else ''}"
        f"{_item_values_sql(rows, lead)}"
    )
