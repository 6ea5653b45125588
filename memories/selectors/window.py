"""decorate's reads: the window (plain rows through `entry_window_idx`, newest first, in growing
chunks, stopping as soon as the budget is met), the active facts and the failures of the turns
the window covers, and `ContextReads`, which makes the three one statement where it can. Never a
model instance, never a serializer, never a COUNT over the memory. The statements are
`memories.selectors.sql`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter

import orjson
from django.db import DEFAULT_DB_ALIAS, connections
from threadless.window import WindowFitter

from common.db import plain_cursor
from common.messages import row_to_message
from memories.models import DEFAULT_THREAD
from memories.selectors.sql import (
    FACTS_ROW_KEY,
    FACTS_SQL,
    FAILURES_SQL,
    postgresql_reads_ahead_sql,
    sqlite_reads_ahead_sql,
    window_sql,
)

# A window row: seq, turn, role, content, tokens, and the rarely set columns packed into one JSON
# array or NULL (`memories.selectors.sql.extra_column`).
WINDOW_COLUMNS = ("seq", "turn", "role", "content", "tokens", "extra")
FIRST_CHUNK = 64


@dataclass
class Window:
    messages: list[dict] = field(default_factory=list)  # the history window as messages, oldest first
    tokens: int = 0
    first_turn: int | None = None
    first_seq: int | None = None
    complete: bool = False  # every committed message before `before_seq` is in the window


_ROLE, _TOKENS = itemgetter(2), itemgetter(4)  # of a window row


def _json(value):
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


def _message(row: tuple) -> dict:
    """A window row with any of the rare columns set, as a message (`row_to_message`)."""
    parts, name, tool_calls, tool_call_id = _json(row[5])
    return row_to_message(row[2], row[3], parts, name, tool_calls, tool_call_id)


def window_first_chunk(expected_rows: int | None) -> int:
    """How many rows the window's first read asks for."""
    return max(FIRST_CHUNK, expected_rows or 0)


def _window_chunks(
    memory_id: str, thread: str, before_seq: int | None, first_chunk: int, first_rows: list | None = None
):
    """Window rows newest first, a list of rows at a time (JSON columns still as the driver gives
    them). SQLite steps one statement only as far as it is read; elsewhere index range reads of
    growing size (a client-side cursor would fetch everything). `first_rows`: the first range
    read, already made (`ContextReads`, PostgreSQL)."""
    db = connections[DEFAULT_DB_ALIAS]
    lazy = db.vendor == "sqlite"
    cursor_seq = before_seq
    chunk = first_chunk
    if first_rows is not None:
        yield first_rows
        if len(first_rows) < chunk:
            return
        cursor_seq = first_rows[-1][0]
        chunk = min(chunk * 4, 4096)
    with plain_cursor(prepare=True) as cursor:
        while True:
            params: list = [memory_id, thread]
            if cursor_seq is not None:
                params.append(cursor_seq)
            if not lazy:
                params.append(chunk)
            cursor.execute(window_sql(db.vendor, before=cursor_seq is not None, limit=not lazy), params)
            if lazy:
                # The driver's cursor itself, chunk by chunk, with Django's error mapping around it.
                with db.wrap_database_errors:
                    while rows := cursor.cursor.fetchmany(chunk):
                        yield rows
                return
            rows = cursor.fetchall()
            yield rows
            if len(rows) < chunk:
                return
            cursor_seq = rows[-1][0]
            chunk = min(chunk * 4, 4096)


def memory_window(
    *,
    memory_id: str,
    thread: str = DEFAULT_THREAD,
    before_seq: int | None,
    budget: int,
    reserved: int,
    new_has_user: bool,
    expected_rows: int | None = None,
    first_rows: list | None = None,
) -> Window:
    """The newest committed messages of `thread` that fit (SPEC 4.3, 4.10), oldest first.

    Plain rows straight from the cursor (no ORM row machinery: this is decorate's hot path).
    `expected_rows` (from the memory's average message size) sizes the first read, so a typical
    window is one index range read. Only the rows kept become messages (and have JSON decoded).
    `first_rows`: that first read's rows when they were read ahead (`ContextReads`).
    """
    fitter = WindowFitter(budget, reserved, new_has_user)
    fetched: list[tuple] = []
    exhausted = True
    for rows in _window_chunks(memory_id, thread, before_seq, window_first_chunk(expected_rows), first_rows):
        fetched += rows
        # The rows' costs and roles as two lists: the fitter takes what fits at once.
        if not fitter.push_many(list(map(_TOKENS, rows)), list(map(_ROLE, rows))):
            exhausted = False
            break
    keep = fitter.result()
    kept = fetched[keep - 1 :: -1] if keep else []  # oldest first
    window = Window(
        messages=[{"role": r[2], "content": r[3]} if r[5] is None else _message(r) for r in kept],
        tokens=sum(map(_TOKENS, kept)),
        complete=exhausted and keep == fitter.seen,
    )
    if kept:
        window.first_turn = kept[0][1]
        window.first_seq = kept[0][0]
    return window


def _rows(sql: str, params: list) -> list[tuple]:
    with plain_cursor(prepare=True) as cursor:  # decorate's fixed reads: prepared on PostgreSQL
        cursor.execute(sql, params)
        return cursor.fetchall()


# The two small reads of every decorate run as plain SQL: compiling an ORM query costs more
# Python than a 100-message window (see docs/tuning/serving.md).
FAILURES_LIMIT = 50
FACTS_LIMIT = 200


def failures_in_turns(
    *, memory_id: str, thread: str = DEFAULT_THREAD, from_turn: int, limit: int = FAILURES_LIMIT
) -> list[tuple]:
    """The newest `limit` committed digest and error entries of the thread's turns from
    `from_turn` on, oldest first: (turn, kind, task_id, content)."""
    return list(reversed(_rows(FAILURES_SQL, [memory_id, thread, from_turn, limit])))


def active_facts(*, memory_id: str, limit: int = FACTS_LIMIT) -> list[tuple]:
    """(id, text, tokens) newest first."""
    return _rows(FACTS_SQL, [memory_id, limit])


class ContextReads:
    """What `context_build` reads of a memory: its active facts, its window (through
    `memory_window`) and the failures of the turns the window covers.

    On PostgreSQL the three first reads are one statement (`postgresql_reads_ahead_sql`), so one round trip:
    the facts, the window's first range read, and the failures of turns from the lowest turn
    that range holds, which the window's first turn (or, for an empty window, the new turn)
    cannot be below; `failures` keeps those of the turns asked for, and reads again only when
    that could miss one (the read hit its limit and dropped rows, or the window went past its
    first range). When that range holds every message (it asks for at least `message_count`
    rows: the memory's count, the usual case below a thousand messages or so), the window can
    start at any of the memory's turns, so the failures are read from turn 0, without the
    bound's read of the window's index. On SQLite the three are one statement in that case only
    (`sqlite_reads_ahead_sql`: no network, but a statement fewer is Python saved, and two fewer
    read transactions); otherwise each read runs when asked, the window's stepping one statement
    only as far as the budget needs. Each read-ahead result is used once; a second window read
    (the failures block taking room) reads again."""

    def __init__(
        self,
        *,
        memory_id: str,
        thread: str = DEFAULT_THREAD,
        before_seq: int | None,
        expected_rows: int | None,
        new_turn: int | None,
        message_count: int | None = None,
    ) -> None:
        self.memory_id = memory_id
        self.thread = thread
        self.before_seq = before_seq
        self.expected_rows = expected_rows
        self.message_count = message_count
        self._facts: list | None = None
        self._first_rows: list | None = None
        self._failures: tuple[int | None, list] | None = None
        db = connections[DEFAULT_DB_ALIAS]
        if db.vendor == "postgresql":
            self._read_ahead(db, new_turn)
        elif (
            db.vendor == "sqlite"
            and message_count is not None
            and window_first_chunk(expected_rows) >= message_count
        ):
            self._read_ahead_sqlite()

    def _read_ahead_sqlite(self) -> None:
        before = self.before_seq is not None
        with plain_cursor() as cursor:
            cursor.execute(
                sqlite_reads_ahead_sql(before=before),
                [
                    self.memory_id,
                    FACTS_LIMIT,
                    self.memory_id,
                    self.thread,
                    0,
                    FAILURES_LIMIT,
                    self.memory_id,
                    self.thread,
                    *([self.before_seq] if before else []),
                ],
            )
            rows = cursor.fetchall()
        facts, failures = rows[0][3], rows[0][5]
        self._facts = [tuple(f) for f in orjson.loads(facts)]
        self._first_rows = rows[1:]
        self._failures = (0, [tuple(f) for f in orjson.loads(failures)])  # newest first, of every turn

    def _read_ahead(self, db, new_turn: int | None) -> None:
        before = self.before_seq is not None
        first_chunk = window_first_chunk(self.expected_rows)
        window_params: list = [
            self.memory_id,
            self.thread,
            *([self.before_seq] if before else []),
            first_chunk,
        ]
        # Every message in the first range (a turn is never below 0): the failures of all turns.
        bounded = self.message_count is None or first_chunk < self.message_count
        with plain_cursor(prepare=True) as cursor:
            cursor.execute(
                postgresql_reads_ahead_sql(before=before, bounded=bounded),
                [
                    *(window_params + [new_turn] if bounded else [0]),
                    *window_params,
                    self.memory_id,
                    FACTS_LIMIT,
                    self.memory_id,
                    self.thread,
                    FAILURES_LIMIT,
                ],
            )
            rows = cursor.fetchall()
        k = len(rows) - 1
        while rows[k][0] != FACTS_ROW_KEY:  # after the window, before at most FAILURES_LIMIT failures
            k -= 1
        bound, facts = rows[k][1], rows[k][3]
        self._facts = [tuple(f) for f in orjson.loads(facts)] if facts else []
        self._first_rows = rows[:k]
        # Newest first, as (turn, kind, task_id, content).
        self._failures = (bound, [(r[1], r[2], r[5], r[3]) for r in rows[:k:-1]])

    def facts(self) -> list[tuple]:
        """`active_facts`."""
        found, self._facts = self._facts, None
        return active_facts(memory_id=self.memory_id) if found is None else found

    def window(self, *, budget: int, reserved: int, new_has_user: bool) -> Window:
        """`memory_window` of the memory before `before_seq`."""
        first, self._first_rows = self._first_rows, None
        return memory_window(
            memory_id=self.memory_id,
            thread=self.thread,
            before_seq=self.before_seq,
            budget=budget,
            reserved=reserved,
            new_has_user=new_has_user,
            expected_rows=self.expected_rows,
            first_rows=first,
        )

    def failures(self, from_turn: int) -> list[tuple]:
        """`failures_in_turns`: from the read ahead when it holds them all."""
        if self._failures is not None:
            bound, rows = self._failures  # newest first, turns from `bound` on
            if bound is not None and from_turn >= bound:
                kept = [r for r in rows if r[0] >= from_turn]
                # Fewer rows than the limit: all of them were read. At the limit, they are the newest
                # of the turns asked for only if none was dropped.
                if len(rows) < FAILURES_LIMIT or len(kept) == len(rows):
                    return kept[::-1]
        return failures_in_turns(memory_id=self.memory_id, thread=self.thread, from_turn=from_turn)
