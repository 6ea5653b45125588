"""decorate's read statements, composed from named parts.

Each part is a fragment of one statement with the reason it has its shape; the statements are
built from them once per variant (cached) and are the only SQL decorate's reads run. Where the
backends differ (JSON functions, how one statement carries three reads) each has its own
composition, `postgresql_reads_ahead_sql` and `sqlite_reads_ahead_sql`.

Nothing here runs a query: `memories.selectors.window` does.
"""

from __future__ import annotations

import functools

from memories.models import Entry, Fact

ENTRY_TABLE = Entry._meta.db_table
FACT_TABLE = Fact._meta.db_table

# --- the window: a thread's committed messages, newest first

# The literal `committed AND kind = 'message'` matches entry_window_idx's condition, so both
# SQLite and PostgreSQL read the partial index backwards (a bound parameter would not match).
WINDOW_WHERE = "memory_id = %s AND thread = %s AND committed AND kind = 'message'"
BEFORE_SEQ = " AND seq < %s"  # history strictly before the first stored new message

# The rarely set columns (parts, name, tool_calls, tool_call_id) packed by the database into one
# JSON array, NULL when all are unset: most messages are plain text, and every column a row hands
# the driver is a Python object built (five fewer per row: ~10 % of a 100-message decorate on SQLite).
RARE_COLUMNS_UNSET = "parts IS NULL AND tool_calls IS NULL AND name = '' AND tool_call_id = ''"
RARE_COLUMNS_ARRAY = {
    "sqlite": "json_array(json(parts), name, json(tool_calls), tool_call_id)",
    "postgresql": "jsonb_build_array(parts, name, tool_calls, tool_call_id)",
}

NEWEST_FIRST = " ORDER BY seq DESC"
LIMIT = " LIMIT %s"


def window_where(*, before: bool) -> str:
    """The window's condition, with the `before_seq` bound when there is one."""
    return WINDOW_WHERE + (BEFORE_SEQ if before else "")


def extra_column(vendor: str, *, as_text: bool = False) -> str:
    """The window row's last column: the rare columns as one JSON array, or NULL. `as_text`: cast
    to text, so it shares a column with other parts' text in a UNION (PostgreSQL)."""
    array = RARE_COLUMNS_ARRAY.get(vendor, RARE_COLUMNS_ARRAY["postgresql"])
    return f"CASE WHEN {RARE_COLUMNS_UNSET} THEN NULL ELSE {array} END" + ("::text" if as_text else "")


def window_select(vendor: str, *, before: bool, extra_as_text: bool = False) -> str:
    """A window row (`WINDOW_COLUMNS`) of each message, in no order and unbounded."""
    return (
        f"SELECT seq, turn, role, content, tokens, {extra_column(vendor, as_text=extra_as_text)} "
        f"FROM {ENTRY_TABLE} WHERE {window_where(before=before)}"
    )


@functools.lru_cache(maxsize=8)
def window_sql(vendor: str, *, before: bool, limit: bool) -> str:
    """The window's range read, newest first; `limit`: at most a parameter's rows (an index range
    read; SQLite steps the statement instead, only as far as it is read)."""
    return window_select(vendor, before=before) + NEWEST_FIRST + (LIMIT if limit else "")


# --- the failures block: a thread's committed digests and raw errors from a turn on


def failures_where(from_turn: str) -> str:
    """`from_turn`: the SQL of the lowest turn (a parameter, or the reads ahead's bound)."""
    return (
        "memory_id = %s AND thread = %s AND kind IN ('digest', 'error') AND committed "
        f"AND turn >= {from_turn}"
    )


def failures_select(columns: str, *, from_turn: str = "%s") -> str:
    """The newest `%s` (a parameter) failures of turns from `from_turn` on, newest first."""
    return f"SELECT {columns} FROM {ENTRY_TABLE} WHERE {failures_where(from_turn)}{NEWEST_FIRST}{LIMIT}"


FAILURES_SQL = failures_select("turn, kind, task_id, content")


# --- the facts block: the memory's active facts, newest first


def facts_select(columns: str) -> str:
    """The newest `%s` (a parameter) active facts of a memory."""
    return (
        f"SELECT {columns} FROM {FACT_TABLE} WHERE memory_id = %s AND active ORDER BY updated_at DESC{LIMIT}"
    )


FACTS_SQL = facts_select("id, text, tokens")


# --- the three reads in one statement (ContextReads)

FACTS_ROW_KEY = -1  # PostgreSQL: the first column of the facts row, below any seq (seq >= 0)
FIRST_ROW_KEY = 2**63 - 1  # SQLite: the first column of the facts-and-failures row, above any seq


def failures_bound(*, before: bool, bounded: bool) -> str:
    """The lowest turn the window can start at: a parameter (0) when the first range holds every
    message, else (`bounded`) the oldest turn that range holds (its index read once more, for its
    turns) or the new turn (a parameter), whichever is lower."""
    if not bounded:
        return "%s::integer"
    first_range = f"SELECT turn FROM {ENTRY_TABLE} WHERE {window_where(before=before)}{NEWEST_FIRST}{LIMIT}"
    return f"LEAST((SELECT min(turn) FROM ({first_range}) w), %s::integer)"


BOUND = "(SELECT bound FROM b)"  # the bound, computed once in the statement's `b`


@functools.lru_cache(maxsize=4)
def postgresql_reads_ahead_sql(*, before: bool, bounded: bool) -> str:
    """decorate's three reads in one statement (PostgreSQL), its rows ordered by the first column,
    descending:

    * the window's first range read, newest first (`window_sql`'s columns, the rare columns'
      JSON as text): seq >= 0 first;
    * one row (FACTS_ROW_KEY, the failures' bound, NULL, the active facts as a JSON array of
      [id, text, tokens] newest first or NULL, NULL, NULL);
    * the failures of turns from the bound (`failures_bound`), oldest first: (-2 - seq, turn,
      kind, content, NULL, task_id).

    Parameters: the bound's, the window's, the facts', the failures'. Each part's columns have
    the window's types, so the UNION ALL is one append of three parts each already in order,
    merged (Merge Append), not the whole result sorted."""
    window = window_select("postgresql", before=before, extra_as_text=True) + NEWEST_FIRST + LIMIT
    facts = (
        "SELECT json_agg(json_build_array(f.id, f.text, f.tokens) ORDER BY f.updated_at DESC)::text "
        f"FROM ({facts_select('id, text, tokens, updated_at')}) f"
    )
    facts_row = (
        f"SELECT {FACTS_ROW_KEY}::bigint, {BOUND}, NULL::varchar, ({facts}), NULL::integer, NULL::text"
    )
    failures = (
        "SELECT -2 - seq, turn, kind, content, NULL::integer, task_id::text "
        f"FROM ({failures_select('seq, turn, kind, task_id, content', from_turn=BOUND)}) f ORDER BY 1 DESC"
    )
    return (
        f"WITH b AS MATERIALIZED (SELECT {failures_bound(before=before, bounded=bounded)} AS bound) "
        f"({window}) UNION ALL ({facts_row}) UNION ALL ({failures}) ORDER BY 1 DESC"
    )


@functools.lru_cache(maxsize=2)
def sqlite_reads_ahead_sql(*, before: bool) -> str:
    """decorate's three reads in one statement (SQLite), its rows ordered by the first column,
    descending: one row (FIRST_ROW_KEY, NULL, NULL, the active facts as a JSON array of [id, text,
    tokens] newest first, NULL, the failures of all turns as a JSON array of [turn, kind, task_id,
    content] newest first), then the window rows newest first (`window_sql`'s columns, every
    message before `before_seq`: the caller reads ahead only when that is at most the first
    range's size).

    Parameters: the facts', the failures' (from turn 0), the window's. The window part has no
    LIMIT and no ORDER BY of its own, so SQLite merges the two parts (MERGE (UNION ALL)) with the
    window read in entry_window_idx's order, not sorted (a LIMIT there would make it a subquery
    sorted again; tests/memories/test_context_reads.py pins the plan)."""
    facts = f"SELECT json_group_array(json_array(id, text, tokens)) FROM ({FACTS_SQL})"
    failures = f"SELECT json_group_array(json_array(turn, kind, task_id, content)) FROM ({FAILURES_SQL})"
    first_row = f"SELECT {FIRST_ROW_KEY}, NULL, NULL, ({facts}), NULL, ({failures})"
    return f"{first_row} UNION ALL {window_select('sqlite', before=before)} ORDER BY 1 DESC"
